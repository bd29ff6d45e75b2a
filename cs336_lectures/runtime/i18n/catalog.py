"""Translation catalogs: one YAML file per lecture and language, beside the lecture.

`lectures/lecture_01.py` is translated into Russian by `lectures/locales/ru/lecture_01.yaml`:

    language: ru
    source: lecture_01.py
    entries:
    - en: '## Why this course exists'
      translation: '## Зачем нужен этот курс'
      where: why_this_course
    - en: '{n} bytes in {k} tokens'
      template: true
      translation: '{n} байт в {k} токенах'
      where: compression
    - en: Tokenization turns text into integers.
      translation: Токенизация переводит строки в целые числа.
      stale: Tokenization turns strings into integers.
      where: tokenization_intro

An entry's key is its English source (`en`), exactly as the lecture writes it; a template's
fields are the f-string's (templates.py). `translation` is empty until a translator fills it.
`stale` holds the English the translation was made from, when the lecture has changed it
since; the translation is kept for reference and the viewer shows English until a translator
updates it and deletes `stale`. `obsolete: true` marks an entry whose English the lecture no
longer has. `where` (the enclosing function) is context for the translator.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable

from cs336_lectures.atomic import write_bytes_atomically
from cs336_lectures.runtime.i18n.templates import Template, TemplateError
from cs336_lectures.runtime.i18n.translatable import Call

__all__ = ["LANGUAGES", "Catalog", "CatalogError", "Entry", "catalog_languages", "catalog_path", "load_catalog",
           "save_catalog"]

LANGUAGES = {"ru": "Russian", "zh": "Chinese"}  # the languages catalogs may be written in, besides English
LOCALES = "locales"
SIMILAR_ENOUGH = 0.5  # difflib ratio above which an edited English string keeps its old translation as stale
MATH = re.compile(r"\$\$.+?\$\$|\$[^$\s][^$]*?\$", re.DOTALL)
HEADING = re.compile(r"^(#{1,6})\s", re.MULTILINE)


class CatalogError(ValueError):
    """A catalog file that cannot be read as one (the message names the file)."""


@dataclass
class Entry:
    en: str
    translation: str = ""
    template: bool = False
    where: str = ""
    stale: str | None = None  # the English the translation was made from, when that changed
    obsolete: bool = False

    @property
    def current(self) -> bool:
        """True when the translation can be shown: written, and made from today's English."""
        return bool(self.translation) and self.stale is None and not self.obsolete

    def problems(self) -> list[str]:
        """Why a written translation does not fit its English: fields, headings or math differ."""
        if not self.translation:
            return []
        found = []
        if self.template:
            try:
                english, translated = Template.parse(self.en).fields, Template.parse(self.translation).fields
            except TemplateError as error:
                return [str(error)]
            if sorted(set(english)) != sorted(set(translated)):
                found.append(f"fields differ: English has {{{'}, {'.join(english)}}}, the translation "
                             f"{{{'}, {'.join(translated)}}}")
        if HEADING.findall(self.en) != HEADING.findall(self.translation):
            found.append("headings differ in level or number")
        if len(MATH.findall(self.en)) != len(MATH.findall(self.translation)):
            found.append("the number of formulas ($...$) differs")
        return found


@dataclass
class Catalog:
    language: str
    source: str  # the lecture's file name
    entries: list[Entry] = field(default_factory=list)

    def lookup(self) -> dict[str, Entry]:
        """Entries by English, obsolete ones left out."""
        return {entry.en: entry for entry in self.entries if not entry.obsolete}

    def update(self, calls: Iterable[Call]) -> Catalog:
        """The catalog for a lecture whose translatable calls are now `calls`, in source order.

        An English string already present keeps its entry. A new string takes over the
        translation of a vanished string from the same function when the two are similar
        (an edit), marked stale; otherwise it gets an empty entry. Vanished strings stay,
        marked obsolete, so no translation is ever lost.
        """
        known = {entry.en: entry for entry in self.entries}
        wanted: dict[str, Call] = {}
        for call in calls:
            if call.english is not None:
                wanted.setdefault(call.english, call)
        vanished = [entry for english, entry in known.items() if english not in wanted and entry.translation]
        entries = []
        for english, call in wanted.items():
            entry = known.get(english)
            if entry is not None:
                entries.append(replace(entry, template=call.template, where=call.where, obsolete=False))
                continue
            previous = _closest(english, [old for old in vanished if old.where == call.where])
            if previous is None:
                entries.append(Entry(en=english, template=call.template, where=call.where))
            else:
                vanished.remove(previous)
                stale = previous.stale if previous.stale is not None else previous.en
                entries.append(Entry(english, previous.translation, call.template, call.where, stale))
        entries += [replace(entry, obsolete=True) for entry in vanished]
        return Catalog(self.language, self.source, entries)


