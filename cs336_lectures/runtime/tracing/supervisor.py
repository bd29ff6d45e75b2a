"""Supervised tracing: `cs336-lectures trace` runs each lecture in a forked child and watches it.

Why a second process: a lecture stuck in C code (`sum(itertools.count())`) holds the GIL, so no
thread or signal handler of its own process ever runs again; a lecture that catches
BaseException swallows whatever the tracer raises to stop it; a lecture's non-daemon thread
keeps its process alive after the trace is written. Only something outside the lecture's
process can always end it, so the command's process supervises and the child traces.

The child traces as before and tells the parent, one JSON line per message on a pipe, when a
limit was reached, when the trace is being written, and the result. It also keeps a snapshot
of its trace (status and message of a stopped run included) in a private temporary folder:

- before the run, with no steps yet (the files' highlighting is computed then, once);
- with --timeout, a thread rewrites the snapshot while the lecture runs Python code, at most
  every SNAPSHOT_MIN_S and never taking more than a tenth of the time;
- once a limit is reached, an enforcer thread gives the lecture ENFORCE_AFTER_S to let the
  stop reach the tracer; if it caught the stop and went on, the enforcer writes the snapshot
  and ends the child.

The parent kills the child when it neither finishes nor starts writing within KILL_AFTER_S
after the --timeout limit (counted from the start of the run, as the tracer counts it), after
a limit it was told of, or after Ctrl-C, and then writes
the trace from the last snapshot. A C function that never returns is found with faulthandler,
whose C thread dumps the child's stacks without the GIL; the message names that line. The
child exits with os._exit once its trace is written, whatever threads the lecture left.

Forking needs a POSIX system; elsewhere (`supported()` is False) the command traces in its own
process, with the in-process limits only.
"""

from __future__ import annotations

import codecs
import faulthandler
import io
import json
import math
import os
import re
import select
import shutil
import signal
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Callable

from cs336_lectures.runtime.processes import die_with_parent
from cs336_lectures.runtime.trace.format import write_trace

if TYPE_CHECKING:
    from cs336_lectures.runtime.tracing.engine import Tracer
    from cs336_lectures.runtime.tracing.result import TraceResult

SNAPSHOT_MIN_S = 0.25  # the shortest time between two snapshots of a running lecture
SNAPSHOT_COST_SHARE = 10  # a snapshot waits at least this many times as long as the previous one took
ENFORCE_AFTER_S = 1.0  # a stopped lecture has this long to return to the tracer before it is ended
STACK_DUMP_AFTER_S = 1.5  # after --timeout: when faulthandler writes where the child is
KILL_AFTER_S = 3.0  # after --timeout, a limit or Ctrl-C: when the parent kills a child that has not ended
_ENFORCED_EXIT = 3  # the child's exit status when its enforcer ended it after writing the snapshot
_RUNTIME_DIR = str(Path(__file__).resolve().parents[1])




# --- the child: snapshots, the enforcer, messages to the parent ---------------------------------


