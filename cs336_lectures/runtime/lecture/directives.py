"""Directives: the `# @inspect x`, `# @clear x`, `# @stepover`, `# @hide` comments of a lecture.

A directive lives in a comment whose text starts with `@`; several may share one comment
(`# @inspect x y @stepover`). The tracer asks about lines thousands of times, so each file is
parsed once, with the tokenize module (a `#` inside a string is not a comment), into a dict
from line number to a `Directive`. A comment on any physical line of a multi-line statement
applies to every line of that statement, since Python may report any of them as running; one
on a decorator line applies to the decorators and the `def` or `class` line below them too.

    >>> parse_directives("x = 1  # @inspect x\\n")[1].inspect
    (('x', ('x',)),)
"""

from __future__ import annotations

import io
import re
import tokenize
import unicodedata
import warnings
from dataclasses import dataclass
from typing import Iterable

KNOWN = ("inspect", "clear", "stepover", "hide", "measured")


class DirectiveWarning(UserWarning):
    """A comment directive the tracer does not understand (an unknown name, a bad argument)."""


@dataclass(frozen=True, slots=True)
class Directive:
    """What the comments on one line ask of the tracer.

    `inspect` holds (name, attribute path) pairs: `b.attr` -> ("b.attr", ("b", "attr")); the path
    is NFKC-normalized, as Python normalizes identifiers (`ﬁle` names the variable `file`).
    """

    inspect: tuple[tuple[str, tuple[str, ...]], ...] = ()
    clear: tuple[str, ...] = ()
    stepover: bool = False
    hide: bool = False
    measured: bool = False  # its values are measured times: traces may differ there from run to run

    def merged(self, other: Directive) -> Directive:
        """Both sets of requests, e.g. for a statement with comments on two of its lines."""
        return Directive(
            inspect=self.inspect + tuple(item for item in other.inspect if item not in self.inspect),
            clear=self.clear + tuple(name for name in other.clear if name not in self.clear),
            stepover=self.stepover or other.stepover,
            hide=self.hide or other.hide,
            measured=self.measured or other.measured,
        )


def parse_directives(source: str, filename: str = "<lecture>", lenient: bool = False) -> dict[int, Directive]:
    """Map each 1-based line number carrying (or covered by) a directive to its Directive.

    Unknown directives and malformed arguments give a DirectiveWarning naming filename:line.
    `lenient` reads comments the way the Stanford course's lectures write them (see
    `_parse_course_comment`), silently.
    """
    by_line: dict[int, Directive] = {}
    statement_lines: list[int] = []  # physical lines of the logical line being read
    pending: list[Directive] = []  # directives found in the current logical line
    decorators: list[tuple[list[int], Directive]] = []  # decorator lines above the `def` or `class` to come
    is_decorator = False  # whether the logical line being read starts with @

    def add(lines: list[int], directive: Directive) -> None:
        for line in lines:
            by_line[line] = by_line[line].merged(directive) if line in by_line else directive

    def close_statement() -> None:
        # A decorated definition runs its decorator lines and its `def` line as one statement (the
        # name is bound on the last of them): a directive on any of them applies to all, except
        # @hide, which keeps to the lines it is written on.
        parts = [*decorators, (list(statement_lines), _combined(pending))]
        shared = _combined(directive for _, directive in parts)
        for lines, own in parts:
            directive = Directive(shared.inspect, shared.clear, shared.stepover, own.hide, shared.measured)
            if directive != Directive():
                add(lines, directive)
        pending.clear()
        statement_lines.clear()
        decorators.clear()

    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    try:
        for token in tokens:
            kind, start_line, end_line = token.type, token.start[0], token.end[0]
            if kind == tokenize.COMMENT:
                directive = (_parse_course_comment(token.string) if lenient
                             else _parse_comment(token.string, filename, start_line))
                if directive is not None and statement_lines:
                    pending.append(directive)
                elif directive is not None:  # a comment on a line of its own
                    add([start_line], directive)
                continue
            if kind == tokenize.NEWLINE and is_decorator:
                decorators.append((list(statement_lines), _combined(pending)))
                pending.clear()
                statement_lines.clear()
                continue
            if kind in (tokenize.NEWLINE, tokenize.ENDMARKER):
                close_statement()
                continue
            if kind in (tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING):
                continue
            if not statement_lines:
                is_decorator = kind == tokenize.OP and token.string == "@"
            for line in range(start_line, end_line + 1):
                if not statement_lines or statement_lines[-1] < line:
                    statement_lines.append(line)
    except (tokenize.TokenError, SyntaxError):
        close_statement()  # the compiler reports bad syntax better than we could
    return by_line


