"""How a lecture's source becomes notebook cells (the layout the export fills from a trace).

A lecture is functions: `main()` calls one function per section, and a section's statements
alternate `text(...)` with code. A notebook reads best as the reverse, text in markdown cells
between short code cells, so the layout *flattens*: the body of the entry function (`main`, or
the section traced) and of each section it calls are laid out statement by statement at the
top level of the notebook, in the order they run. A statement `text("...")` whose argument is
a literal becomes markdown; other statements become code. A function is flattened only when
that runs exactly as the call did:

- it takes no arguments, has no decorators, and is called once, by a bare `name()` in the
  entry's body, and named nowhere else;
- its own body has no `return`, `yield`, `await`, `global` or `nonlocal`;
- the names it binds shadow no name of the module's top level and no builtin (at the top level
  of a notebook they are globals, seen by every function).

Any other function stays a function: defined in the setup cell, called from a code cell.
The setup cell holds the module's top level (imports, helpers, constants) minus the flattened
functions and any `if __name__ == "__main__":` block, and runs first, as the tracer runs the
module before calling the entry. A file without a `main()` is laid out as its top level.
Inside a function that stays one, a statement with `# @inspect` can be followed by a line that
shows those values (`Layout.setup_showing`), so that its call's cell displays them as it runs.
"""

from __future__ import annotations

import ast
import builtins
import io
import tokenize
from dataclasses import dataclass, field
from typing import Callable

from cs336_lectures.runtime.lecture.directives import parse_directives

MODULE = "<module>"
WHOLE_RUN = ""  # the function of a statement that stands for the whole traced call
FUNCTION_EXITS = (ast.Return, ast.Yield, ast.YieldFrom, ast.Await, ast.Global, ast.Nonlocal)


@dataclass
class Statement:
    """One statement of the lecture, as a notebook shows it."""

    function: str  # whose body it comes from (MODULE for a file laid out as its top level)
    first_line: int  # its lines in the lecture file, decorators included
    last_line: int
    code: str  # dedented, with the comments just above it
    markdown: str | None = None  # the text of a `text("literal")`; None for code
    verbatim: bool = False
    inspected: tuple[str, ...] = ()  # names its `# @inspect` comments ask for


@dataclass(frozen=True)
class InspectedInFunction:
    """A statement with `# @inspect` inside a function that stays a function."""

    first_line: int
    last_line: int
    indent: str  # of its first line: a line added after it goes at the same depth
    inspected: tuple[str, ...]


@dataclass
class Layout:
    setup: str  # code to run first: the module's top level, minus what the statements replace
    statements: list[Statement] = field(default_factory=list)
    flattened: tuple[str, ...] = ()  # functions whose bodies are laid out as statements
    in_functions: list[InspectedInFunction] = field(default_factory=list)
    # the setup with a line after each of those statements: {its first line: that line's code}
    setup_showing: Callable[[dict[int, str]], str] = lambda added: ""


def lay_out(source: str, entry: str) -> Layout:
    """The layout of a lecture traced from `entry` (a function name, or MODULE); SyntaxError for bad source."""
    tree = ast.parse(source)
    reader = _SourceReader(source)
    if entry == MODULE:
        return Layout(setup="", statements=reader.statements(tree.body, MODULE))
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    top_names = _bound_names(tree.body) | set(dir(builtins))
    references = _name_counts(tree)
    main = functions.get(entry)
    if main is None or not _flattenable(main, top_names):
        return _with_setup(reader, tree, [], [reader.call_statement(entry)])
    statements: list[Statement] = []
    flattened = [main]
    # Laid out beside the entry's body, a section must not bind a name of the entry either.
    taken = top_names | _bound_names(_body(main))
    for node in _body(main):
        called = _bare_call(node)
        section = functions.get(called) if called else None
        if section is not None and references.get(called) == 1 and _flattenable(section, taken):
            flattened.append(section)
            statements.extend(reader.statements(_body(section), section.name))
        else:
            statements.extend(reader.statements([node], main.name))
    return _with_setup(reader, tree, flattened, statements)


