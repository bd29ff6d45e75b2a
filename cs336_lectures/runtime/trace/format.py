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

from cs336_lectures.atomic import write_bytes_atomically

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
    except (KeyError, IndexError, TypeError, ValueError, AttributeError, RecursionError, SyntaxError,
            MemoryError) as error:  # a value that decode() cannot read back
        raise TraceFormatError(f"{path}: malformed trace: a value cannot be decoded: {error!r:.200}") from None
    try:
        solutions = _solutions(raw, steps)
        ranks = _ranks(raw, steps)
    except (KeyError, IndexError, TypeError, ValueError) as error:
        raise TraceFormatError(f"{path}: malformed trace: a solution block or rank: {error!r:.200}") from None
    return Trace(header=raw["header"], files=raw["files"], steps=steps, solutions=solutions, ranks=ranks)


def read_trace_json(path: Path) -> dict:
    """The trace's JSON as written, once its format, version and structure are checked (for readers
    that index the raw steps themselves: the terminal viewer, the notebook export)."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise TraceFormatError(f"{path}: not UTF-8 text: {error}") from None
    raw = decode_json(text, path)
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        found = raw.get("format") if isinstance(raw, dict) else type(raw).__name__
        raise TraceFormatError(f"{path}: not a {FORMAT} file (format {found!r})")
    if raw.get("version") not in READABLE_VERSIONS:
        known = ", ".join(map(str, READABLE_VERSIONS))
        raise TraceFormatError(
            f"{path}: trace version {raw.get('version')!r} is not supported (this reader knows versions {known})"
        )
    try:
        _check_structure(raw)
    except _Malformed as error:
        raise TraceFormatError(f"{path}: malformed trace: {error}") from None
    return raw


def decode_json(text: str, path: Path) -> Any:
    """`text`, the content of the file at `path`, as JSON; TraceFormatError (one line naming the
    file) for anything `json` refuses, including what it raises besides JSONDecodeError: a file
    nested thousands of levels deep (RecursionError) and a number past Python's limit on the digits
    of an int (ValueError)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise TraceFormatError(f"{path}: not valid JSON (truncated?): {error}") from None
    except RecursionError:
        raise TraceFormatError(f"{path}: JSON nested too deeply for a trace") from None
    except ValueError as error:
        raise TraceFormatError(f"{path}: a number in the JSON is too long to read: {str(error).split(':')[0]}") from None


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


class _Malformed(Exception):
    """What is wrong with a trace's structure, in words."""


def _check_structure(raw: dict) -> None:
    """Raise _Malformed unless the fields that load_trace follows are there, with the right types,
    and every index points inside its table; in particular a call's parent step comes before each
    of the call's steps, so following parents always ends (a crafted cycle would loop forever).
    Fields this reader does not follow are left to the schema."""
    header, files = raw.get("header"), raw.get("files")
    functions, calls, steps = raw.get("functions"), raw.get("calls"), raw.get("steps")
    if not isinstance(header, dict):
        raise _Malformed("the header is not an object")
    for name, table in (("files", files), ("functions", functions), ("calls", calls), ("steps", steps)):
        if not isinstance(table, list):
            raise _Malformed(f"{name} is not a list")
    for index, file in enumerate(files):
        if not isinstance(file, dict) or not isinstance(file.get("path"), str):
            raise _Malformed(f"files[{index}] has no path")
    for index, function in enumerate(functions):
        if not (isinstance(function, list) and len(function) == 3 and _is_index(function[0], len(files))
                and isinstance(function[1], str)):
            raise _Malformed(f"functions[{index}] is not [file, name, line] with a known file")
    for index, call in enumerate(calls):
        if not (isinstance(call, list) and len(call) in (2, 3) and _is_index(call[0], len(functions))
                and _is_index(call[1], len(steps), allow=-1) and all(_is_index(item, len(calls)) for item in call[2:])):
            raise _Malformed(f"calls[{index}] is not [function, parent step(, continued call)] with known indices")
    for index, step in enumerate(steps):
        if not (isinstance(step, list) and len(step) in (2, 3) and _is_index(step[0], len(calls))
                and _is_int(step[1])):
            raise _Malformed(f"steps[{index}] is not [call, line(, extras)] with a known call")
        if calls[step[0]][1] >= index:
            raise _Malformed(f"steps[{index}] belongs to call {step[0]}, whose parent step {calls[step[0]][1]} "
                             f"does not come before it")
        if len(step) == 3:
            _check_extras(step[2], index)


_EXTRAS_TYPES = {"v": dict, "c": list, "r": list, "o": str, "e": str, "x": dict}


def _check_extras(extras: Any, index: int) -> None:
    if not isinstance(extras, dict):
        raise _Malformed(f"steps[{index}] has extras that are not an object")
    for key, expected in _EXTRAS_TYPES.items():
        if key in extras and not isinstance(extras[key], expected):
            raise _Malformed(f"steps[{index}].{key} is not a {expected.__name__}")
    if not all(isinstance(name, str) for name in extras.get("c", ())):
        raise _Malformed(f"steps[{index}].c lists something that is not a name")
    if not all(isinstance(rendering, dict) for rendering in extras.get("r", ())):
        raise _Malformed(f"steps[{index}].r holds something that is not a rendering")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_index(value: Any, size: int, allow: int | None = None) -> bool:
    return _is_int(value) and (0 <= value < size or value == allow)


def _expand_steps(raw: dict) -> list[Step]:
    from cs336_lectures.runtime.trace.values import decode

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