class Supervision:
    """The child's side, handed to trace_lecture: it watches the tracer of one run."""

    def __init__(self, folder: Path, control: BinaryIO, timeout: float | None):
        self.snapshot_path = folder / "snapshot.json"
        self.stacks_path = folder / "stacks.txt"
        self._control = control
        self._timeout = timeout
        self._tracer: Tracer | None = None
        self._header: dict = {}
        self._returned = threading.Event()  # the run came back to the tracer
        self._stopped = threading.Event()  # a limit was reached: the enforcer writes the last snapshot
        self._sending = threading.Lock()  # one message at a time
        self._snapshotting = threading.Lock()  # one snapshot at a time
        self._stacks: io.BufferedWriter | None = None

    def send(self, **message: Any) -> None:
        with self._sending:
            self._control.write(json.dumps(message).encode() + b"\n")
            self._control.flush()

    def watch(self, tracer: Tracer, header: dict) -> None:
        """Called by trace_lecture just before the run starts."""
        self._tracer, self._header = tracer, header
        tracer.on_stop = self._on_stop
        self._write_snapshot()  # the files and header, so that even a lecture stuck at once leaves a trace
        self.send(running=True)
        if self._timeout is not None:
            self._stacks = open(self.stacks_path, "wb")
            faulthandler.dump_traceback_later(self._timeout + STACK_DUMP_AFTER_S, file=self._stacks)
            threading.Thread(target=self._snapshot_loop, name="trace-snapshots", daemon=True).start()

    def run_returned(self) -> None:
        """Called by trace_lecture when the run is over, before the trace is written."""
        self._returned.set()
        if self._stacks is not None:
            faulthandler.cancel_dump_traceback_later()
        self.send(writing=True)

    def _on_stop(self) -> None:
        """The tracer reached a limit (main thread or watchdog thread): the run must now end."""
        self._stopped.set()
        self.send(stopping=True)
        threading.Thread(target=self._enforce, name="trace-enforcer", daemon=True).start()

    def _enforce(self) -> None:
        if self._returned.wait(ENFORCE_AFTER_S):
            return
        # The lecture caught the stop and went on: its trace as it was at the stop, then the end.
        self.send(writing=True)
        self._write_snapshot()
        _flush_standard_streams()
        os._exit(_ENFORCED_EXIT)

    def _snapshot_loop(self) -> None:
        wait, written_steps = SNAPSHOT_MIN_S / 8, -1  # the first snapshots come soon: a lecture may stick early
        while not self._returned.wait(wait) and not self._stopped.is_set():
            steps = len(self._tracer.steps)
            if steps == written_steps:
                continue
            began = time.perf_counter()
            self._write_snapshot()
            written_steps, took = steps, time.perf_counter() - began
            # The snapshot held the GIL that long (json.dumps is one C call): the parent's countdown waits as long.
            self.send(snapshot_s=took)
            wait = max(min(2 * wait, SNAPSHOT_MIN_S), SNAPSHOT_COST_SHARE * took)

    def _write_snapshot(self) -> None:
        tracer = self._tracer
        elapsed = time.perf_counter() - tracer.started if tracer.started else 0.0  # 0.0: not started yet
        header = {**self._header, "elapsed_s": round(elapsed, 3),
                  "status": tracer.stop_status or "timeout"}
        if tracer.stop_message is not None:
            header["message"] = tracer.stop_message
        temp = self.snapshot_path.with_suffix(".tmp")
        with self._snapshotting:  # only a process that dies needs this file, so no fsync: a rename is enough
            temp.write_text(json.dumps(tracer.snapshot(header), separators=(",", ":"), ensure_ascii=False,
                                       allow_nan=False), encoding="utf-8", errors="backslashreplace")
            os.replace(temp, self.snapshot_path)


class _ForwardedText(io.TextIOBase):
    """The child's sys.stderr: text goes to the parent, which writes it to its own stderr (a
    terminal, a pipe, or pytest's capture), so warnings and the progress display still show."""

    def __init__(self, fd: int, isatty: bool):
        self._fd = fd
        self._isatty = isatty

    @property
    def encoding(self) -> str:
        return "utf-8"

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self._isatty

    def write(self, text: str) -> int:
        data = text.encode("utf-8", "backslashreplace")
        while data:
            data = data[os.write(self._fd, data):]
        return len(text)


def _flush_standard_streams() -> None:
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):  # closed or replaced by the lecture
            pass




# --- the parent: waiting, killing, writing the trace from a snapshot ---------------------------


@dataclass
class _Outcome:
    result: dict | None = None  # the child's last message with a "result" or "error"
    killed_for: str | None = None  # "timeout", "stop" or "interrupt" when the parent killed the child
    exit_code: int = 0  # the child's exit status, or -SIGNAL
    ended_at: float = 0.0  # when the child ended (time.time())