def _with_setup(reader: _SourceReader, tree: ast.Module, flattened: list[ast.FunctionDef],
                statements: list[Statement]) -> Layout:
    inspected = [found for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and node not in flattened for found in reader.inspected_in(node.body)]
    lines = {found.first_line: found for found in inspected}

    def setup_showing(added: dict[int, str]) -> str:
        return reader.without(tree, flattened, {lines[first].last_line: lines[first].indent + code
                                                for first, code in added.items()})

    return Layout(setup=reader.without(tree, flattened), statements=statements,
                  flattened=tuple(node.name for node in flattened), in_functions=inspected, setup_showing=setup_showing)


def _body(function: ast.FunctionDef) -> list[ast.stmt]:
    """The body without its docstring (which would run as a bare string)."""
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        return body[1:]
    return body


def _bare_call(node: ast.stmt) -> str | None:
    """`name` for a statement `name()`, else None."""
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name) \
            and not node.value.args and not node.value.keywords:
        return node.value.func.id
    return None


def _flattenable(function: ast.FunctionDef, top_names: set[str]) -> bool:
    arguments = function.args
    if function.decorator_list or arguments.posonlyargs or arguments.args or arguments.kwonlyargs \
            or arguments.vararg or arguments.kwarg:
        return False
    if any(isinstance(node, FUNCTION_EXITS) for node in _own_scope(function.body)):
        return False
    return not (_bound_names(function.body) & top_names)


def _own_scope(statements: list[ast.stmt]):
    """Every node of `statements` outside nested functions, classes, lambdas and comprehensions
    (a nested def's name and decorators belong to this scope; its body does not)."""
    stack: list[ast.AST] = list(statements)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stack.extend(node.decorator_list)
        elif isinstance(node, ast.Lambda):
            stack.extend(node.args.defaults)
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            stack.append(node.generators[0].iter)  # evaluated in the enclosing scope
        else:
            stack.extend(ast.iter_child_nodes(node))


def _bound_names(statements: list[ast.stmt]) -> set[str]:
    """Names bound in the scope of `statements` (assignments, loops, imports, defs, with ... as)."""
    names: set[str] = set()
    for node in _own_scope(statements):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            names.add(node.name)
    return names


def _name_counts(tree: ast.Module) -> dict[str, int]:
    counts: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            counts[node.id] = counts.get(node.id, 0) + 1
    return counts


def _literal_text(node: ast.stmt) -> tuple[str, bool] | None:
    """(markdown, verbatim) for a statement `text("literal", ...)` whose other arguments are constants."""
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
        return None
    call = node.value
    if not (isinstance(call.func, ast.Name) and call.func.id == "text" and len(call.args) == 1):
        return None
    if not (isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str)):
        return None
    options = {keyword.arg: keyword.value for keyword in call.keywords}
    if set(options) - {"verbatim", "style"} or not all(_constant(value) for value in options.values()):
        return None
    verbatim = options.get("verbatim")
    return call.args[0].value, bool(verbatim.value) if verbatim is not None else False


def _constant(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) or (isinstance(node, ast.Dict) and all(
        key is not None and _constant(key) and _constant(value) for key, value in zip(node.keys, node.values)))


