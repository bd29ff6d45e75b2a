"""The wire between the server, the kernel and the runs it forks: JSON messages, one per line,
over Unix sockets; and the few constants both sides must agree on. The server's side
(client.py) imports only this, never the kernel process itself (which imports the tracer).

    >>> send(connection, {"op": "run", "source": source})
    >>> MessageLines(connection).read(timeout=1.0)
    {'status': 'ok', ...}
"""

from __future__ import annotations

import json
import signal
import socket
from typing import Literal, TypedDict

RUN_GRACE_SECONDS = 10.0  # past the tracer's own --timeout, the kernel kills a run that has not ended
STACKS_SIGNAL = signal.SIGUSR1  # the kernel writes every thread's stack to stderr
EARLY_SUFFIX = ".early.json"  # in the kernel's out/: a resumed run's trace up to the section after the edit


def send(connection: socket.socket, message: dict) -> None:
    connection.sendall(json.dumps(message).encode() + b"\n")


class MessageLines:
    """Newline-delimited JSON messages from a socket."""

    def __init__(self, connection: socket.socket):
        self.connection = connection
        self.buffer = b""

    def read_available(self) -> list[dict] | None:
        """The complete messages that arrived (None once the peer closed). Never waits: a nested
        poll (Kernel.collect_hellos) may already have read what select() reported."""
        try:
            data = self.connection.recv(1 << 16, socket.MSG_DONTWAIT)
        except (BlockingIOError, InterruptedError):
            return []
        if not data:
            return None
        self.buffer += data
        *complete, self.buffer = self.buffer.split(b"\n")
        return [json.loads(line) for line in complete if line.strip()]

    def read(self, timeout: float | None = None) -> dict | None:
        """The next message, waiting for it (None: nothing within `timeout`); EOFError once closed."""
        self.connection.settimeout(timeout)
        try:
            while b"\n" not in self.buffer:
                data = self.connection.recv(1 << 16)
                if not data:
                    raise EOFError
                self.buffer += data
        except socket.timeout:
            return None
        finally:
            self.connection.settimeout(None)
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)


# --- the messages: the server's orders to the kernel ("op"), what runs and checkpoints tell it ("role")

class RunOrder(TypedDict, total=False):
    """Run the lecture again (from a checkpoint where the edit allows); `full`: why it must run whole."""
    op: Literal["run"]
    id: int
    max_steps: int | None
    timeout: float | None
    full: dict | None  # a run message's note (i18n/run_messages.py)


class CancelOrder(TypedDict):
    """End the run in progress; its checkpoints go too."""
    op: Literal["cancel"]


class StopOrder(TypedDict):
    """End the kernel."""
    op: Literal["stop"]


class ResumeOrder(TypedDict):
    """From the kernel to a checkpoint: fork a resumed run with the edited functions swapped in."""
    op: Literal["resume"]
    id: int
    source: str
    changed: list[dict]
    starts: list[int]
    max_steps: int | None
    timeout: float | None
    early: bool  # write the trace so far at the next section, for the viewer


class CheckpointHello(TypedDict):
    """A checkpoint, just forked at main()'s line that calls its section, waits for orders."""
    role: Literal["checkpoint"]
    run: int
    pid: int
    index: int
    section: str
    steps: int


class RunHello(TypedDict):
    """A run (whole or resumed) started: its process."""
    role: Literal["run"]
    id: int
    pid: int


class EarlyView(TypedDict):
    """A resumed run reached the section after the edited one and wrote its trace so far."""
    role: Literal["early"]
    id: int
    steps: int


class RunDone(TypedDict, total=False):
    """A run ended: its outcome, checkpoints, what each definition reached, what it did to files."""
    role: Literal["done"]
    id: int
    status: str | None
    message: str | None
    first_step: dict[str, int]
    checkpoints: list[dict]
    unsafe: dict | None
    reached: list[dict]
    hazards: list[dict]
    source: str
    sections: int
    modules: list[str]


ORDERS = (RunOrder, CancelOrder, StopOrder, ResumeOrder)
WORKER_MESSAGES = (CheckpointHello, RunHello, EarlyView, RunDone)
