"""The server's handle on one lecture's warm kernel (kernel.py): start it, ask for runs, stop it.

The kernel runs in its own session, so that stopping it (and every process a lecture started)
is one signal to each of its process groups; what it and the lecture write to the OS-level
stdout and stderr is read continuously and only the last OUTPUT_TAIL_BYTES are kept.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Callable

from cs336_lectures.runtime.processes import fork_safe_openmp, kill_session
from cs336_lectures.runtime.kernel.protocol import RUN_GRACE_SECONDS, STACKS_SIGNAL, MessageLines, send
from cs336_lectures.runtime.i18n.run_messages import Note

OUTPUT_TAIL_BYTES = 64 * 1024
START_SECONDS = 120.0  # importing torch on a busy 2-core machine
# Past a run's time limit the kernel itself stops the run and answers; a kernel silent this much
# longer is stuck, and is closed rather than waited for.
ANSWER_GRACE_SECONDS = RUN_GRACE_SECONDS + 30.0
KERNEL_MODULE = "cs336_lectures.runtime.kernel.process"


class KernelUnavailable(Exception):
    """The kernel could not be started or died; the server falls back to a tracer subprocess."""


class OutputTail:
    """Reads a pipe to its end, keeping only the last `limit` bytes (a lecture may write gigabytes)."""

    def __init__(self, pipe: IO[bytes], limit: int = OUTPUT_TAIL_BYTES):
        self.limit = limit
        self.data = bytearray()
        self.total = 0
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._drain, args=(pipe,), name="kernel-output", daemon=True)
        self.thread.start()

    def _drain(self, pipe: IO[bytes]) -> None:
        with pipe:
            while chunk := pipe.read1(1 << 16):
                with self.lock:
                    self.total += len(chunk)
                    self.data += chunk
                    if len(self.data) > self.limit:
                        del self.data[:len(self.data) - self.limit]

    def text(self) -> str:
        with self.lock:
            return self.data.decode("utf-8", "replace")


class KernelProcess:
    """One lecture's kernel. `run` blocks until the run ends (or is cancelled: then None)."""

    def __init__(self, lecture: Path, command: list[str], log: Callable[[str], None] = print):
        self.lecture = lecture
        # Its runs' traces (out/) and its socket; removed by close(). Outside the served traces:
        # a resumed run writes its assets where the run it continues did.
        self.folder = Path(tempfile.mkdtemp(prefix=f"cs336-kernel-{lecture.stem}."))
        self.out = self.folder / "out"
        self.command = command
        self.log = log
        self.process: subprocess.Popen | None = None
        self.connection: socket.socket | None = None
        self.lines: MessageLines | None = None
        self.stdout: OutputTail | None = None
        self.stderr: OutputTail | None = None
        self.send_lock = threading.Lock()
        self.cancelled = threading.Event()
        self.closed = False
        self.next_id = 0

    def start(self) -> None:
        ours, theirs = socket.socketpair()
        environment = {**os.environ, "PYTHONHASHSEED": "0"}  # as `cs336-lectures trace` runs
        openmp = fork_safe_openmp()
        if openmp is not None:
            environment["LD_PRELOAD"] = " ".join(filter(None, (openmp, os.environ.get("LD_PRELOAD"))))
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", KERNEL_MODULE, str(self.lecture), "--folder", str(self.folder),
                 "--fd", str(theirs.fileno()), "--command", json.dumps(self.command)],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                pass_fds=(theirs.fileno(),), start_new_session=True, env=environment)
        except OSError as error:
            ours.close()
            raise KernelUnavailable(f"cannot start the kernel: {error}") from None
        finally:
            theirs.close()
        self.connection, self.lines = ours, MessageLines(ours)
        self.stdout, self.stderr = OutputTail(self.process.stdout), OutputTail(self.process.stderr)
        try:
            hello = self.lines.read(timeout=START_SECONDS)
        except (EOFError, OSError, ValueError):
            hello = None
        if not hello or not hello.get("ready"):
            self.close()
            raise KernelUnavailable(f"the kernel did not start: {self.output_tail() or 'no output'}")

    def run(self, *, max_steps: int | None, timeout: float | None, full: Note | None = None,
            on_early: Callable[[dict], None] | None = None) -> dict | None:
        """Run the lecture (incrementally unless `full` says why not); the kernel's reply.

        A resumed run first writes the trace up to the section after the edit (out/NAME.early.json);
        `on_early` hears of it (state "early", with `steps`, `until`: the old trace's step where the
        sections still running begin) while the run goes on. A kernel that has not answered
        ANSWER_GRACE_SECONDS after `timeout` is closed (KernelUnavailable)."""
        if self.process is None:
            self.start()
        self.cancelled.clear()
        self.next_id += 1
        run_id = self.next_id
        self._send({"op": "run", "id": run_id, "max_steps": max_steps, "timeout": timeout,
                    "full": full.to_json() if full else None})
        give_up = None if timeout is None else time.monotonic() + timeout + ANSWER_GRACE_SECONDS
        while True:
            if self.cancelled.is_set():
                return None
            if give_up is not None and time.monotonic() > give_up:
                stacks = self._stacks()
                self.close()
                raise KernelUnavailable(f"the kernel did not answer within {timeout + ANSWER_GRACE_SECONDS:g} s "
                                        f"of the run's start: closed it; where it was:\n{stacks or 'no output'}")
            try:
                reply = self.lines.read(timeout=0.05)
            except (EOFError, OSError, ValueError):
                self.close()
                raise KernelUnavailable(f"the kernel stopped: {self.output_tail() or 'no output'}") from None
            if reply is not None and reply.get("id") == run_id:
                if reply.get("state") != "early":
                    return reply
                if on_early is not None:
                    on_early(reply)

    def _stacks(self) -> str:
        """What a kernel that stopped answering was doing: its threads' stacks, as it wrote them."""
        before = self.stderr.total
        try:
            os.kill(self.process.pid, STACKS_SIGNAL)
        except OSError:
            return ""
        deadline = time.monotonic() + 2.0
        seen = before
        while time.monotonic() < deadline:  # until the dump has come and stopped coming
            time.sleep(0.2)
            if self.stderr.total == seen != before:
                break
            seen = self.stderr.total
        return self.output_tail(lines=60)

    def cancel(self) -> None:
        """End the run in progress (its processes are killed); `run` returns None."""
        self.cancelled.set()
        if self.process is not None and not self.closed:
            try:
                self._send({"op": "cancel"})
            except KernelUnavailable:
                pass

    def output_tail(self, lines: int = 30) -> str:
        text = "\n".join(tail.text() for tail in (self.stdout, self.stderr) if tail is not None)
        return "\n".join(text.strip().splitlines()[-lines:])

    def _send(self, message: dict) -> None:
        with self.send_lock:
            try:
                send(self.connection, message)
            except OSError:
                raise KernelUnavailable("the kernel is gone") from None

    def close(self) -> None:
        """Stop the kernel and every process of its session; idempotent."""
        if self.closed or self.process is None:
            self.closed = True
            shutil.rmtree(self.folder, ignore_errors=True)
            return
        self.closed = True
        self.cancelled.set()
        try:
            with self.send_lock:
                if self.connection is not None:  # None while start() is still under way on another thread
                    send(self.connection, {"op": "stop"})
        except OSError:
            pass
        try:
            self.process.wait(timeout=3)
        except subprocess.TimeoutExpired:
            pass
        kill_session(self.process.pid)
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        if self.connection is not None:
            self.connection.close()
        for tail in (self.stdout, self.stderr):
            if tail is not None:
                tail.thread.join(timeout=2)
        shutil.rmtree(self.folder, ignore_errors=True)


