"""Translation catalogs (runtime/i18n/catalog.py) read, checked, updated and written exactly.

Each test pins one rule a translator relies on, with the full message or file text, so that a
changed word, a dropped condition or a reordered key shows up as a failure.
"""

from __future__ import annotations

import textwrap

import pytest

from cs336_lectures.runtime.i18n.catalog import (Catalog, CatalogError, Entry, catalog_languages, catalog_path,
                                                 load_catalog, save_catalog)
from cs336_lectures.runtime.i18n.templates import PluralWord
from cs336_lectures.runtime.i18n.translatable import Call

RUSSIAN_DAYS = PluralWord("days:.0f", {"one": "дня", "few": "дней", "many": "дней", "other": "дня"})


def days_entry(**changes) -> Entry:
    entry = Entry("About {days:.0f} days.", "Около {days:.0f} {days_word}.", template=True,
                  plurals={"days_word": RUSSIAN_DAYS})
    for name, value in changes.items():
        setattr(entry, name, value)
    return entry


def write(tmp_path, text: str):
    path = tmp_path / "lec.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


# --- problems: what `i18n check` reports ---------------------------------------------------------


def test_a_well_formed_plural_entry_has_no_problem_in_its_language():
    assert days_entry().problems("ru") == []
    assert days_entry().problems() == []  # without a language, forms are not checked


def test_a_plural_word_is_checked_against_the_languages_categories():
    assert days_entry().problems("zh") == [
        "plural word {days_word} has forms for few, many, one, not plural categories of Chinese"]
    lacking = days_entry(plurals={"days_word": PluralWord("days:.0f", {"one": "дня", "other": ""})})
    assert lacking.problems("ru") == ["plural word {days_word} lacks its form for few, many, other"]
    assert lacking.problems() == []


def test_a_plural_word_must_be_used_count_an_english_field_and_not_shadow_one():
    entry = Entry("About {days} days.", "Около {days} {days}.", template=True,
                  plurals={"days": PluralWord("n", {"other": "x"}), "unused": PluralWord("days", {"other": "y"})})
    assert entry.problems() == [
        "fields differ: English has {days}, the translation {}",
        "plural word {days} has the name of an English field",
        "plural word {days} counts {n}, which is not a field of the English",
        "plural word {unused} is not used in the translation",
    ]


def test_plural_words_need_a_template():
    entry = Entry("About days.", "Около дней.", plurals={"w": PluralWord("n", {"other": "x"})})
    assert entry.problems("ru") == ["plural words need a template (an f-string) to take their number from"]


def test_an_unwritten_translation_has_no_problem():
    assert Entry("{a} and $x$", "", template=True).problems("ru") == []


def test_fields_headings_and_formulas_are_compared_exactly():
    assert Entry("{a} {b}", "{a} {c}", template=True).problems() == [
        "fields differ: English has {a}, {b}, the translation {a}, {c}"]
    assert Entry("{a} {b}", "{b} {a} {a}", template=True).problems() == []  # order and repetition are free
    assert Entry("# A\n$x$", "## B").problems() == ["headings differ in level or number",
                                                     "the number of formulas ($...$) differs"]
    assert Entry("# A\n## B", "# А\n## Б").problems() == []
    assert Entry("$$x$$ and $y$", "$$x$$ и $y$").problems() == []
    assert Entry("{a}", "{", template=True).problems() == ["the field opened at character 0 of '{' is not closed"]
    assert Entry("{a}", "{", template=False).problems() == []  # not a template: braces are text


def test_current_needs_a_written_fresh_and_live_translation():
    assert Entry("a", "б").current
    assert not Entry("a", "").current
    assert not Entry("a", "б", stale="old").current
    assert not Entry("a", "б", obsolete=True).current


# --- reading a catalog ------------------------------------------------------------------------------


def test_load_reads_every_field(tmp_path):
    path = write(tmp_path, """\
        language: ru
        source: lec.py
        entries:
        - en: About {days:.0f} days.
          template: true
          translation: Около {days:.0f} {days_word}.
          plurals:
            days_word: {count: 'days:.0f', one: дня, few: ~, 5: дней}
          where: intro
        - en: Old
          translation: Старое
          stale: Older
          obsolete: true
        - en: Empty
          translation: ~
        """)
    catalog = load_catalog(path)
    assert catalog == Catalog("ru", "lec.py", [
        Entry("About {days:.0f} days.", "Около {days:.0f} {days_word}.", True, "intro",
              plurals={"days_word": PluralWord("days:.0f", {"one": "дня", "few": "", "5": "дней"})}),
        Entry("Old", "Старое", False, "", "Older", True),
        Entry("Empty", "", False, ""),
    ])


def test_load_accepts_an_empty_list_and_no_source(tmp_path):
    assert load_catalog(write(tmp_path, "language: zh\n")) == Catalog("zh", "", [])


