"""The trace file: writing it atomically and reading it back as Python objects.

The format itself is specified in trace/README.md and trace/schema.json. This module adds
the two ends of the pipe: `write_trace` (compact JSON, written to a temporary file and
renamed, so a crash never leaves half a trace) and `load_trace`, which expands the interned
stack and the per-step extras into `Step` objects that tests of lectures can assert on.

    >>> trace = load_trace("var/traces/lecture_01.json")
    >>> trace.values_of("num_tokens")[-1]
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cs336_lectures.runtime.atomic import write_bytes_atomically

FORMAT = "cs336-lectures-trace"
VERSION = 2  # the version written
READABLE_VERSIONS = (1, 2)  # version 2 only adds optional fields, so version 1 still loads


class TraceFormatError(ValueError):
    """A file that is not a readable trace of a version this code understands."""


def write_trace(trace: dict, path: str | os.PathLike) -> Path:
    """Write `trace` as compact UTF-8 JSON to `path` atomically; return the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # dumps, not dump: only the one-shot encoder is the fast C one.
    text = json.dumps(trace, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    # A lone surrogate (print("\ud800") in a lecture) has no UTF-8 form; backslashreplace
    # writes it as the JSON escape \ud800, which is what ensure_ascii would have written.
    return write_bytes_atomically(path, text.encode("utf-8", "backslashreplace"))


@dataclass
class Step:
    """One executed line, with everything the trace says about it.

    `stack` lists (file, function, line) from the outermost call to this line; `values` are
    the inspected values recorded on this step (decoded), not the whole environment.
    """

    index: int
    file: str
    line: int
    function: str
    stack: list[tuple[str, str, int]]
    values: dict[str, Any] = field(default_factory=dict)
    cleared: list[str] = field(default_factory=list)
    renderings: list[dict] = field(default_factory=list)
    stdout: str = ""
    stderr: str = ""
    error: dict | None = None
    collectives: list[dict] = field(default_factory=list)  # torch.distributed calls of this line, decoded
    rank: int | None = None  # the rank whose process ran the step; None: the lecture's own process


@dataclass
class Solution:
    """A `with solution():` block: the lines of its body and the steps that ran inside it."""

    file: str
    first_line: int
    last_line: int
    steps: list[Step]

    def values_of(self, name: str) -> list[Any]:
        """Every value of `name` recorded inside the block, in execution order."""
        return [step.values[name] for step in self.steps if name in step.values]

    @property
    def renderings(self) -> list[dict]:
        """What text(), plot()... showed inside the block, in order."""
        return [rendering for step in self.steps for rendering in step.renderings]


@dataclass
class Rank:
    """One process of a distributed program the lecture started (`ranks`, version 2)."""

    group: int
    rank: int
    status: str  # ok, error, aborted, terminated, lost, or a tracer status (max_steps)
    message: str | None
    steps: list[Step]

    def values_of(self, name: str) -> list[Any]:
        """Every value of `name` this rank recorded, in execution order."""
        return [step.values[name] for step in self.steps if name in step.values]


@dataclass
class Trace:
    """A loaded trace: the header and files as written, the steps expanded, and the solution blocks."""

    header: dict
    files: list[dict]
    steps: list[Step]
    solutions: list[Solution] = field(default_factory=list)
    ranks: list[Rank] = field(default_factory=list)

    def inspected_names(self) -> list[str]:
        """Every name that has a recorded value, in order of first appearance."""
        names: dict[str, None] = {}
        for step in self.steps:
            names.update(dict.fromkeys(step.values))
        return list(names)

    def values_of(self, name: str) -> list[Any]:
        """Every recorded value of `name`, in execution order, as plain Python data."""
        return [step.values[name] for step in self.steps if name in step.values]


def load_trace(path: str | os.PathLike) -> Trace:
    """Read a trace file written by `cs336-lectures trace`; TraceFormatError if it is not one."""
    path = Path(path)
    raw = read_trace_json(path)
    try:
        steps = _expand_steps(raw)
        solutions = _solutions(raw, steps)
        ranks = _ranks(raw, steps)
    except (KeyError, IndexError, TypeError, ValueError) as error:
        raise TraceFormatError(f"{path}: malformed trace: {error!r}") from None
    return Trace(header=raw["header"], files=raw["files"], steps=steps, solutions=solutions, ranks=ranks)


def read_trace_json(path: Path) -> dict:
    """The trace's JSON as written, once its format and version are checked (for readers that
    index the raw steps themselves: the terminal viewer, the notebook export)."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise TraceFormatError(f"{path}: not valid JSON (truncated?): {error}") from None
    except UnicodeDecodeError as error:
        raise TraceFormatError(f"{path}: not UTF-8 text: {error}") from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        found = raw.get("format") if isinstance(raw, dict) else type(raw).__name__
        raise TraceFormatError(f"{path}: not a {FORMAT} file (format {found!r})")
    if raw.get("version") not in READABLE_VERSIONS:
        known = ", ".join(map(str, READABLE_VERSIONS))
        raise TraceFormatError(
            f"{path}: trace version {raw.get('version')!r} is not supported (this reader knows versions {known})"
        )
    return raw


def _ranks(raw: dict, steps: list[Step]) -> list[Rank]:
    """The processes of distributed programs (none in a version-1 trace); marks each step's rank."""
    ranks = []
    for entry in raw.get("ranks", []):
        first, last = entry["steps"]
        if not (0 <= first <= last + 1 <= len(steps)):
            raise ValueError(f"rank steps {entry['steps']} outside the trace's {len(steps)} steps")
        for step in steps[first:last + 1]:
            step.rank = entry["rank"]
        ranks.append(Rank(group=entry["group"], rank=entry["rank"], status=entry["status"],
                          message=entry.get("message"), steps=steps[first:last + 1]))
    return ranks


def _solutions(raw: dict, steps: list[Step]) -> list[Solution]:
    """The trace's `with solution():` blocks (none in a version-1 trace)."""
    solutions = []
    for entry in raw.get("solutions", []):
        first_line, last_line = entry["lines"]
        first_step, last_step = entry["steps"]
        if not (0 <= first_step <= last_step + 1 <= len(steps)):
            raise ValueError(f"solution steps {entry['steps']} outside the trace's {len(steps)} steps")
        solutions.append(Solution(file=raw["files"][entry["file"]]["path"], first_line=first_line,
                                  last_line=last_line, steps=steps[first_step:last_step + 1]))
    return solutions


def _expand_steps(raw: dict) -> list[Step]:
    from cs336_lectures.runtime.values import decode

    paths = [file["path"] for file in raw["files"]]
    functions = [(paths[file], name) for file, name, _ in raw["functions"]]
    calls = raw["calls"]
    raw_steps = raw["steps"]
    # The stack above a call is the same for all of its steps: compute it once per call.
    outer_stacks: dict[int, tuple[tuple[str, str, int], ...]] = {}

    def stack_above(call: int) -> tuple[tuple[str, str, int], ...]:
        chain = []  # calls whose outer stack is not known yet, innermost first
        while call not in outer_stacks and calls[call][1] >= 0:
            chain.append(call)
            call = raw_steps[calls[call][1]][0]
        stack = outer_stacks.setdefault(call, ())
        for inner in reversed(chain):
            parent_step = raw_steps[calls[inner][1]]
            stack = outer_stacks[inner] = stack + ((*functions[calls[parent_step[0]][0]], parent_step[1]),)
        return stack

    steps = []
    for index, raw_step in enumerate(raw_steps):
        call, line = raw_step[0], raw_step[1]
        extras = raw_step[2] if len(raw_step) > 2 else {}
        file, function = functions[calls[call][0]]
        steps.append(
            Step(
                index=index,
                file=file,
                line=line,
                function=function,
                stack=[*stack_above(call), (file, function, line)],
                values={name: decode(value) for name, value in extras.get("v", {}).items()},
                cleared=list(extras.get("c", [])),
                renderings=list(extras.get("r", [])),
                stdout=extras.get("o", ""),
                stderr=extras.get("e", ""),
                error=extras.get("x"),
                collectives=[{**record, "values": [(name, decode(before), decode(after))
                                                   for name, before, after in record["values"]]}
                             for record in extras.get("collective", [])],
            )
        )
    return steps
