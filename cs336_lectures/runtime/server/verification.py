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
from pathlib import Path

from cs336_lectures.runtime.i18n.run_messages import Note, note
from cs336_lectures.runtime.trace.compare import first_difference

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