def run_supervised(trace: Callable[[Supervision], TraceResult], *, trace_path: Path,
                   timeout: float | None) -> TraceResult:
    """Run `trace(supervision)` in a forked child and return its TraceResult; if the child has to be
    killed or ends without a result, write `trace_path` from its last snapshot.

    Raises LectureError (the child's, or for a child that left nothing to write) and
    KeyboardInterrupt (Ctrl-C before the lecture's run began)."""
    folder = Path(tempfile.mkdtemp(prefix="cs336-trace-"))
    try:
        control_read, control_write = os.pipe()
        errors_read, errors_write = os.pipe()
        parent = os.getpid()
        _flush_standard_streams()
        child = os.fork()
        if child == 0:  # pragma: no cover - runs in the child, which never returns
            os.close(control_read)
            os.close(errors_read)
            _child_main(trace, folder, os.fdopen(control_write, "wb"), errors_write, timeout, parent)
        os.close(control_write)
        os.close(errors_write)
        outcome = _watch(child, control_read, errors_read, timeout)
        return _conclude(outcome, folder, trace_path, timeout)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _child_main(trace: Callable[[Supervision], TraceResult], folder: Path, control: BinaryIO, errors: int,
                timeout: float | None, parent: int) -> None:
    from cs336_lectures.runtime.tracing.result import LectureError

    status = 0
    try:
        die_with_parent(parent)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        sys.stderr = _ForwardedText(errors, isatty=_isatty(sys.stderr))
        supervision = Supervision(folder, control, timeout)
        try:
            result = trace(supervision)
        except LectureError as error:
            supervision.send(error=str(error))
        except KeyboardInterrupt:
            supervision.send(interrupted_before_run=True)
        else:
            lecture_threads = [thread for thread in threading.enumerate()
                               if thread is not threading.current_thread() and not thread.daemon]
            supervision.send(result={**result.to_dict(), "threads_left": len(lecture_threads)})
    except BaseException:  # our own failure: the parent says so, with this traceback on stderr
        import traceback

        traceback.print_exc()
        status = 1
    finally:
        _flush_standard_streams()
        os._exit(status)  # not waiting for threads the lecture left running


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _watch(child: int, control: int, errors: int, timeout: float | None) -> _Outcome:
    """Relay the child's stderr and read its messages until it exits, killing it when it must end."""
    watch = _Watch(control, errors, timeout)
    interrupted: list[float] = []
    previous = _catch_interrupts(interrupted)
    status = None
    try:
        while status is None:
            if interrupted and watch.reason != "interrupt":
                watch.reason = "interrupt"
                watch.deadline = min(watch.deadline or math.inf, interrupted[0] + KILL_AFTER_S)
            wait = None if watch.deadline is None else max(0.0, watch.deadline - time.monotonic())
            if wait == 0.0:
                os.kill(child, signal.SIGKILL)
                watch.outcome.killed_for = watch.reason
            elif watch.read(0.5 if wait is None else min(wait, 0.5)):
                continue
            # Nothing to read: has the child ended? (Its pipes may outlive it, in a process it forked.)
            pid, waited = os.waitpid(child, 0 if watch.outcome.killed_for else os.WNOHANG)
            if pid:
                status = waited
        watch.outcome.ended_at = time.time()
        while watch.read(0):  # what the child wrote just before it ended
            pass
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
        os.close(control)
        os.close(errors)
    outcome = watch.outcome
    outcome.exit_code = os.waitstatus_to_exitcode(status)
    if interrupted and outcome.result is None and outcome.killed_for is None:
        outcome.killed_for = "interrupt"
    return outcome


class _Watch:
    """The parent's reading of the child's two pipes, and the deadline its messages set."""

    def __init__(self, control: int, errors: int, timeout: float | None):
        self.outcome = _Outcome()
        self.deadline: float | None = None  # --timeout counts from the start of the run, as the tracer's does
        self.reason = "timeout"
        self._control, self._errors, self._timeout = control, errors, timeout
        self._open = {control, errors}
        self._pending = b""
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def read(self, wait: float) -> bool:
        """Handle what is ready within `wait` seconds; False when nothing was."""
        if not self._open:
            # Both pipes closed: the child is ending. Look again soon rather than after `wait`,
            # which would add up to half a second to every trace.
            time.sleep(min(wait, 0.005))
            return False
        try:
            ready, _, _ = select.select(list(self._open), [], [], wait)
        except InterruptedError:  # Ctrl-C: the caller looks at it
            return True
        for fd in ready:
            data = os.read(fd, 65536)
            if not data:
                self._open.discard(fd)
            elif fd == self._errors:
                sys.stderr.write(self._decoder.decode(data))
                sys.stderr.flush()
            else:
                self._pending += data
                *lines, self._pending = self._pending.split(b"\n")
                for line in lines:
                    self._handle(json.loads(line))
        return bool(ready)

    def _handle(self, message: dict) -> None:
        if message.get("running"):
            if self._timeout is not None and self.reason != "interrupt":
                self.deadline = time.monotonic() + self._timeout + KILL_AFTER_S
        elif message.get("stopping"):
            if self.reason != "interrupt":
                self.reason = "stop"
                self.deadline = min(self.deadline or math.inf, time.monotonic() + KILL_AFTER_S)
        elif message.get("writing"):
            self.deadline = None  # only our own writing is left
        elif "snapshot_s" in message:
            if self.deadline is not None:
                self.deadline += message["snapshot_s"]
        else:
            self.outcome.result = message


