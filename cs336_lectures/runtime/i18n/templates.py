"""Translatable f-strings: the template an f-string's source stands for, and how a translation is filled.

A lecture writes ``text(f"{n} bytes in {k} tokens")``. Its catalog entry is the *template*:
the f-string's literal text with each replacement field written as in the source, expression,
conversion and format spec included (``{len(data):,}``), and literal braces doubled as in an
f-string. A translator moves the fields around but keeps them as they are.

At trace time the f-string has already been evaluated, and evaluating its fields again could
repeat side effects. So the values are recovered from the English text itself: the template's
literal pieces, in order, cut the English output into the fields' formatted values (numbers
formatted as the lecture asked), and those same strings are put into the translation.

    >>> template = Template.parse("{n} bytes in {k} tokens")
    >>> template.fill("{k} токенов из {n} байт", "12 bytes in 3 tokens")
    '3 токенов из 12 байт'
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

__all__ = ["Template", "TemplateError", "template_of"]


class TemplateError(ValueError):
    """A template or a translation that is not well formed (an unclosed brace, an unknown field)."""


@dataclass(frozen=True)
class Template:
    """A template cut into literal pieces and fields: literals[0] field[0] literals[1] ... literals[-1]."""

    literals: tuple[str, ...]
    fields: tuple[str, ...]

    @classmethod
    def parse(cls, template: str) -> Template:
        """Read template text: `{field}` is a field (nested brackets allowed), `{{` and `}}` are braces."""
        literals, fields, piece, index = [], [], [], 0
        while index < len(template):
            char = template[index]
            if char in "{}" and template[index + 1:index + 2] == char:
                piece.append(char)
                index += 2
            elif char == "}":
                raise TemplateError(f"a single '}}' at character {index} of {template!r} (write '}}}}' for a brace)")
            elif char == "{":
                end = _field_end(template, index)
                field = template[index + 1:end].strip()
                if not field:
                    raise TemplateError(f"an empty field '{{}}' at character {index} of {template!r}")
                literals.append("".join(piece))
                fields.append(field)
                piece = []
                index = end + 1
            else:
                piece.append(char)
                index += 1
        literals.append("".join(piece))
        return cls(tuple(literals), tuple(fields))

    def values(self, english: str) -> dict[str, str] | None:
        """The formatted value of each field in `english` (this template's output), or None if it does not fit.

        Each field takes the shortest text that lets the rest fit, so a value containing the
        literal text that follows its field is cut short; lectures avoid such templates.
        """
        pattern = "".join(
            re.escape(literal) + ("(.*?)" if index < len(self.fields) else "")
            for index, literal in enumerate(self.literals)
        )
        match = re.fullmatch(pattern, english, re.DOTALL)
        if match is None:
            return None
        values: dict[str, str] = {}
        for field, value in zip(self.fields, match.groups()):
            values.setdefault(field, value)
        return values

    def fill(self, translation: str, english: str) -> str | None:
        """`translation` (a template with the same fields) filled with the values found in `english`."""
        values = self.values(english)
        return None if values is None else self.substitute(translation, values)

    @staticmethod
    def substitute(translation: str, values: dict[str, str]) -> str:
        """`translation` (a template) with each field replaced by its value in `values`."""
        target = Template.parse(translation)
        unknown = set(target.fields) - set(values)
        if unknown:
            raise TemplateError(f"the translation has fields the English lacks: {', '.join(sorted(unknown))}")
        parts = [target.literals[0]]
        for field, literal in zip(target.fields, target.literals[1:]):
            parts += [values[field], literal]
        return "".join(parts)


def _field_end(template: str, start: int) -> int:
    """The index of the '}' closing the field opened at `start`, counting nested brackets."""
    depth = 0
    for index in range(start, len(template)):
        char = template[index]
        if char in "{[(":
            depth += 1
        elif char in "}])":
            depth -= 1
            if depth == 0:
                if char != "}":
                    break
                return index
    raise TemplateError(f"the field opened at character {start} of {template!r} is not closed")


def template_of(node: ast.JoinedStr) -> str | None:
    """The template text of an f-string, or None when a format spec is itself computed (`{x:{width}}`)."""
    parts = []
    for value in node.values:
        if isinstance(value, ast.Constant):
            parts.append(str(value.value).replace("{", "{{").replace("}", "}}"))
            continue
        assert isinstance(value, ast.FormattedValue)
        field = ast.unparse(value.value)
        if value.conversion != -1:
            field += "!" + chr(value.conversion)
        if value.format_spec is not None:
            spec = value.format_spec
            if not all(isinstance(piece, ast.Constant) for piece in spec.values):
                return None
            field += ":" + "".join(str(piece.value) for piece in spec.values)
        parts.append("{" + field + "}")
    return "".join(parts)
