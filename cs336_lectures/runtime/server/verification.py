"""Checking a resumed run against a whole one: where two traces first differ, and the log of cases.

After the server publishes the trace of a run resumed from a checkpoint, it runs the whole
lecture in the background and compares the two (trace_compare.comparable). A difference is a
hole in the rule that chose the checkpoint: the whole trace replaces the resumed one, the run
line says at which step they parted, and the case is appended to a log, one JSON object a
line, for whoever improves the rule.

    >>> first_differing_step(comparable(resumed), comparable(whole))   # None when only the header differs
    41
"""

from __future__ import annotations

import difflib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Protocol

from cs336_lectures.runtime.i18n.run_messages import Note, note
from cs336_lectures.runtime.kernel.client import KernelUnavailable
from cs336_lectures.runtime.server.tracer_subprocess import no_trace_reason
from cs336_lectures.runtime.server.traces_folder import failure_message, lecture_source, read_trace, tail
from cs336_lectures.runtime.trace.compare import comparable, first_difference

if TYPE_CHECKING:
    import threading

    from cs336_lectures.runtime.kernel.client import KernelProcess
    from cs336_lectures.runtime.server.events import EventHub
    from cs336_lectures.runtime.server.served_lecture import Lecture
    from cs336_lectures.runtime.server.tracer_subprocess import TracerProcesses
    from cs336_lectures.runtime.server.traces_folder import TracesFolder

try:
    import fcntl
except ImportError:  # Windows: appends are still whole lines, written in one call
    fcntl = None

LOG_NAME = Path("verification") / "log.jsonl"  # beside the traces folder: var/verification/log.jsonl
EDIT_DIFF_LINES = 200  # a log entry shows at most this much of the edit


def first_differing_step(resumed: dict, whole: dict) -> int | None:
    """The index of the first step where two comparable traces differ (its line, its extras, or
    the function it ran in), the shorter one's length when one is the start of the other, or
    None when their steps agree."""
    for index, (ours, theirs) in enumerate(zip(resumed["steps"], whole["steps"])):
        if ours != theirs or _function_of(resumed, ours) != _function_of(whole, theirs):
            return index
    if len(resumed["steps"]) != len(whole["steps"]):
        return min(len(resumed["steps"]), len(whole["steps"]))
    return None


def _function_of(trace: dict, step: list) -> tuple:
    """(file path, qualified name, first line) of the function a step ran in."""
    file, name, first_line = trace["functions"][trace["calls"][step[0]][0]]
    return trace["files"][file]["path"], name, first_line


def changed_file(resumed: dict, whole: dict | None) -> str | None:
    """The path of a file both runs recorded with different sources, or None. A whole run that read
    a newer save is no check of the resumed run (a file only one of them recorded is a real
    difference, which the comparison reports)."""
    if whole is None:
        return None
    sources = {file["path"]: file["source"] for file in resumed["files"]}
    return next((file["path"] for file in whole["files"]
                 if sources.get(file["path"], file["source"]) != file["source"]), None)


def correction_note(step: int | None) -> Note:
    """The run line of a corrected run; `step` 0-based, shown as the viewer counts steps (from 1)."""
    if step is None:
        return note("corrected: the resumed run differed from a whole run")
    return note("corrected: the resumed run differed at step {step}", step=step + 1)


def log_entry(*, lecture: str, trace: str, resumed_line: str, old_source: str | None, new_source: str,
              resumed: dict, whole: dict, step: int | None, time: str) -> dict:
    """One case for the log: what was edited, what the resumed run said, and where it was wrong."""
    edit = list(difflib.unified_diff((old_source or "").splitlines(), new_source.splitlines(), "before", "after",
                                     lineterm="", n=1))
    return {"time": time, "lecture": lecture, "trace": trace, "resumed_run": resumed_line,
            "first_differing_step": step, "difference": first_difference(resumed, whole),
            "resumed_status": resumed["header"].get("status"), "whole_status": whole["header"].get("status"),
            "edit": "\n".join(edit[:EDIT_DIFF_LINES]) if old_source is not None else None}


