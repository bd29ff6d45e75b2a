"""Translation at trace time: every language of a text() rendering, rendered once, carried by the trace.

When `text()` runs under the tracer, the catalogs beside the calling file
(`locales/LANG/STEM.yaml`, see catalog.py) are consulted. A current translation is rendered
to HTML exactly as the English is (markdown, MathML), its headings keeping the English
anchors; a template's fields are filled with the values in the English output (templates.py).
For each language without a current translation the rendering says why (`missing` or `stale`),
so the viewer can show the English with a marker. One trace thus serves every language, and a
static site switches language without a server. A lecture without catalogs costs one `stat`
per language and call.
"""

from __future__ import annotations

import sys
import types
from functools import lru_cache
from typing import Any

from cs336_lectures.runtime.catalog import LANGUAGES, CatalogError, Entry, catalog_path, load_catalog
from cs336_lectures.runtime.rendering import render_markdown
from cs336_lectures.runtime.templates import Template, TemplateError
from cs336_lectures.runtime.translatable import Call, call_at

__all__ = ["translate_text"]


def translate_text(markdown: str, caller: types.FrameType, english_headings: list[list], anchors: set[str]) -> dict[str, Any]:
    """The rendering fields `translations` and `untranslated` for text(markdown) called from `caller`.

    Empty when the caller's file has no catalogs or the markdown is computed (nothing to translate).
    """
    path = caller.f_code.co_filename
    catalogs = _catalogs(path)
    if not catalogs:
        return {}
    call = _call_of(caller)
    translations: dict[str, dict] = {}
    untranslated: dict[str, str] = {}
    for language, entries in catalogs.items():
        text, reason = _translated(markdown, call, entries)
        if text is None:
            if reason is not None:
                untranslated[language] = reason
            continue
        # A copy of the used anchors: a heading the English lacks must not take a later English id.
        html, headings = render_markdown(text, set(anchors), reuse=[heading[2] for heading in english_headings])
        translations[language] = {"html": html, "headings": headings}
    fields: dict[str, Any] = {}
    if translations:
        fields["translations"] = translations
    if untranslated:
        fields["untranslated"] = untranslated
    return fields


def _translated(markdown: str, call: Call | None, entries: dict[str, Entry]) -> tuple[str | None, str | None]:
    """(the translated markdown, None), or (None, 'missing' | 'stale'), or (None, None) when not translatable."""
    entry = entries.get(markdown)
    if entry is None or entry.template:
        if call is None or call.english is None:
            return None, None
        entry = entries.get(call.english) if call.template else None
        if entry is None:
            return None, "missing"  # written after the catalog was last extracted
    if not entry.current:
        return None, "stale" if entry.stale is not None else "missing"
    if not entry.template:
        return entry.translation, None
    try:
        filled = Template.parse(entry.en).fill(entry.translation, markdown)
    except TemplateError:
        return None, "stale"  # the translator's fields no longer match the English ones
    return (filled, None) if filled is not None else (None, "stale")


def _call_of(caller: types.FrameType) -> Call | None:
    """The text() call `caller` is executing, found by the source span of its current instruction."""
    positions = _positions(caller.f_code)
    index = caller.f_lasti // 2
    if not 0 <= index < len(positions):
        return None
    line, end_line, column, end_column = positions[index]
    if None in (line, end_line, column, end_column):
        return None
    return call_at(caller.f_code.co_filename, (line, column, end_line, end_column))


@lru_cache(maxsize=1024)
def _positions(code: types.CodeType) -> list[tuple]:
    return list(code.co_positions())


def _catalogs(path: str) -> dict[str, dict[str, Entry]]:
    """Each language's entries for the lecture file `path`, by English; re-read when a catalog changes."""
    catalogs = {}
    for language in LANGUAGES:
        catalog_file = catalog_path(path, language)
        try:
            modified = catalog_file.stat().st_mtime_ns
        except OSError:
            continue
        catalogs[language] = _entries(str(catalog_file), modified)
    return catalogs


@lru_cache(maxsize=16)
def _entries(path: str, modified_ns: int) -> dict[str, Entry]:
    try:
        return load_catalog(path).lookup()
    except CatalogError as error:
        # A broken catalog must not stop the lecture: its language falls back to English, said once.
        print(f"cs336-lectures: warning: {error}", file=sys.stderr)
        return {}
