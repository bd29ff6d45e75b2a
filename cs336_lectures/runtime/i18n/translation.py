"""Translation at trace time: every language of a text() rendering, rendered once, carried by the trace.

When `text()` runs under the tracer, the catalogs beside the calling file
(`locales/LANG/STEM.yaml`, see catalog.py) are consulted. A current translation is rendered
to HTML exactly as the English is (markdown, MathML), its headings keeping the English
anchors; a template's fields are filled with the values in the English output (templates.py).
For each language without a current translation the rendering says why (`missing` or `stale`),
so the viewer can show the English with a marker. One trace thus serves every language, and a
static site switches language without a server. A lecture without catalogs costs one `stat`
per language and call.

A figure given to `plot()` is drawn once more per language whose catalog translates one of its
titles, axis labels, annotations or legend entries; a figure with nothing translated is drawn once.
"""

from __future__ import annotations

import types
import warnings
from functools import lru_cache
from typing import Any, Callable, TypeVar

from cs336_lectures.runtime.i18n.catalog import LANGUAGES, CatalogError, Entry, catalog_path, load_catalog
from cs336_lectures.runtime.render.rendering import render_markdown
from cs336_lectures.runtime.i18n.templates import Template, TemplateError
from cs336_lectures.runtime.i18n.translatable import Call, call_at
from cs336_lectures.runtime.terminal_text import print_visible

__all__ = ["translate_figure", "translate_text"]
Drawing = TypeVar("Drawing")
CJK_LANGUAGES = frozenset({"zh"})  # scripts matplotlib's bundled font lacks: their SVG keeps text as text


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
        text, reason = _translated(markdown, call, entries, language)
        if text is None:
            if reason is not None:
                untranslated[language] = reason
            continue
        # A copy of the used anchors: a translation must not change the ids of later English headings.
        html, headings = render_markdown(text, set(anchors), reuse=[heading[2] for heading in english_headings])
        translations[language] = {"html": html, "headings": headings}
    fields: dict[str, Any] = {}
    if translations:
        fields["translations"] = translations
    if untranslated:
        fields["untranslated"] = untranslated
    return fields


def translate_figure(figure: Any, caller: types.FrameType, draw: Callable[[Any], Drawing]) -> dict[str, Drawing]:
    """{language: draw(figure)} with the figure's labels translated, for each language that translates one.

    `draw` makes the SVG (and whatever else it needs while the labels are translated); the
    figure's own texts are put back afterwards.
    """
    catalogs = _catalogs(caller.f_code.co_filename)
    drawings: dict[str, Drawing] = {}
    for language, entries in catalogs.items():
        changes = []  # (setter, English, translation)
        for artist in _figure_texts(figure):
            translated = _translated_label(artist.get_text(), entries, language)
            if translated is not None:
                changes.append((artist.set_text, artist.get_text(), translated))
        for axis in _axes_of(figure):
            formatter = axis.get_major_formatter()
            try:
                english_ticks = formatter.format_ticks(axis.get_majorticklocs())
            except Exception:  # a formatter that cannot label yet: its ticks stay English, the figure is drawn
                continue
            if any(_translated_label(label, entries, language) is not None for label in english_ticks):
                # swapped in place: set_major_formatter would also mark the axis's formatter as chosen by hand
                changes.append((lambda chosen, ticks=axis.major: setattr(ticks, "formatter", chosen), formatter,
                                _translated_ticks(formatter, entries, language)))
        if not changes:
            continue
        try:
            for setter, _, translated in changes:
                setter(translated)
            drawings[language] = _draw_in(language, figure, draw)
        finally:
            for setter, english, _ in changes:
                setter(english)
    return drawings


def _axes_of(figure: Any) -> list[Any]:
    return [axis for axes in figure.get_axes() for axis in (axes.xaxis, axes.yaxis)]


def _translated_ticks(inner: Any, entries: dict[str, Entry], language: str) -> Any:
    """A tick formatter writing `inner`'s labels translated: matplotlib makes tick labels anew at
    every draw, so a translation must live in the formatter, not in the Text artists."""
    from matplotlib.ticker import Formatter

    class TranslatedTicks(Formatter):
        def _translate(self, label: str) -> str:
            return _translated_label(label, entries, language) or label

        def __call__(self, x: float, pos: int | None = None) -> str:
            return self._translate(inner(x, pos))

        def format_ticks(self, values: list[float]) -> list[str]:
            return [self._translate(label) for label in inner.format_ticks(values)]

        def set_locs(self, locs: list[float]) -> None:
            inner.set_locs(locs)

        def get_offset(self) -> str:
            return inner.get_offset()

    return TranslatedTicks()


def _figure_texts(figure: Any) -> list[Any]:
    """The figure's titles, axis labels, annotations and legend entries (matplotlib Text artists) that have text."""
    texts = [getattr(figure, name, None) for name in ("_suptitle", "_supxlabel", "_supylabel")] + list(figure.texts)
    for axes in figure.get_axes():
        texts += [axes.title, axes._left_title, axes._right_title, axes.xaxis.label, axes.yaxis.label, *axes.texts]
        legend = axes.get_legend()
        if legend is not None:
            texts += legend.get_texts()
    return [text for text in texts if text is not None and text.get_text()]


def _translated_label(english: str, entries: dict[str, Entry], language: str) -> str | None:
    """A label's current translation: by its exact English, else by the first template it fits.

    A template's field whose value is itself a translated word (a name a figure function
    loops over, marked `translatable`) is filled with that word's translation; numbers are
    written as `language` writes them, and plural words agree with theirs.
    """
    entry = entries.get(english)
    if entry is not None and not entry.template:
        return entry.translation if entry.current else None
    for entry in entries.values():
        if entry.template and entry.current:
            try:
                template = _parsed(entry.en)
                values = template.values(english)
                if values is not None:
                    words = template.localized(values, language, entry.plurals)
                    for field, value in values.items():
                        word = _translated_word(value, entries)
                        if word != value:  # a translated word, not a number
                            words[field] = word
                    return Template.substitute(entry.translation, words)
            except TemplateError:
                continue
    return None


@lru_cache(maxsize=4096)
def _parsed(template: str) -> Template:
    """Template.parse, once per template: every tick label of every figure is tried against each."""
    return Template.parse(template)


def _translated_word(english: str, entries: dict[str, Entry]) -> str:
    entry = entries.get(english)
    return entry.translation if entry is not None and not entry.template and entry.current else english


def _draw_in(language: str, figure: Any, draw: Callable[[Any], Drawing]) -> Drawing:
    import matplotlib

    # DejaVu Sans has no Chinese glyphs: the SVG then names the font and the browser finds one.
    fonttype = "none" if language in CJK_LANGUAGES else matplotlib.rcParams["svg.fonttype"]
    # A translated label may be longer than the English the layout was made for: grow the canvas.
    with matplotlib.rc_context({"svg.fonttype": fonttype, "savefig.bbox": "tight"}), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Glyph ... missing from font": the browser draws those
        return draw(figure)


def _translated(markdown: str, call: Call | None, entries: dict[str, Entry],
                language: str) -> tuple[str | None, str | None]:
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
        filled = Template.parse(entry.en).fill(entry.translation, markdown, language, entry.plurals)
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
        print_visible(f"cs336-lectures: warning: {error}")
        return {}