def append_to_log(path: Path, entry: dict) -> None:
    """Append `entry` as one line. One write() on a file opened for appending lands whole at its
    end; the lock keeps two servers sharing a log from interleaving larger lines."""
    path.parent.mkdir(parents=True, exist_ok=True)
    line = (json.dumps(entry, ensure_ascii=False) + "\n").encode("utf-8")
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        if fcntl is not None:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
        written = 0
        while written < len(line):
            written += os.write(descriptor, line[written:])
        os.fsync(descriptor)
    finally:
        os.close(descriptor)  # closing releases the lock


@dataclass
class ResumedRun:
    """A published run that resumed from a checkpoint, kept until a whole run has checked it."""

    trace: dict
    line: Note  # its run line
    state: str  # "ok", or "error" for a failed run
    old_source: str | None  # the source of the trace it replaced, where known
    early: Path | None = None  # the early view viewers were shown while it ran, if any


@dataclass
class WholeRun:
    """A whole run made to check a resumed one: its trace (None if it wrote none) in `folder`."""

    trace: dict | None
    folder: Path
    output: str  # the run's stderr or the kernel's output, for a failure's message
    returncode: int
    temporary: bool  # the folder is the run's own, removed once it is read


class RunsOfTheServer(Protocol):
    """What a check needs of the server's re-tracing (retracing.Retracer): its kernels, its
    tracer processes, the served folder, its events and log, and whether it is closing."""

    closed: threading.Event
    use_kernels: bool
    max_steps: int | None
    timeout: float | None
    hub: EventHub
    folder: TracesFolder
    processes: TracerProcesses

    log: Callable[[str], None]

    def kernel(self, lecture: Lecture) -> KernelProcess: ...

    def drop_kernel(self, lecture: Lecture) -> None: ...


