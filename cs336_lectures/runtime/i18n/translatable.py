"""Which strings of a lecture are translatable, read from its source without running it.

A translatable string is the markdown argument of a `text()` call written as a string literal
(implicit concatenation included) or as an f-string (a template, see templates.py). A call
whose argument is computed (a variable, a join) stays in English: there is no fixed English to
translate. Text shown with `verbatim=True` is exact by definition (sample strings, code) and
is not translated either. The texts a lecture writes into its matplotlib figures are
translatable too, each a literal or f-string: titles and axis labels (`set_title`, `set_xlabel`,
`suptitle`, ...), annotations (`axes.text(x, y, s)`, `axes.annotate(s, ...)`), legend entries
and tick labels (`label=` of a plotting call, the labels list or comprehension given to
`legend` or `set_xticks`), and any string wrapped in `translatable(...)`, the marker for
figure words kept in data (a table of names a figure function loops over).

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

from cs336_lectures.runtime.i18n.templates import template_of

__all__ = ["Call", "Span", "call_at", "scan_file", "scan_source", "translatable"]

Span = tuple[int, int, int, int]  # (line, column, end line, end column) of a call, as Python reports them
FIGURE_LABELS = frozenset({"set_title", "set_xlabel", "set_ylabel", "suptitle", "supxlabel", "supylabel"})
MARKER = "translatable"
# methods taking a list of labels, and the position of that list among their arguments
LABEL_LISTS = {"legend": 1, "set_xticks": 1, "set_yticks": 1, "set_xticklabels": 0, "set_yticklabels": 0}


def translatable(english: str) -> str:
    """Mark a figure's word kept in data as translatable; returns it unchanged.

    `plot()` swaps every figure text whose English a catalog translates; this marker only
    tells `cs336-lectures i18n extract` that the string is one (gettext's `N_`).
    """
    return english


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
        for argument in _figure_strings(node, keywords):
            # keyed by the string's own span: one call (a legend) may hold several
            self._add(argument, argument, label=True)
        if not (isinstance(node.func, ast.Name) and node.func.id == "text"):
            return
        argument = node.args[0] if node.args else keywords.get("markdown")
        verbatim = node.args[1] if len(node.args) > 1 else keywords.get("verbatim")
        if argument is None or (verbatim is not None and not (isinstance(verbatim, ast.Constant) and not verbatim.value)):
            return
        self._add(node, argument, label=False)

    def _add(self, node: ast.expr, argument: ast.expr, label: bool) -> None:
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
        if label and (english is None or not any(character.isalpha() for character in _literal_text(argument))):
            return  # a computed label, or one of numbers and fields only: nothing to translate
        self.calls[span] = Call(english, template and english is not None, where, node.lineno, label)


def _figure_strings(node: ast.Call, keywords: dict[str | None, ast.expr]) -> list[ast.expr]:
    """The literal and f-string arguments of `node` that a figure shows as text."""
    found: list[ast.expr | None] = []
    if isinstance(node.func, ast.Name) and node.func.id == MARKER:
        found.append(node.args[0] if node.args else None)
    elif isinstance(node.func, ast.Attribute):
        method = node.func.attr
        if method in FIGURE_LABELS:
            found.append(node.args[0] if node.args else keywords.get("label", keywords.get("t")))
        elif method == "text":  # Axes.text(x, y, s) and Figure.text(x, y, s)
            found.append(node.args[2] if len(node.args) > 2 else keywords.get("s"))
        elif method == "annotate":
            found.append(node.args[0] if node.args else keywords.get("text"))
        elif method in LABEL_LISTS:  # legend(handles, labels), set_xticks(positions, labels), ...
            position = LABEL_LISTS[method]
            labels = node.args[position] if len(node.args) > position else keywords.get("labels")
            if isinstance(labels, (ast.List, ast.Tuple)):
                found += labels.elts
            elif isinstance(labels, (ast.ListComp, ast.GeneratorExp)):
                found.append(labels.elt)
        found.append(keywords.get("label"))  # a plotting call's legend entry
    return [argument for argument in found if isinstance(argument, (ast.Constant, ast.JoinedStr))]


def _literal_text(argument: ast.expr) -> str:
    """The literal characters of a string or f-string node, fields left out."""
    if isinstance(argument, ast.Constant):
        return str(argument.value)
    return "".join(part.value for part in getattr(argument, "values", []) if isinstance(part, ast.Constant))
