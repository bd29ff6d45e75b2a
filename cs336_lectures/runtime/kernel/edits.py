"""What an edit to a lecture changed: which top-level functions, and whether anything else did.

The kernel (kernel.py) re-runs a lecture from a checkpoint only when the edit is confined to
top-level functions that it can swap into the running module. This module compares two versions
of the source and says which functions differ, or why the edit cannot be applied that way.

A function counts as changed when its text (decorators and comments included: a comment may carry
a directive) or its position differs: its steps record line numbers, so a function that moved
would be recorded at the wrong lines. Everything outside top-level functions (imports, constants,
classes) ran at import time, untraced; any change there makes the edit unsafe.

It also says which global names a part of the lecture can reach (`Outline.reach`): the names its
code objects load or store (`co_names`), and, for each of those that a top-level statement binds,
the names of the code that statement defines, transitively. The kernel resumes after a section
only when no name the edit touched is within reach of the code that ran before it.

    >>> compare(outline("def f():\\n    return 1\\n"), outline("def f():\\n    return 2\\n")).changed
    frozenset({'f'})
"""

from __future__ import annotations

import ast
import copy
import dis
import inspect
import types
from dataclasses import dataclass, field

from cs336_lectures.runtime.i18n.run_messages import Note, note

ENTRY = "main"  # the function whose calls are the lecture's sections
# Names through which code can reach a top-level definition without naming it: the module's
# namespace (globals(), vars(module), dir(), module.__dict__, a function's __globals__, a frame's
# f_globals, sys.modules, importlib), or code compiled at run time (eval, exec).
REFLECTIVE = frozenset({"globals", "vars", "dir", "eval", "exec", "compile", "__import__", "import_module", "reload",
                        "modules", "__dict__", "__globals__", "f_globals", "getmembers", "_getframe", "currentframe"})
_STORES = frozenset({"STORE_NAME", "STORE_GLOBAL", "DELETE_NAME", "DELETE_GLOBAL"})


@dataclass(frozen=True)
class Uses:
    """The global names a top-level statement's code can load or store (`co_names`)."""

    at_import: frozenset[str]  # by the code that runs when the module is imported
    later: frozenset[str]  # by the functions it defines, whose bodies run only when called
    binds: frozenset[str]  # the module-level names it assigns


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
    uses: Uses = field(compare=False)
    code: types.CodeType | None = field(compare=False)  # compiled from `text` alone (line 1 = `first`)


@dataclass(frozen=True)
class Statement:
    """A module-level statement other than a function definition (import, assignment, class...)."""

    text: str
    first: int
    last: int
    kind: str  # "import", "class CLASSNAME" or "statement"
    uses: Uses = field(compare=False, default=None)


@dataclass(frozen=True)
class Outline:
    functions: dict[str, Definition]
    statements: tuple[Statement, ...]
    duplicates: frozenset[str]  # names defined by more than one top-level def

    def at_import(self) -> frozenset[str]:
        """The names the import itself can load: module-level code, decorators, defaults, class
        bodies (not an `if __name__ == "__main__":` block: a lecture with main() is imported by name)."""
        names: set[str] = set()
        for unit in (*self.functions.values(), *self.statements):
            names |= unit.uses.at_import
        return frozenset(names)

    def reach(self, roots: frozenset[str] | set[str]) -> frozenset[str]:
        """`roots` and every name that code they name can load, transitively: a name bound by a
        top-level def or statement brings in what its functions load (a class: its methods)."""
        binders: dict[str, list[Uses]] = {}
        for unit in (*self.functions.values(), *self.statements):
            for name in unit.uses.binds:
                binders.setdefault(name, []).append(unit.uses)
        reached, pending = set(roots), list(roots)
        while pending:
            for uses in binders.get(pending.pop(), ()):
                for name in uses.later - reached:
                    reached.add(name)
                    pending.append(name)
        return frozenset(reached)

    def entry_names_before(self, line: int) -> frozenset[str]:
        """The names that main()'s code on lines before `line` can load (the sections it called
        before that line included); every name of main() when it cannot be told."""
        entry = self.functions.get(ENTRY)
        if entry is None or entry.code is None:
            return frozenset(entry.uses.later) if entry is not None else frozenset()
        return _names_before(entry.code, line - entry.first + 1)


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
            uses, code = _uses(text, node)
            functions[node.name] = Definition(node.name, text, first, node.end_lineno, node.lineno,
                                              bool(node.decorator_list), signature,
                                              ast.get_docstring(node, clean=False), node, uses, code)
        else:
            kind = ("import" if isinstance(node, (ast.Import, ast.ImportFrom))
                    else f"class {node.name}" if isinstance(node, ast.ClassDef) else "statement")
            statements.append(Statement(text, first, node.end_lineno, kind, _uses(text, node)[0]))
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