def _catch_interrupts(interrupted: list[float]) -> Any:
    """While the child runs, Ctrl-C (which the child gets too) only starts the parent's countdown."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def on_sigint(signum: int, frame: Any) -> None:
        if not interrupted:
            interrupted.append(time.monotonic())

    return signal.signal(signal.SIGINT, on_sigint)


def _conclude(outcome: _Outcome, folder: Path, trace_path: Path, timeout: float | None) -> TraceResult:
    from cs336_lectures.runtime.tracing.result import LectureError, TraceResult

    message = outcome.result or {}
    if "result" in message and outcome.killed_for is None:
        return TraceResult.from_dict(message["result"])
    if "error" in message:
        raise LectureError(message["error"])
    if message.get("interrupted_before_run"):
        raise KeyboardInterrupt
    snapshot = folder / "snapshot.json"
    why = _why_killed(outcome, timeout, folder / "stacks.txt")
    if not snapshot.exists():
        if outcome.killed_for == "interrupt":
            raise KeyboardInterrupt
        raise LectureError(f"{trace_path.with_suffix('.py').name}: {why}; no trace was written")
    trace = json.loads(snapshot.read_text(encoding="utf-8"))
    header = trace["header"]
    # The run went on from the snapshot until the child ended.
    header["elapsed_s"] = round(header["elapsed_s"] + max(0.0, outcome.ended_at - snapshot.stat().st_mtime), 3)
    if outcome.exit_code == _ENFORCED_EXIT and outcome.killed_for is None:
        header["message"] = f"{header.get('message', '')}; the lecture caught the stop and went on, so it was ended"
    else:
        header["status"] = "timeout" if outcome.killed_for == "timeout" else "error"
        header["message"] = f"{why}; the trace ends at its last snapshot, step {header['num_steps']}"
    try:
        path = write_trace(trace, trace_path)
    except OSError as error:
        raise LectureError(f"{trace_path}: cannot write the trace: {error.strerror or error}") from None
    return TraceResult(path, header["status"], header["num_steps"], header["elapsed_s"], header["message"],
                       interrupted=outcome.killed_for == "interrupt")


def _why_killed(outcome: _Outcome, timeout: float | None, stacks: Path) -> str:
    where = _stuck_at(stacks)
    at = f" (stuck at {where})" if where else ""
    if outcome.killed_for == "timeout":
        return (f"stopped after {timeout:g} s (the limit set by --timeout): the lecture did not return to "
                f"Python{at}, so it was killed")
    if outcome.killed_for == "stop":
        return f"the lecture did not end within {KILL_AFTER_S:g} s of reaching a limit{at}, so it was killed"
    if outcome.killed_for == "interrupt":
        return f"KeyboardInterrupt: the lecture did not stop within {KILL_AFTER_S:g} s of Ctrl-C, so it was killed"
    code = outcome.exit_code
    died = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"
    return f"the tracing process ended without writing its trace ({died})"


_FRAME_LINE = re.compile(r'^\s*File "(.*)", line (\d+) in (.*)$')


def _stuck_at(stacks: Path) -> str | None:
    """The innermost frame outside the runtime in faulthandler's dump of the thread that held the GIL."""
    from cs336_lectures.runtime.tracing.source_text import display_path

    try:
        text = stacks.read_text(errors="replace")
    except OSError:
        return None
    section = text.split("Current thread", 1)[-1]
    for line in section.splitlines():
        match = _FRAME_LINE.match(line)
        if match and not match.group(1).startswith(_RUNTIME_DIR) and "/threading.py" not in match.group(1):
            return f"{display_path(match.group(1))}:{match.group(2)} in {match.group(3)}"
    return None
