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
