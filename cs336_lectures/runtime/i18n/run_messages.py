"""What the server says about a run, kept as a template and its fields so that the viewer can
say it in the reader's language.

    >>> str(Note("re-ran `{section}` ({seconds} s)", {"section": "bpe", "seconds": "0.21"}))
    're-ran `bpe` (0.21 s)'

str() gives the English. A field may itself be a Note (a reason inside a run line), and a
count is a Note whose template has the English plural already chosen (`count_of`); the
viewer's catalog (viewer/js/i18n.js) is keyed by template and picks its own plural form from
the `count` field. A template names its fields in braces and has no other braces.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Union

Field = Union[str, int, float, "Note"]


@dataclass(frozen=True)
class Note:
    template: str
    fields: dict[str, Field] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.template.format_map({name: str(value) for name, value in self.fields.items()})

    def to_json(self) -> dict:
        """{"template": ..., "fields": {...}}, fields that are notes nested the same way."""
        return {"template": self.template,
                "fields": {name: value.to_json() if isinstance(value, Note) else value
                           for name, value in self.fields.items()}}

    @classmethod
    def from_json(cls, data: dict) -> Note:
        """The note `to_json` gave."""
        fields = {name: cls.from_json(value) if isinstance(value, dict) else value
                  for name, value in data.get("fields", {}).items()}
        return cls(str(data["template"]), fields)


def note(template: str, **fields: Field) -> Note:
    """note("`{name}` is defined twice", name="bpe")"""
    return Note(template, fields)


def count_of(count: int, one: str, many: str) -> Note:
    """count_of(3, "section", "sections") -> "3 sections", translatable with the right plural."""
    return Note(f"{{count}} {one if count == 1 else many}", {"count": count})


def maybe_note(data: Any) -> Note | None:
    """Note.from_json for a value that may be absent."""
    return None if data is None else Note.from_json(data)