def _combined(directives: Iterable[Directive]) -> Directive:
    combined = Directive()
    for directive in directives:
        combined = combined.merged(directive)
    return combined


def _parse_comment(comment: str, filename: str, line: int) -> Directive | None:
    text = comment.lstrip("#").strip()
    if not text.startswith("@"):
        return None
    inspect: list[tuple[str, tuple[str, ...]]] = []
    clear: list[str] = []
    flags = {"stepover": False, "hide": False, "measured": False}
    current: str | None = None
    arguments = 0  # words given to the current directive
    for word in text.replace(",", " ").split():
        if word.startswith("@"):
            _check_has_names(current, arguments, filename, line)
            current, arguments = word[1:], 0
            if current not in KNOWN:
                known = ", ".join(f"@{name}" for name in KNOWN)
                _warn(f"unknown directive @{current} (known: {known})", filename, line)
                current = None
            elif current in flags:
                flags[current] = True
            continue
        if current is None:
            continue  # arguments of an unknown directive: already warned about
        arguments += 1
        if current in flags:
            _warn(f"@{current} takes no arguments, ignoring {word!r}", filename, line)
        elif not all(part.isidentifier() for part in word.split(".")):
            _warn(f"@{current} expects names like x or x.attr, ignoring {word!r}", filename, line)
        elif current == "inspect":
            if all(name != word for name, _ in inspect):
                inspect.append((word, tuple(unicodedata.normalize("NFKC", word).split("."))))
        elif word not in clear:
            clear.append(word)
    _check_has_names(current, arguments, filename, line)
    if not (inspect or clear or any(flags.values())):
        return None
    return Directive(tuple(inspect), tuple(clear), flags["stepover"], flags["hide"], flags["measured"])


def _check_has_names(directive: str | None, arguments: int, filename: str, line: int) -> None:
    if directive in ("inspect", "clear") and arguments == 0:
        _warn(f"@{directive} needs the names of variables, like @{directive} x", filename, line)


def _warn(message: str, filename: str, line: int) -> None:
    warnings.warn_explicit(message, DirectiveWarning, filename, line)


# The course's form: `@inspect NAME` (one name each) and `@stepover` anywhere in a comment, after
# prose or repeated (`# 4x8 zeros @inspect x`, `# @inspect x, @inspect y`); other `@` words are prose.
COURSE_DIRECTIVE = re.compile(r"@(?:(inspect|clear)\s+(\w+)|(stepover|hide))\b")


def _parse_course_comment(comment: str) -> Directive | None:
    """A comment of a course lecture, which never warns: an `@` there may be plain prose."""
    inspect: list[tuple[str, tuple[str, ...]]] = []
    clear: list[str] = []
    flags: set[str] = set()
    for match in COURSE_DIRECTIVE.finditer(comment):
        kind, name, flag = match.groups()
        if flag:
            flags.add(flag)
        elif kind == "inspect" and all(known != name for known, _ in inspect):
            inspect.append((name, (unicodedata.normalize("NFKC", name),)))
        elif kind == "clear" and name not in clear:
            clear.append(name)
    if not (inspect or clear or flags):
        return None
    return Directive(tuple(inspect), tuple(clear), "stepover" in flags, "hide" in flags)
