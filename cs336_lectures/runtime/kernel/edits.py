"""What an edit to a lecture changed: which top-level functions, and whether anything else did.

The kernel (kernel.py) re-runs a lecture from a checkpoint only when the edit is confined to
top-level functions that it can swap into the running module. This module compares two versions
of the source and says which functions differ, or why the edit cannot be applied that way.

A function counts as changed when its text (decorators and comments included: a comment may carry
a directive) or its position differs: its steps record line numbers, so a function that moved
would be recorded at the wrong lines. Everything outside top-level functions (imports, constants,
classes) ran at import time, untraced; any change there makes the edit unsafe.

    >>> compare(outline("def f():\\n    return 1\\n"), outline("def f():\\n    return 2\\n")).changed
    frozenset({'f'})
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from cs336_lectures.runtime.i18n.run_messages import Note, note

ENTRY = "main"  # the function whose calls are the lecture's sections


@dataclass(frozen=True)
class Definition:
    """One top-level `def` of a lecture."""

    name: str
    text: str  # its lines, decorators included
    first: int  # first line (of the first decorator, if any)
    last: int
    line: int  # the line of `def` itself: the code object's co_firstlineno
    decorated: bool
    signature: str  # parameters (defaults, annotations) and return annotation, as an AST dump
    docstring: str | None
    node: ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class Statement:
    """A module-level statement other than a function definition (import, assignment, class...)."""

    text: str
    first: int
    last: int
    kind: str  # "import", "class CLASSNAME" or "statement"


@dataclass(frozen=True)
class Outline:
    functions: dict[str, Definition]
    statements: tuple[Statement, ...]
    duplicates: frozenset[str]  # names defined by more than one top-level def


@dataclass(frozen=True)
class Edit:
    """The top-level functions an edit added, removed or changed; `unsafe` says why it cannot be
    applied to a running lecture (then the whole lecture must run again)."""

    changed: frozenset[str]
    unsafe: Note | None = None


def outline(source: str) -> Outline:
    """The top-level structure of `source`; raises SyntaxError (or ValueError) as `ast.parse` does."""
    tree = ast.parse(source)
    lines = source.splitlines()
    functions: dict[str, Definition] = {}
    statements: list[Statement] = []
    duplicates: set[str] = set()
    for node in tree.body:
        first = min([node.lineno, *(decorator.lineno for decorator in getattr(node, "decorator_list", []))])
        text = "\n".join(lines[first - 1:node.end_lineno])
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name in functions:
                duplicates.add(node.name)
            signature = ast.dump(node.args) + "->" + (ast.dump(node.returns) if node.returns else "")
            functions[node.name] = Definition(node.name, text, first, node.end_lineno, node.lineno,
                                              bool(node.decorator_list), signature,
                                              ast.get_docstring(node, clean=False), node)
        else:
            kind = ("import" if isinstance(node, (ast.Import, ast.ImportFrom))
                    else f"class {node.name}" if isinstance(node, ast.ClassDef) else "statement")
            statements.append(Statement(text, first, node.end_lineno, kind))
    return Outline(functions, tuple(statements), frozenset(duplicates))


def compare(old: Outline, new: Outline) -> Edit:
    """The functions that differ between `old` and `new`, or why the edit is unsafe."""
    reason = _module_level_change(old.statements, new.statements)
    if reason is not None:
        return Edit(frozenset(), reason)
    changed = frozenset(name for name in old.functions.keys() | new.functions.keys()
                        if _position_and_text(old.functions.get(name)) != _position_and_text(new.functions.get(name)))
    for name in sorted(changed):
        before, after = old.functions.get(name), new.functions.get(name)
        if name == ENTRY:
            return Edit(changed, note("{entry}() changed", entry=ENTRY))
        if name in old.duplicates | new.duplicates:
            return Edit(changed, note("`{name}` is defined twice", name=name))
        if any(definition is not None and definition.decorated for definition in (before, after)):
            return Edit(changed, note("`{name}` is decorated (its decorator runs at import)", name=name))
        if before is not None and after is not None and before.signature != after.signature:
            return Edit(changed, note("the parameters of `{name}` changed (defaults are evaluated at import)", name=name))
        if before is None and not _literal_defaults(after.node):
            return Edit(changed, note("the new function `{name}` has defaults that are not literals", name=name))
    return Edit(changed)


def _position_and_text(definition: Definition | None) -> tuple | None:
    return None if definition is None else (definition.first, definition.last, definition.text)


def _module_level_change(old: tuple[Statement, ...], new: tuple[Statement, ...]) -> Note | None:
    for before, after in zip(old, new):
        if before != after:
            return _describe(before, after)
    if len(old) != len(new):
        extra = (old if len(old) > len(new) else new)[min(len(old), len(new))]
        return _describe(extra, extra)
    return None


def _describe(before: Statement, after: Statement) -> Note:
    if "import" in (before.kind, after.kind):
        return note("the imports changed")
    for statement in (after, before):
        if statement.kind.startswith("class "):
            return note("class {name} changed (classes are defined at import)", name=statement.kind.removeprefix("class "))
    return note("module-level code changed (line {line})", line=after.first)


def _literal_defaults(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Defaults a new function can get now that equal what an import would have given it."""
    defaults = [*node.args.defaults, *(default for default in node.args.kw_defaults if default is not None)]
    try:
        for default in defaults:
            ast.literal_eval(default)
    except ValueError:
        return False
    return True
