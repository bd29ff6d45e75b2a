"""Which strings of a lecture are translatable, read from its source without running it.

A translatable string is the markdown argument of a `text()` call written as a string literal
(implicit concatenation included) or as an f-string (a template, see templates.py). A call
whose argument is computed (a variable, a join) stays in English: there is no fixed English to
translate. Text shown with `verbatim=True` is exact by definition (sample strings, code) and
is not translated either. The titles and axis labels a lecture gives its matplotlib figures
(`set_title`, `set_xlabel`, `suptitle`, ... with a literal or f-string) are translatable too.

The tracer finds the same calls again while the lecture runs: `call_at` maps the source span
of the call being executed to what was found here, so runtime and catalogs agree on every key.
"""

from __future__ import annotations

import ast
import os
import tokenize
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from cs336_lectures.runtime.templates import template_of

__all__ = ["Call", "Span", "call_at", "scan_file", "scan_source"]

Span = tuple[int, int, int, int]  # (line, column, end line, end column) of a call, as Python reports them
FIGURE_LABELS = frozenset({"set_title", "set_xlabel", "set_ylabel", "suptitle", "supxlabel", "supylabel"})


@dataclass(frozen=True)
class Call:
    """One text() call or figure label: its English (a template when `template`), or None when computed."""

    english: str | None
    template: bool
    where: str  # the enclosing function's qualified name, '<module>' at the top level
    line: int
    label: bool = False  # a figure's title or axis label, not a text() call


def scan_source(source: str, filename: str = "<lecture>") -> dict[Span, Call]:
    """Every text() call of `source`, by span; SyntaxError when it is not Python."""
    finder = _TextCalls()
    finder.visit(ast.parse(source, filename))
    return finder.calls


def scan_file(path: str | os.PathLike) -> dict[Span, Call]:
    """scan_source of a file read as Python reads it (its declared encoding)."""
    with tokenize.open(path) as file:
        return scan_source(file.read(), os.fspath(path))


def call_at(path: str, span: Span) -> Call | None:
    """The text() call of file `path` at `span`, from a scan cached until the file changes."""
    try:
        modified = Path(path).stat().st_mtime_ns
    except OSError:
        return None
    return _cached_scan(path, modified).get(span)


@lru_cache(maxsize=32)
def _cached_scan(path: str, modified_ns: int) -> dict[Span, Call]:
    try:
        return scan_file(path)
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return {}


class _TextCalls(ast.NodeVisitor):
    def __init__(self) -> None:
        self.calls: dict[Span, Call] = {}
        self.scope: list[str] = []

    def _visit_scope(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _visit_scope

    def visit_Call(self, node: ast.Call) -> None:
        self.generic_visit(node)
        keywords = {keyword.arg: keyword.value for keyword in node.keywords}
        if isinstance(node.func, ast.Attribute) and node.func.attr in FIGURE_LABELS:
            argument = node.args[0] if node.args else keywords.get("label", keywords.get("t"))
            if isinstance(argument, (ast.Constant, ast.JoinedStr)):
                self._add(node, argument, label=True)
            return
        if not (isinstance(node.func, ast.Name) and node.func.id == "text"):
            return
        argument = node.args[0] if node.args else keywords.get("markdown")
        verbatim = node.args[1] if len(node.args) > 1 else keywords.get("verbatim")
        if argument is None or (verbatim is not None and not (isinstance(verbatim, ast.Constant) and not verbatim.value)):
            return
        self._add(node, argument, label=False)

    def _add(self, node: ast.Call, argument: ast.expr, label: bool) -> None:
        english, template = None, False
        if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
            english = argument.value
        elif isinstance(argument, ast.JoinedStr):
            english, template = template_of(argument), True
            if english is not None and not any(isinstance(part, ast.FormattedValue) for part in argument.values):
                template = False  # an f-string without fields is a plain string
                english = "".join(part.value for part in argument.values)
        where = ".".join(self.scope) or "<module>"
        span = (node.lineno, node.col_offset, node.end_lineno or node.lineno, node.end_col_offset or 0)
        if label and english is None:
            return  # a computed label: nothing to translate, and not a text() the check should count
        self.calls[span] = Call(english, template and english is not None, where, node.lineno, label)
