"""Moving through a trace in Python, by the web viewer's rules (viewer/js/trace.js).

The terminal viewer and the notebook export read a raw trace (trace/README.md) through
`TraceModel`, which answers the same questions as the viewer's `Trace` class with the same
rules: which steps are stops (never a step on a `@hide` line, nor a step inside a rendering
statement before its last one), step forward and back, step over and out (a generator's
activations are one frame), a step at a line, the environment of a step, the headings.
tests/runtime/readers/test_navigation.py checks both implementations against the same traces, move by move.

    >>> model = TraceModel(read_trace("var/traces/lecture_01.json"))
    >>> s = model.first_stop(); model.step_over(s, 1)
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cs336_lectures.runtime.trace.format import TraceFormatError, read_trace_json

STOPPING_EXTRAS = ("r", "o", "e", "x")  # a step carrying one of these is always a stop


@dataclass(frozen=True)
class Heading:
    """A markdown heading a step rendered: its level, text, anchor, and the step."""

    level: int
    text: str
    anchor: str
    step: int


def read_trace(path: str | Path) -> dict:
    """The raw JSON of a trace file; TraceFormatError, saying why, for anything unreadable."""
    path = Path(path)
    try:
        return read_trace_json(path)
    except FileNotFoundError:
        raise TraceFormatError(f"{path}: no such trace file") from None
    except OSError as error:
        raise TraceFormatError(f"{path}: cannot read the trace: {error.strerror or error}") from None
    except TraceFormatError:
        hint = _what_it_is_instead(path)
        if hint is None:
            raise
        raise TraceFormatError(f"{path}: {hint}") from None


def _what_it_is_instead(path: Path) -> str | None:
    """What to do with a file given where a trace belongs, for the two files users mistake for
    one (a lecture, and a trace the Stanford course published); None for anything else."""
    from cs336_lectures.runtime.course.importer import course_trace_at  # heavy, and needed only here

    if path.suffix == ".py":
        return f"a lecture, not a trace: trace it first (cs336-lectures trace {path})"
    if course_trace_at(path):
        return f"a trace in the Stanford course's format: convert it first (cs336-lectures import {path} -o DIR)"
    return None


def statement_heads(lines: list[str]) -> list[int]:
    """For each 1-based line, the first line of its statement (index 0 unused), by the viewer's
    scan: a statement goes on while brackets or a triple-quoted string are open, or after a
    trailing backslash. statement_heads(["f(1,", "2)", "g()"]) -> [0, 1, 1, 3]"""
    heads = [0] * (len(lines) + 1)
    depth = 0
    open_string: str | None = None
    continued = False
    head = 1
    for number, line in enumerate(lines, start=1):
        if depth == 0 and open_string is None and not continued:
            head = number
        heads[number] = head
        continued = False
        j = 0
        while j < len(line):
            if open_string is not None:
                end = _closing_quote(line, j, open_string)
                if end < 0:
                    break
                j = end + len(open_string)
                open_string = None
                continue
            char = line[j]
            if char == "#":
                break
            if char in "\"'":
                quote = char * 3 if line.startswith(char * 3, j) else char
                end = _closing_quote(line, j + len(quote), quote)
                if end < 0:
                    if len(quote) == 3:
                        open_string = quote
                    break
                j = end + len(quote)
                continue
            if char in "([{":
                depth += 1
            elif char in ")]}":
                depth = max(0, depth - 1)
            elif char == "\\" and j == len(line) - 1:
                continued = True
            j += 1
    return heads


def _closing_quote(line: str, start: int, quote: str) -> int:
    k = start
    while k < len(line):
        if line[k] == "\\":
            k += 2
            continue
        if line.startswith(quote, k):
            return k
        k += 1
    return -1


class TraceModel:
    """A raw trace with the indexes navigation needs; every method mirrors trace.js's of the same meaning."""

    def __init__(self, raw: dict):
        try:
            self._index(raw)
        except (KeyError, IndexError, TypeError, ValueError) as error:
            raise TraceFormatError(f"malformed trace: {error!r}") from None

    def _index(self, raw: dict) -> None:
        self.header: dict = raw["header"]
        self.files: list[dict] = raw["files"]
        self.functions: list[list] = raw["functions"]
        self.calls: list[list] = raw["calls"]
        self.steps: list[list] = raw["steps"]
        # One entry per highlighted line, as the viewer counts them (a final newline adds none).
        self.lines = [(file["source"].split("\n") + [""] * len(file["html"]))[:len(file["html"])]
                      for file in self.files]
        self.heads = [statement_heads(lines) for lines in self.lines]
        heads = self.heads
        self.hidden = [set(file.get("hidden", ())) for file in self.files]
        hidden = self.hidden
        self.frame_root = []
        for c, call in enumerate(self.calls):
            self.frame_root.append(c if len(call) < 3 else self.frame_root[call[2]])
        self.step_call = [step[0] for step in self.steps]
        self.step_file = [self.functions[self.calls[step[0]][0]][0] for step in self.steps]
        self.step_hidden = [step[1] in hidden[file] for step, file in zip(self.steps, self.step_file)]
        statement = [(file, heads[file][step[1]]) for step, file in zip(self.steps, self.step_file)]
        # Statements (file, first line) that render: the code view shows them as their renderings.
        self.rendering_statements = {statement[s] for s in range(len(self.steps))
                                     if not self.step_hidden[s] and self.extras(s).get("r")}
        renders = self.rendering_statements
        n = len(self.steps)
        self.visible = [False] * n
        for s in range(n):
            if self.step_hidden[s]:
                continue
            passed_over = (s + 1 < n and self.step_call[s + 1] == self.step_call[s]
                           and statement[s + 1] == statement[s] and statement[s] in renders
                           and not self.step_hidden[s + 1]
                           and not any(key in self.extras(s) for key in STOPPING_EXTRAS))
            self.visible[s] = not passed_over
        self.stops = [s for s in range(n) if self.visible[s]]
        self.by_frame: dict[int, list[int]] = {}
        self.by_line: dict[tuple[int, int], list[int]] = {}
        self.renders_by_line: dict[tuple[int, int], list[int]] = {}
        self.headings: list[Heading] = []
        seen: set[tuple] = set()
        for s in self.stops:
            self.by_frame.setdefault(self.frame_root[self.step_call[s]], []).append(s)
            self.by_line.setdefault((self.step_file[s], self.steps[s][1]), []).append(s)
            if self.extras(s).get("r"):
                self.renders_by_line.setdefault((self.step_file[s], self.steps[s][1]), []).append(s)
            for rendering in self.extras(s).get("r", ()):
                for level, text, anchor in (rendering.get("headings") or ()):
                    key = (self.step_file[s], self.steps[s][1], anchor, text)
                    if key not in seen:
                        seen.add(key)
                        self.headings.append(Heading(level, str(text), anchor, s))
        self.call_parent = [-1 if call[1] < 0 else self.step_call[call[1]] for call in self.calls]
        self.updates: dict[int, list[int]] = {}  # frame -> steps writing or clearing its values
        for s in range(n):
            extras = self.extras(s)
            if "v" in extras or "c" in extras:
                self.updates.setdefault(self.frame_root[self.step_call[s]], []).append(s)

    # ---- reading steps

    @property
    def num_steps(self) -> int:
        return len(self.steps)

    def extras(self, s: int) -> dict:
        return self.steps[s][2] if len(self.steps[s]) > 2 else {}

    def line_of(self, s: int) -> int:
        return self.steps[s][1]

    def function_name(self, call: int) -> str:
        return self.functions[self.calls[call][0]][1]

    def stack(self, s: int) -> list[int]:
        """The steps running in each call of s's stack, outermost first (s last)."""
        chain = []
        step = s
        while step >= 0:
            chain.append(step)
            step = self.calls[self.step_call[step]][1]
        return chain[::-1]

    def environment(self, s: int) -> dict[str, tuple[Any, int]]:
        """name -> (encoded value, step that wrote it): the inspected values of s's frame after its line ran."""
        env: dict[str, tuple[Any, int]] = {}
        writes = self.updates.get(self.frame_root[self.step_call[s]], [])
        for t in writes[:bisect.bisect_right(writes, s)]:
            extras = self.extras(t)
            env.update({name: (value, t) for name, value in extras.get("v", {}).items()})
            for name in extras.get("c", ()):
                env.pop(name, None)
        return env

    # ---- moves (each returns a step, or -1 where there is none, as in trace.js)

    def snap(self, s: int) -> int:
        """A stop close to s: s itself, else the next stop, else the previous one; -1 when none."""
        if not self.stops:
            return -1
        if s < 0:
            return self.stops[0]
        if s >= self.num_steps:
            return self.stops[-1]
        i = bisect.bisect_left(self.stops, s)
        return self.stops[i] if i < len(self.stops) else self.stops[-1]

    def next(self, s: int) -> int:
        i = bisect.bisect_right(self.stops, s)
        return self.stops[i] if i < len(self.stops) else -1

    def previous(self, s: int) -> int:
        i = bisect.bisect_left(self.stops, s) - 1
        return self.stops[i] if i >= 0 else -1

    def step_over(self, s: int, direction: int, call: int | None = None) -> int:
        """The nearest stop after (direction 1) or before (-1) s in the frame of `call` or of a caller."""
        best = -1
        c = self.step_call[s] if call is None else call
        while c >= 0:
            frame = self.by_frame.get(self.frame_root[c], [])
            if direction > 0:
                i = bisect.bisect_right(frame, s)
                t = frame[i] if i < len(frame) else -1
            else:
                i = bisect.bisect_left(frame, s) - 1
                t = frame[i] if i >= 0 else -1
            if t >= 0 and (best < 0 or (t < best if direction > 0 else t > best)):
                best = t
            c = self.call_parent[c]
        return best

    def step_out(self, s: int) -> int:
        parent = self.call_parent[self.step_call[s]]
        return -1 if parent < 0 else self.step_over(s, 1, parent)

    def rendering_step(self, file: int, line: int, s: int) -> int:
        """The step whose renderings line (file, line) shows at step s: the latest at or before s
        that rendered on it, else the first in the trace (what lies ahead reads like a document)."""
        items = self.renders_by_line.get((file, line), [])
        if not items:
            return -1
        i = bisect.bisect_right(items, s) - 1
        return items[i] if i >= 0 else items[0]

    def heading_at(self, s: int) -> int:
        """Index into headings of the section s is in, or -1 before the first heading."""
        return bisect.bisect_right([heading.step for heading in self.headings], s) - 1