@pytest.mark.parametrize("text, message", [
    ("- a\n", "a catalog is a mapping with language, source and a list of entries"),
    ("language: ru\nentries: {}\n", "a catalog is a mapping with language, source and a list of entries"),
    ("language: fr\nentries: []\n", "language 'fr' is not one of ru, zh"),
    ("entries: []\n", "language None is not one of ru, zh"),
    ("language: ru\nentries:\n- en: a\n- b\n", "entry 2: an entry needs `en`, the English source, as a string"),
    ("language: ru\nentries:\n- en: 3\n", "entry 1: an entry needs `en`, the English source, as a string"),
    ("language: ru\nentries:\n- en: a\n  colour: red\n  b: 1\n", "entry 1: unknown keys b, colour"),
    ("language: ru\nentries:\n- en: a\n  translation: [1]\n", "entry 1: `translation` and `stale` must be strings"),
    ("language: ru\nentries:\n- en: a\n  stale: 3\n", "entry 1: `translation` and `stale` must be strings"),
    ("language: ru\nentries:\n- en: a\n  plurals: [w]\n",
     "entry 1: `plurals` maps each plural word's name to its count and forms"),
    ("language: ru\nentries:\n- en: a\n  plurals: {w: {one: x}}\n",
     "entry 1: plural word 'w' needs `count`, the English field holding its number"),
    ("language: ru\nentries:\n- en: a\n  plurals: {w: {count: 3}}\n",
     "entry 1: plural word 'w' needs `count`, the English field holding its number"),
    ("language: ru\nentries:\n- en: a\n  plurals: {w: x}\n",
     "entry 1: plural word 'w' needs `count`, the English field holding its number"),
])
def test_load_refuses_a_malformed_catalog_in_one_line_naming_the_file(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(CatalogError) as raised:
        load_catalog(path)
    assert str(raised.value) == f"{path}: {message}"


def test_load_names_a_file_that_is_not_yaml(tmp_path):
    path = write(tmp_path, "language: [\n")
    with pytest.raises(CatalogError, match=rf"^{path}: cannot read the catalog: "):
        load_catalog(path)


def test_where_catalogs_live_and_which_exist(tmp_path):
    lecture = tmp_path / "lec.py"
    assert catalog_path(lecture, "ru") == tmp_path / "locales" / "ru" / "lec.yaml"
    assert catalog_languages(lecture) == []
    (tmp_path / "locales" / "zh").mkdir(parents=True)
    (tmp_path / "locales" / "zh" / "lec.yaml").write_text("language: zh\n")
    (tmp_path / "locales" / "ru" / "lec.yaml").mkdir(parents=True)  # a folder is no catalog
    assert catalog_languages(lecture) == ["zh"]
    (tmp_path / "locales" / "ru" / "lec.yaml").rmdir()
    (tmp_path / "locales" / "ru" / "lec.yaml").write_text("language: ru\n")
    assert catalog_languages(str(lecture)) == ["ru", "zh"]  # in LANGUAGES' order


def test_lookup_leaves_obsolete_entries_out():
    catalog = Catalog("ru", "lec.py", [Entry("a", "а"), Entry("b", "б", obsolete=True)])
    assert catalog.lookup() == {"a": Entry("a", "а")}


# --- writing a catalog ------------------------------------------------------------------------------


def test_save_writes_the_file_a_translator_reads(tmp_path):
    long_line = "word " * 40 + "end"
    catalog = Catalog("ru", "lec.py", [
        Entry("About {days:.0f} days.", "Около {days:.0f} {days_word}.", True, "intro",
              plurals={"days_word": PluralWord("days:.0f", {"one": "дня", "other": "дня"})}),
        Entry("Line one\nline two", "", False, "body"),
        Entry(long_line, "Новое", False, "body", stale="Old"),
        Entry("Gone", "Ушло", False, "", obsolete=True),
    ])
    path = tmp_path / "locales" / "ru" / "lec.yaml"  # folders made as needed
    save_catalog(catalog, path)
    assert path.read_text(encoding="utf-8") == (
        "# Russian translation of lec.py, updated by `cs336-lectures i18n extract`.\n"
        "# Fill in `translation`; after an English edit, update it and delete `stale`. Keep {fields} as they are.\n"
        "language: ru\n"
        "source: lec.py\n"
        "entries:\n"
        "- en: About {days:.0f} days.\n"
        "  template: true\n"
        "  translation: Около {days:.0f} {days_word}.\n"
        "  plurals:\n"
        "    days_word:\n"
        "      count: days:.0f\n"
        "      one: дня\n"
        "      other: дня\n"
        "  where: intro\n"
        "- en: |-\n"
        "    Line one\n"
        "    line two\n"
        "  translation: ''\n"
        "  where: body\n"
        f"- en: {long_line}\n"
        "  translation: Новое\n"
        "  stale: Old\n"
        "  where: body\n"
        "- en: Gone\n"
        "  translation: Ушло\n"
        "  obsolete: true\n"
        "  where: ''\n")
    assert load_catalog(path) == catalog
    assert not list(path.parent.glob(".*"))  # written through a temporary file, which is gone


# --- updating a catalog from the lecture -------------------------------------------------------------


def call(english: str | None, where: str = "intro", template: bool = False, line: int = 1) -> Call:
    return Call(english, template, where, line)


def test_update_keeps_known_strings_and_follows_the_lectures_order_and_flags():
    catalog = Catalog("ru", "lec.py", [Entry("b", "б", False, "old_place", obsolete=True), Entry("a", "а")])
    updated = catalog.update([call("a", "intro"), call(None), call("b", "body", template=True), call("a", "later")])
    assert updated == Catalog("ru", "lec.py", [Entry("a", "а", False, "intro"), Entry("b", "б", True, "body")])
    assert catalog.entries[0].obsolete  # the catalog updated is not changed


def test_update_gives_an_edited_string_the_translation_of_the_closest_vanished_one_as_stale():
    catalog = Catalog("ru", "lec.py", [
        Entry("Tokenization turns text into integers.", "Токенизация переводит текст в числа.", where="intro"),
        Entry("Tokenization turns text into floats.", "Токенизация переводит текст в дроби.", where="intro"),
        Entry("Something else entirely, nothing alike.", "", where="intro"),
    ])
    updated = catalog.update([call("Tokenization turns text into integers!", "intro")])
    assert updated.entries == [
        Entry("Tokenization turns text into integers!", "Токенизация переводит текст в числа.", False, "intro",
              stale="Tokenization turns text into integers."),
        Entry("Tokenization turns text into floats.", "Токенизация переводит текст в дроби.", where="intro",
              obsolete=True),
    ]  # the untranslated vanished string is dropped: nothing to keep


def test_update_keeps_the_first_stale_english_through_a_second_edit():
    catalog = Catalog("ru", "lec.py", [Entry("Count the bytes twice", "Посчитайте байты", where="intro",
                                             stale="Count the bytes")])
    (entry,) = catalog.update([call("Count the bytes thrice", "intro")]).entries
    assert (entry.translation, entry.stale) == ("Посчитайте байты", "Count the bytes")


def test_update_takes_no_translation_from_another_function_or_a_dissimilar_string():
    catalog = Catalog("ru", "lec.py", [Entry("Count the bytes", "Посчитайте байты", where="intro")])
    assert catalog.update([call("Count the bytes!", "body")]).entries == [
        Entry("Count the bytes!", "", False, "body"),
        Entry("Count the bytes", "Посчитайте байты", where="intro", obsolete=True)]
    assert catalog.update([call("Something else entirely", "intro")]).entries == [
        Entry("Something else entirely", "", False, "intro"),
        Entry("Count the bytes", "Посчитайте байты", where="intro", obsolete=True)]


def test_update_needs_more_than_half_alike_to_carry_a_translation():
    # "abcd" against "abxy": difflib's ratio is exactly 0.5, which is not enough.
    catalog = Catalog("ru", "lec.py", [Entry("abcd", "абвг", where="f")])
    assert catalog.update([call("abxy", "f")]).entries[0].translation == ""
    assert catalog.update([call("abcx", "f")]).entries[0].translation == "абвг"


def test_update_carries_plural_words_and_adds_every_missing_form_in_cldr_order():
    english = "About {days:.0f} days."
    catalog = Catalog("ru", "lec.py", [
        Entry(english, "Около {days:.0f} {w}.", True, "intro", plurals={"w": PluralWord("days:.0f", {"other": "дня", "one": "дня"})}),
        Entry("Plain", "Просто", where="intro"),
    ])
    updated = catalog.update([call(english + " ", "intro", template=True), call("Plain", "intro")])
    first, plain = updated.entries
    assert first.stale == english and list(first.plurals) == ["w"]
    assert first.plurals["w"] == PluralWord("days:.0f", {"one": "дня", "few": "", "many": "", "other": "дня"})
    assert list(first.plurals["w"].forms) == ["one", "few", "many", "other"]
    assert plain == Entry("Plain", "Просто", where="intro")
    chinese = Catalog("zh", "lec.py", [Entry(english, "约{days:.0f}{w}", True, "intro",
                                             plurals={"w": PluralWord("days:.0f", {"one": "天"})})])
    (entry,) = chinese.update([call(english, "intro", template=True)]).entries
    assert list(entry.plurals["w"].forms) == ["other", "one"]  # forms written stay, even extra ones


def test_a_language_outside_the_catalogs_is_named_by_its_code():
    # `i18n check` can be asked about any language CLDR knows; German has only "one" and "other".
    assert days_entry().problems("de") == ["plural word {days_word} has forms for few, many, not plural categories of de"]


def test_update_gives_a_new_template_string_an_entry_marked_as_a_template():
    (entry,) = Catalog("ru", "lec.py").update([call("{n} bytes", "intro", template=True)]).entries
    assert entry == Entry("{n} bytes", "", True, "intro")