class _SourceReader:
    """Cuts statements out of the lecture's text, keeping their comments and string contents."""

    def __init__(self, source: str):
        self.lines = source.splitlines()
        self.directives = parse_directives(source)
        self.string_lines = set()  # lines inside a multi-line string: never re-indented
        try:
            for token in tokenize.generate_tokens(io.StringIO(source).readline):
                if token.start[0] < token.end[0] and token.type != tokenize.NEWLINE:
                    self.string_lines.update(range(token.start[0] + 1, token.end[0] + 1))
        except (tokenize.TokenError, SyntaxError):  # ast.parse accepted it; only the extras are lost
            pass

    def statements(self, body: list[ast.stmt], function: str) -> list[Statement]:
        result = []
        previous_end = None
        for node in body:
            first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
            start = self._comments_start(previous_end or 0, first)
            statement = Statement(function=function, first_line=first, last_line=node.end_lineno,
                                  code=self._dedented(start, node.end_lineno, node.col_offset))
            text = _literal_text(node)
            names: list[str] = []
            for line in range(first, node.end_lineno + 1):
                for name, _ in getattr(self.directives.get(line), "inspect", ()):
                    if name not in names:
                        names.append(name)
            if text is not None and not names:
                statement.markdown, statement.verbatim = text
            deleted = _deleted_at_end(node)
            statement.inspected = tuple(name for name in names if name not in deleted)
            result.append(statement)
            previous_end = node.end_lineno
        return result

    def inspected_in(self, body: list[ast.stmt]) -> list[InspectedInFunction]:
        """The statements of a function's body (at any depth) that a line showing their inspected
        values can follow: simple ones that end alone on their line and do not leave the function."""
        found = []
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found += self.inspected_in(node.body)
            elif isinstance(node, ast.ClassDef):
                continue
            elif any(isinstance(child, ast.stmt) for child in ast.iter_child_nodes(node)):  # a compound statement
                for child in ast.iter_child_nodes(node):
                    if isinstance(child, ast.stmt):
                        found += self.inspected_in([child])
                    elif isinstance(child, (ast.excepthandler, ast.match_case)):
                        found += self.inspected_in(child.body)
            elif not isinstance(node, (ast.Return, ast.Raise, ast.Break, ast.Continue, ast.Global, ast.Nonlocal)):
                line = self.lines[node.lineno - 1]
                before = line.encode()[:node.col_offset].decode()  # ast's offsets count UTF-8 bytes
                after = self.lines[node.end_lineno - 1].encode()[node.end_col_offset:].decode()
                alone = not before.strip() and not after.split("#")[0].strip()
                names: list[str] = []
                for number in range(node.lineno, node.end_lineno + 1):
                    for name, _ in getattr(self.directives.get(number), "inspect", ()):
                        if name not in names and name not in _deleted_at_end(node):
                            names.append(name)
                if names and alone:
                    found.append(InspectedInFunction(node.lineno, node.end_lineno, before, tuple(names)))
        return found

    def call_statement(self, function: str) -> Statement:
        """A code statement calling `function` (an entry that cannot be flattened)."""
        return Statement(function=WHOLE_RUN, first_line=0, last_line=0, code=f"{function}()")

    def without(self, tree: ast.Module, removed: list[ast.FunctionDef], after: dict[int, str] | None = None) -> str:
        """The module's text minus `removed` (with the comments above each: a section's banner
        goes with the section) and `if __name__ == "__main__":` blocks; `after` adds a line after
        a line: {line number: code}."""
        drop: set[int] = set()
        for node in tree.body:
            if node in removed or _is_main_guard(node):
                first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
                first = self._comments_start(0, first, across_blank_lines=True)
                drop.update(range(first, node.end_lineno + 1))
        kept = []
        for number, line in enumerate(self.lines, start=1):
            if number not in drop:
                kept.append(line)
                if after and number in after:
                    kept.append(after[number])
        text = "\n".join(kept).strip("\n")
        while "\n\n\n\n" in text:
            text = text.replace("\n\n\n\n", "\n\n\n")
        return text

    def _comments_start(self, after: int, first: int, across_blank_lines: bool = False) -> int:
        """The first line of the comment block above line `first`, no blank line between (or,
        `across_blank_lines`, the comments and blank lines back to the code above)."""
        start = first
        while start - 1 > after:
            above = self.lines[start - 2].strip()
            if not (above.startswith("#") or (across_blank_lines and not above)):
                break
            start -= 1
        while across_blank_lines and start < first and not self.lines[start - 1].strip():
            start += 1
        return start

    def _dedented(self, start: int, end: int, indent: int) -> str:
        out = []
        for number in range(start, end + 1):
            line = self.lines[number - 1]
            if number not in self.string_lines and line[:indent].strip() == "":
                line = line[indent:]
            out.append(line)
        return "\n".join(out).strip("\n")


def _deleted_at_end(node: ast.stmt) -> set[str]:
    """Names whose last binding in `node`, in source order, is a `del`: after its cell runs they
    do not exist, so the cell cannot end by showing them (`show_values` would raise NameError)."""
    last: dict[str, tuple[int, int, bool]] = {}
    for name in ast.walk(node):
        if isinstance(name, ast.Name) and isinstance(name.ctx, (ast.Store, ast.Del)):
            position = (name.lineno, name.col_offset)
            if name.id not in last or position > last[name.id][:2]:
                last[name.id] = (*position, isinstance(name.ctx, ast.Del))
    return {name for name, (_, _, is_deletion) in last.items() if is_deletion}


def _is_main_guard(node: ast.stmt) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
            and len(test.comparators) == 1 and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == "__main__")
