"""What tracing a lecture gives back: its result, or the error that kept it from starting.

A result crosses process boundaries (the supervised child, a batch job), so it turns itself
into a plain dict and back."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path


class LectureError(Exception):
    """The lecture could not be started (missing file, bad syntax, failed import, no such section),
    or its trace could not be written."""


@dataclass
class TraceResult:
    """What `trace_lecture` wrote: where, how it ended, how long it was."""

    path: Path
    status: str
    num_steps: int
    elapsed_s: float
    message: str | None = None
    interrupted: bool = False  # Ctrl-C: the trace is written, and no further lecture should be traced
    threads_left: int = 0  # threads the lecture started that were still running when its trace was written

    def to_dict(self) -> dict:
        """The result as JSON-ready fields: `TraceResult.from_dict(result.to_dict()) == result`."""
        return {**dataclasses.asdict(self), "path": str(self.path)}

    @classmethod
    def from_dict(cls, fields: dict) -> TraceResult:
        """A result from `to_dict`'s fields (fields a sender left out take their defaults)."""
        known = {field.name for field in dataclasses.fields(cls)}
        return cls(**{**{k: v for k, v in fields.items() if k in known}, "path": Path(fields["path"])})

    def summary(self) -> str:
        """One line per traced lecture: 'var/traces/lecture_01.json: ok, 493 steps in 1.1 s'."""
        steps = f"{self.num_steps} step{'' if self.num_steps == 1 else 's'}"
        line = f"{self.path}: {self.status}, {steps} in {self.elapsed_s:.1f} s"
        if self.message:
            line = f"{line}: {self.message}"
        if self.threads_left:
            threads = "a thread" if self.threads_left == 1 else f"{self.threads_left} threads"
            line = f"{line} (the lecture left {threads} running, stopped once the trace was written)"
        return line