class Verifier:
    """Checks each published resumed run against a whole run of the same file, for one server."""

    def __init__(self, retracer: RunsOfTheServer, log_path: Path):
        self.retracer = retracer  # its kernels, tracer processes, traces folder and events
        self.log_path = log_path

    def check(self, lecture: Lecture, generation: int, resumed: ResumedRun) -> None:
        """Run the whole lecture and compare its trace with the resumed run's (published already):
        the same, and viewers mark the trace verified; else the whole trace replaces it, the run
        line says where they parted, and the case goes to the log."""
        self.check_early_view(lecture, resumed)
        whole = self._whole_run(lecture)
        if whole is None or self.retracer.closed.is_set():  # cancelled: a newer edit runs next
            return
        try:
            changed = changed_file(resumed.trace, whole.trace) or self._saved_since(lecture, resumed, whole)
            if changed is not None:
                # Saved again after the resumed run read it: the watcher's event for that save came
                # after the whole run had read the new file. That save's own run (and check) follow.
                self.retracer.log(f"{lecture.name}: {changed} changed while checking the resumed run; "
                                  "the check is dropped, the newer save runs next")
                return
            if whole.trace is not None:
                ours, theirs = comparable(resumed.trace), comparable(whole.trace)
                if ours == theirs:
                    self.retracer.hub.publish({"trace": lecture.name, "generation": generation, "state": "verified",
                                      "verification": "verified", "mode": "incremental", "message": str(resumed.line),
                                      "note": resumed.line.to_json()})
                    self.retracer.log(f"{lecture.name}: verified by a whole run")
                    return
                step = first_differing_step(ours, theirs)
            else:
                ours, theirs, step = comparable(resumed.trace), None, 0
            correction = correction_note(step)
            outcome = self._install_correction(lecture, resumed, whole, correction)
            with lecture.lock:
                lecture.generation += 1
                generation = lecture.generation
                if outcome["state"] != "ok":  # the kernel's checkpoints are the resumed run's: start afresh
                    lecture.pending_full = note("the last resumed run was corrected")
            self._log_case(lecture, "resumed run", resumed, ours, theirs, step)  # logged before anyone hears of it
            self.retracer.hub.publish({"trace": lecture.name, "generation": generation, "verification": "corrected",
                              "mode": "full", "step": step, **outcome})
            self.retracer.log(f"{lecture.name}: {correction}")
        finally:
            if whole.temporary:
                shutil.rmtree(whole.folder, ignore_errors=True)

    @staticmethod
    def _saved_since(lecture: Lecture, resumed: ResumedRun, whole: WholeRun) -> str | None:
        """For a whole run that wrote no trace (nothing says what it read): the lecture's path if
        the file on disk is no longer the resumed run's."""
        if whole.trace is not None:
            return None
        try:
            current = lecture.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        return str(lecture.path) if current != lecture_source(resumed.trace) else None

    def check_early_view(self, lecture: Lecture, resumed: ResumedRun) -> None:
        """Log an early view that was not the start of its run's whole trace (the kernel writes
        none where it can see that a recorded step may still change: this finds what it missed)."""
        if resumed.early is None:
            return
        early = read_trace(resumed.early)
        resumed.early.unlink(missing_ok=True)
        if early is None:
            return
        shown = {**resumed.trace, "steps": resumed.trace["steps"][:len(early["steps"])]}
        step = first_differing_step(comparable(early), comparable(shown))
        if step is None:
            return
        self.retracer.log(f"{lecture.name}: the early view differed from its run's whole trace at step {step + 1}")
        self._log_case(lecture, "early view", resumed, comparable(early), comparable(shown), step)

    def _whole_run(self, lecture: Lecture) -> WholeRun | None:
        """The whole lecture, run afresh (forked from its kernel, else in a new process); None if cancelled."""
        produced = f"{lecture.name}.json"
        if self.retracer.use_kernels and not self.retracer.closed.is_set():
            kernel = self.retracer.kernel(lecture)
            try:
                reply = kernel.run(max_steps=self.retracer.max_steps, timeout=self.retracer.timeout,
                                   full=note("checking a resumed run against a whole one"))
            except KernelUnavailable as error:
                self.retracer.log(f"{lecture.name}: {error}; checking in a new process instead")
                self.retracer.drop_kernel(lecture)
            else:
                if reply is None:
                    return None
                trace = read_trace(kernel.out / produced) if reply.get("status") is not None else None
                message = reply.get("message") or "the run wrote no trace"
                return WholeRun(trace, kernel.out, f"{message}\n{kernel.output_tail()}".strip(), 2, temporary=False)
        if self.retracer.closed.is_set():
            return None
        staging = Path(tempfile.mkdtemp(prefix=f".verify-{lecture.name}.", dir=self.retracer.folder.path))
        returncode, stderr = self.retracer.processes.run(self.retracer.processes.command(lecture, staging), lecture.name)
        if returncode is None:
            shutil.rmtree(staging, ignore_errors=True)
            return None
        trace = read_trace(staging / produced)
        return WholeRun(trace, staging, tail(stderr) or no_trace_reason(returncode), returncode, temporary=True)

    def _install_correction(self, lecture: Lecture, resumed: ResumedRun, whole: WholeRun, correction: Note) -> dict:
        """Put the whole run's trace where the resumed run's was served; the outcome part of the event."""
        produced = whole.folder / f"{lecture.name}.json"
        line = {"note": correction.to_json()}
        if whole.trace is None:  # nothing to install: the lecture, run afresh, writes no trace
            return {"state": "error", "message": f"{whole.output}\n({correction})", **line}
        lecture.traced_source = lecture_source(whole.trace)
        if whole.trace["header"].get("status") == "ok":
            self.retracer.folder.install_good(whole.folder, produced, lecture.name)
            return {"state": "ok", "message": str(correction), **line}
        failure = f"{failure_message(whole.trace, whole.output, whole.returncode)}\n({correction})"
        if resumed.state == "ok":  # the good trace served is the resumed run's, which a fresh run does not give
            self.retracer.folder.install(whole.folder, produced)
            return {"state": "error", "message": failure, "installed": True, "failed_trace": lecture.name, **line}
        return {**self.retracer.folder.install_failure(lecture.name, whole.folder, produced, failure), **line}

    def _log_case(self, lecture: Lecture, case: str, resumed: ResumedRun, shown: dict, truth: dict | None,
                  step: int | None) -> None:
        """Append to the log that `shown` (comparable), what viewers saw of the resumed run, was not `truth`."""
        truth = truth if truth is not None else {"header": {"status": None}, "steps": []}  # a run without a trace
        entry = log_entry(lecture=str(lecture.path), trace=lecture.name, resumed_line=str(resumed.line),
                          old_source=resumed.old_source, new_source=lecture_source(resumed.trace) or "",
                          resumed=shown, whole=truth, step=step,
                          time=datetime.now(timezone.utc).isoformat(timespec="seconds"))
        try:
            append_to_log(self.log_path, {"case": case, **entry})
        except OSError as error:
            self.retracer.log(f"{lecture.name}: cannot append to {self.log_path}: {error.strerror or error}")
