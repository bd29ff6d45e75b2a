"""Our functions, calls and steps, rebuilt from the whole stack a course trace repeats in every step.

The rebuilder keeps the stack of activations of the previous step: a frame continues an
activation when every frame above it did and its caller is still on the line that made the
call; a frame at its function's first line (the course records a `call` event there) always
starts a new call. A caller line the course skipped gets a bare step, so that every call has
a parent step. Values go through our encoder, written only when they changed within their call.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cs336_lectures.runtime.course.files import TraceFiles
from cs336_lectures.runtime.trace.values import ValueEncoder

Stack = list[tuple[str, str, int]]  # (path, function name, line) of each frame, outermost first
_ABSENT = object()


@dataclass
class _Frame:
    """One activation on the rebuilder's stack."""

    key: tuple[str, str]  # (path, function name)
    call: int
    line: int
    last_step: int | None  # our step that last ran in this activation
    values: dict[str, Any] = field(default_factory=dict)  # name -> last encoded value written


class CallStackRebuilder:
    """Turns the course's steps, one after the other, into our functions, calls and steps."""

    def __init__(self, files: TraceFiles, convert_renderings: Callable[[list], list[dict]]):
        self.files = files
        self.convert_renderings = convert_renderings
        self.encoder = ValueEncoder()
        self.first_lines: dict[str, dict[str, list[tuple[int, int]]]] = {}  # path -> name -> (first, last)
        self.functions: list[list] = []
        self.function_ids: dict[tuple[int, str, int], int] = {}
        self.calls: list[list] = []
        self.steps: list[list] = []
        self.active: list[_Frame] = []  # the previous step's activations, outermost first

    def add_step(self, step: dict, stack: Stack) -> None:
        """Append the step (and the calls it enters)."""
        active = self.active
        depth = 0
        while depth < len(stack) and depth < len(active) and self._continues(stack, depth, active):
            depth += 1
        active = self.active = active[:depth]
        for level in range(depth, len(stack)):
            path, name, line = stack[level]
            parent_step = self._caller_step(active[level - 1], stack[level - 1][2]) if level else -1
            call = len(self.calls)
            self.calls.append([self._function(path, name, line), parent_step])
            active.append(_Frame((path, name), call, line, None))
        innermost = active[-1]
        innermost.line = stack[-1][2]
        innermost.last_step = len(self.steps)
        our_step: list = [innermost.call, innermost.line]
        extras = self._extras(step, innermost)
        if extras:
            our_step.append(extras)
        self.steps.append(our_step)

    def _continues(self, stack: Stack, level: int, active: list[_Frame]) -> bool:
        path, name, line = stack[level]
        frame = active[level]
        if frame.key != (path, name):
            return False
        if level > 0 and stack[level - 1][2] != active[level - 1].line:
            return False  # the caller moved on: this is another call of the same function
        is_innermost = level == len(stack) - 1
        return not (is_innermost and line == self._first_line(path, name, line))

    def _caller_step(self, caller: _Frame, line: int) -> int:
        """Our step, in the caller, on the line that made a call: the caller's own step when the
        course recorded one there, else a bare step for it (the course may skip such lines)."""
        if caller.last_step is None or caller.line != line:
            caller.line = line
            caller.last_step = len(self.steps)
            self.steps.append([caller.call, line])
        return caller.last_step

    def _function(self, path: str, name: str, line: int) -> int:
        file = self.files.index(path)
        key = (file, name, self._first_line(path, name, line))
        function = self.function_ids.get(key)
        if function is None:
            function = self.function_ids[key] = len(self.functions)
            self.functions.append(list(key))
        return function

    def _first_line(self, path: str, name: str, line: int) -> int:
        """The line where the definition of `name` enclosing `line` starts (its first decorator);
        `line` itself when the source has no such definition (a comprehension, a missing file)."""
        if name == "<module>":
            return 1
        spans = self.first_lines.get(path)
        if spans is None:
            spans = self.first_lines[path] = _definition_spans(self.files.source(path))
        enclosing = [first for first, last in spans.get(name, ()) if first <= line <= last]
        return max(enclosing) if enclosing else line

    def _extras(self, step: dict, frame: _Frame) -> dict:
        """What the step carries besides its place: changed values, renderings, output."""
        extras: dict[str, Any] = {}
        values = {}
        for name, value in (step.get("env") or {}).items():
            encoded = self.encoder.encode(value)
            if frame.values.get(name, _ABSENT) != encoded:
                frame.values[name] = values[name] = encoded
        if values:
            extras["v"] = values
        renderings = self.convert_renderings(step.get("renderings") or [])
        if renderings:
            extras["r"] = renderings
        if step.get("stdout"):
            extras["o"] = step["stdout"]
        if step.get("stderr"):
            extras["e"] = step["stderr"]
        return extras


def _definition_spans(source: str) -> dict[str, list[tuple[int, int]]]:
    """For each function or class name: the (first line, last line) of each of its definitions,
    the first line being that of its first decorator, as Python reports for a call."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    spans: dict[str, list[tuple[int, int]]] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
            spans.setdefault(node.name, []).append((first, node.end_lineno or node.lineno))
    return spans