def _closest(english: str, candidates: list[Entry]) -> Entry | None:
    best, best_ratio = None, SIMILAR_ENOUGH
    for candidate in candidates:
        ratio = difflib.SequenceMatcher(None, candidate.en, english, autojunk=False).ratio()
        if ratio > best_ratio:
            best, best_ratio = candidate, ratio
    return best


def catalog_path(lecture: str | Path, language: str) -> Path:
    """Where the `language` catalog of `lecture` lives: LECTURE_DIR/locales/LANG/STEM.yaml."""
    lecture = Path(lecture)
    return lecture.parent / LOCALES / language / f"{lecture.stem}.yaml"


def catalog_languages(lecture: str | Path) -> list[str]:
    """The languages, in LANGUAGES order, that have a catalog for `lecture`."""
    return [language for language in LANGUAGES if catalog_path(lecture, language).is_file()]


def load_catalog(path: str | Path) -> Catalog:
    """Read a catalog file; CatalogError with the file's name when it is not a well-formed one."""
    import yaml

    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise CatalogError(f"{path}: cannot read the catalog: {_one_line(error)}") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("entries", []), list):
        raise CatalogError(f"{path}: a catalog is a mapping with language, source and a list of entries")
    language = raw.get("language")
    if language not in LANGUAGES:
        raise CatalogError(f"{path}: language {language!r} is not one of {', '.join(LANGUAGES)}")
    entries = []
    for number, item in enumerate(raw.get("entries") or [], 1):
        try:
            entries.append(_entry(item))
        except (TypeError, ValueError) as error:
            raise CatalogError(f"{path}: entry {number}: {error}") from None
    return Catalog(language, str(raw.get("source", "")), entries)


def _entry(item: Any) -> Entry:
    if not isinstance(item, dict) or not isinstance(item.get("en"), str):
        raise ValueError("an entry needs `en`, the English source, as a string")
    unknown = set(item) - {"en", "translation", "template", "where", "stale", "obsolete"}
    if unknown:
        raise ValueError(f"unknown keys {', '.join(sorted(map(str, unknown)))}")
    translation = item.get("translation") or ""
    stale = item.get("stale")
    if not isinstance(translation, str) or not (stale is None or isinstance(stale, str)):
        raise ValueError("`translation` and `stale` must be strings")
    return Entry(item["en"], translation, bool(item.get("template", False)), str(item.get("where") or ""),
                 stale, bool(item.get("obsolete", False)))


def save_catalog(catalog: Catalog, path: str | Path) -> None:
    """Write the catalog atomically, multi-line text as YAML blocks so that translators read it as written."""
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    def represent_text(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
        return dumper.represent_scalar("tag:yaml.org,2002:str", text, style="|" if "\n" in text else None)

    Dumper.add_representer(str, represent_text)
    document = {
        "language": catalog.language,
        "source": catalog.source,
        "entries": [_item(entry) for entry in catalog.entries],
    }
    header = (f"# {LANGUAGES[catalog.language]} translation of {catalog.source}, updated by "
              f"`cs336-lectures i18n extract`.\n# Fill in `translation`; after an English edit, update it and "
              f"delete `stale`. Keep {{fields}} as they are.\n")
    body = yaml.dump(document, Dumper=Dumper, allow_unicode=True, sort_keys=False, width=1_000_000)  # one line per paragraph
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    write_bytes_atomically(Path(path), (header + body).encode("utf-8"))


def _item(entry: Entry) -> dict[str, Any]:
    item: dict[str, Any] = {"en": entry.en}
    if entry.template:
        item["template"] = True
    item["translation"] = entry.translation
    if entry.stale is not None:
        item["stale"] = entry.stale
    if entry.obsolete:
        item["obsolete"] = True
    item["where"] = entry.where
    return item


def _one_line(error: Exception) -> str:
    return " ".join(str(error).split())
