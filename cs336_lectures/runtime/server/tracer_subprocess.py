"""`cs336-lectures trace` in a process of its own, for re-traces where the platform cannot fork a
warm kernel (or the kernel gave out), and for checks of resumed runs without one. Each run is
its own session, killed whole when it ends, is superseded or the server stops; its output is
read with a bound."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from cs336_lectures.runtime.kernel.client import OutputTail
from cs336_lectures.runtime.processes import kill_process_group, killed_by

if TYPE_CHECKING:
    from cs336_lectures.runtime.server.served_lecture import Lecture

TRACER_COMMAND = [sys.executable, "-m", "cs336_lectures", "trace"]
# The tracer enforces --timeout itself; this only catches a tracer that hangs regardless.
TRACER_GRACE_SECONDS = 60.0
DEFAULT_TRACER_LIMIT_SECONDS = 3600.0


class TracerProcesses:
    """The tracer subprocesses of one server: at most one per lecture at a time."""

    def __init__(self, tracer_command: list[str], max_steps: int | None, timeout: float | None,
                 closed: threading.Event):
        self.tracer_command = tracer_command
        self.max_steps = max_steps
        self.timeout = timeout
        self.closed = closed  # the server is stopping: a run that ends now was cancelled
        self._lock = threading.Lock()
        self._processes: set[subprocess.Popen] = set()
        self._running: dict[str, subprocess.Popen] = {}  # lecture name -> its tracer subprocess
        self._cancelled: set[subprocess.Popen] = set()  # killed by a newer edit (not by the lecture)

    def command(self, lecture: Lecture, out: Path) -> list[str]:
        command = [*self.tracer_command, lecture.given, "-o", str(out), "--quiet"]
        if self.max_steps is not None:
            command += ["--max-steps", str(self.max_steps)]
        if self.timeout is not None:
            command += ["--timeout", f"{self.timeout:g}"]
        return command

    def run(self, command: list[str], name: str) -> tuple[int | None, str]:
        """Run the tracer in its own session, its output read with a bound; (None, "") when cancelled."""
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, start_new_session=True)
        output = [OutputTail(process.stdout), OutputTail(process.stderr)]
        with self._lock:
            self._processes.add(process)
            self._running[name] = process
        try:
            limit = (self.timeout or DEFAULT_TRACER_LIMIT_SECONDS) + TRACER_GRACE_SECONDS
            note = ""
            try:
                process.wait(timeout=limit)
            except subprocess.TimeoutExpired:
                note = f"\nthe tracer did not finish within {limit:.0f} s and was stopped"
            kill_process_group(process)  # whatever the lecture started dies with the run
            for tail in output:
                tail.thread.join(timeout=5)
            with self._lock:
                cancelled = process in self._cancelled
            # A lecture may kill its own process (or its session) too: only our kill is a cancel.
            if cancelled or self.closed.is_set():
                return None, ""
            stdout, stderr = (tail.text() for tail in output)
            return process.returncode, (stderr or stdout) + note
        finally:
            with self._lock:
                self._processes.discard(process)
                self._running.pop(name, None)
                self._cancelled.discard(process)

    def cancel(self, name: str) -> None:
        """Kill the tracer running for lecture `name`, if any: its run then counts as cancelled."""
        with self._lock:
            process = self._running.get(name)
            if process is not None:
                self._cancelled.add(process)
        if process is not None:
            kill_process_group(process)

    def kill_all(self) -> None:
        with self._lock:
            processes = list(self._processes)
        for process in processes:
            kill_process_group(process)


def no_trace_reason(returncode: int) -> str:
    """Why a tracer that wrote no trace ended: "the tracer exited with status 2", or the signal that killed it."""
    name = killed_by(returncode)
    if name is not None:
        return f"the run was killed by {name} and wrote no trace (did the lecture signal its own process or session?)"
    return f"the tracer exited with status {returncode} and wrote no trace"