_USES: dict[str, tuple[Uses, types.CodeType | None]] = {}  # statement text -> what it uses (text alone decides)


def _uses(text: str, node: ast.stmt) -> tuple[Uses, types.CodeType | None]:
    """The names a top-level statement's code objects load or store, and for a def its function's
    code; compiled once per text (a resumed run's plan recompiles only what changed)."""
    if text not in _USES:
        if _is_main_guard(node):  # never runs when a lecture with main() is traced
            _USES[text] = Uses(frozenset(), frozenset(), frozenset()), None
            return _USES[text]
        try:
            module = compile(ast.Module([_at_line_one(node)], []), "<lecture>", "exec", dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            everything = frozenset(n.id for n in ast.walk(node) if isinstance(n, ast.Name))
            _USES[text] = Uses(everything, everything, everything), None
            return _USES[text]
        now: set[str] = set()
        later: set[str] = set()
        _collect(module, True, now, later)
        binds = frozenset(instruction.argval for instruction in dis.get_instructions(module)
                          if instruction.opname in _STORES)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            now -= binds  # defining a name is not using it
        function = next((constant for constant in module.co_consts if isinstance(constant, types.CodeType)
                         and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                         and constant.co_name == node.name), None)
        _USES[text] = Uses(frozenset(now), frozenset(later), binds), function
    return _USES[text]


def _collect(code: types.CodeType, running: bool, now: set[str], later: set[str]) -> None:
    """co_names of `code` and the code it holds, into `now` while it runs at import, else `later`.
    A class body runs at import, a def's body later; a lambda or comprehension at module level is
    counted as running at import (it may be called right there)."""
    (now if running else later).update(code.co_names)
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            anonymous = constant.co_name.startswith("<")
            class_body = not constant.co_flags & inspect.CO_NEWLOCALS
            _collect(constant, running and (anonymous or class_body), now, later)


def _names_before(code: types.CodeType, line: int) -> frozenset[str]:
    """The names that instructions of `code` on lines before `line` load or store, with every name
    of the code objects (lambdas, comprehensions) those lines create."""
    names: set[str] = set()
    for instruction in dis.get_instructions(code):
        at = instruction.positions.lineno if instruction.positions else None
        if at is None or at >= line:
            continue
        if isinstance(instruction.argval, types.CodeType):
            _collect(instruction.argval, False, names, names)
        elif isinstance(instruction.argval, str) and instruction.argval in code.co_names:
            names.add(instruction.argval)
    return frozenset(names)


def _at_line_one(node: ast.stmt) -> ast.stmt:
    """The statement as if its text started the file: compiled alone, cached by text."""
    first = min([node.lineno, *(decorator.lineno for decorator in getattr(node, "decorator_list", []))])
    return ast.increment_lineno(copy.deepcopy(node), 1 - first)


def _is_main_guard(node: ast.stmt) -> bool:
    """`if __name__ == "__main__":`"""
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
            and len(test.comparators) == 1 and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == "__main__")
