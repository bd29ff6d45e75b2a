"""Numbers and plural words in translations: CLDR's forms for Russian and Chinese, in templates and catalogs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cs336_lectures.runtime.i18n.catalog import Catalog, Entry, load_catalog, save_catalog
from cs336_lectures.runtime.i18n.locale_numbers import localized_number, plural_categories, plural_category
from cs336_lectures.runtime.i18n.templates import PluralWord, Template, TemplateError
from cs336_lectures.runtime.i18n.translatable import scan_source

NNBSP = "\u202f"  # narrow no-break space: Russian digit groups
DAYS = PluralWord("days:.0f", {"one": "дня", "few": "дней", "many": "дней", "other": "дня"})  # "около N дня/дней"
SECONDS = PluralWord("seconds:,", {"one": "секунда", "few": "секунды", "many": "секунд", "other": "секунды"})
TOKENS = PluralWord("n", {"one": "токен", "few": "токена", "many": "токенов", "other": "токена"})


@pytest.mark.parametrize("english, russian, category", [
    ("1", "1", "one"),
    ("2", "2", "few"),
    ("5", "5", "many"),
    ("11", "11", "many"),
    ("21", "21", "one"),
    ("22", "22", "few"),
    ("144", "144", "few"),
    ("1024", "1024", "few"),
    ("1,024", f"1{NNBSP}024", "few"),
    ("1,209,600", f"1{NNBSP}209{NNBSP}600", "many"),
    ("12,019", f"12{NNBSP}019", "many"),  # twelve thousand: a Russian reader would take "12,019" for about 12
    ("12.019", "12,019", "other"),
    ("2.8", "2,8", "other"),
    ("1.0", "1,0", "other"),  # CLDR counts the written fraction digits: not "one"
    ("-3.5", "-3,5", "other"),
    ("1.53e+22", "1,53e+22", "many"),
])
def test_russian_numbers_and_their_plural_categories(english, russian, category):
    assert localized_number(english, "ru") == russian
    assert plural_category(english, "ru") == category


@pytest.mark.parametrize("english", ["1", "21", "1,209,600", "12.019", "2.8", "40%"])
def test_chinese_keeps_english_digits_and_has_one_category(english):
    assert localized_number(english, "zh") == english
    assert plural_category(english, "zh") == "other"
    assert plural_categories("zh") == {"other"}
    assert plural_categories("ru") == {"one", "few", "many", "other"}


def test_percent_follows_the_language_pattern_and_non_numbers_stay():
    assert localized_number("40%", "ru") == "40\u00a0%"
    assert localized_number("40%", "zh") == "40%"
    for value in ("b'th'", "GPT-2", "2025-04-10", "v1.2.3", ""):
        assert localized_number(value, "ru") == value
        assert plural_category(value, "ru") is None


@pytest.mark.parametrize("days, expected", [
    ("1", "Около 1 дня"), ("2", "Около 2 дней"), ("5", "Около 5 дней"), ("11", "Около 11 дней"),
    ("21", "Около 21 дня"), ("22", "Около 22 дней"), ("144", "Около 144 дней"), ("1,024", f"Около 1{NNBSP}024 дней"),
])
def test_a_plural_word_agrees_with_the_number_filling_its_template(days, expected):
    # "около" takes the genitive: один -> дня, the rest -> дней (entered as the catalog's forms)
    template = Template.parse("About {days:.0f} days.")
    assert template.fill("Около {days:.0f} {days_word}.", f"About {days} days.", "ru",
                         {"days_word": DAYS}) == expected + "."


@pytest.mark.parametrize("seconds, expected", [
    ("1", "1 секунда"), ("2", "2 секунды"), ("5", "5 секунд"), ("11", "11 секунд"), ("21", "21 секунда"),
    ("22", "22 секунды"), ("144", "144 секунды"), ("1,024", f"1{NNBSP}024 секунды"),
    ("1,209,600", f"1{NNBSP}209{NNBSP}600 секунд"),
])
def test_nominative_forms_for_every_russian_category(seconds, expected):
    template = Template.parse("Two weeks are {seconds:,} seconds.")
    filled = template.fill("Две недели — это {seconds:,} {seconds_word}.", f"Two weeks are {seconds} seconds.", "ru",
                           {"seconds_word": SECONDS})
    assert filled == f"Две недели — это {expected}."


def test_two_plural_words_in_one_sentence_each_follow_their_own_number():
    template = Template.parse("{n} tokens, seen {k} times")
    times = PluralWord("k", {"one": "раз", "few": "раза", "many": "раз", "other": "раза"})
    translation = "{n} {tokens}, встречается {k} {times}"
    plurals = {"tokens": TOKENS, "times": times}
    assert template.fill(translation, "1024 tokens, seen 2 times", "ru", plurals) == "1024 токена, встречается 2 раза"
    assert template.fill(translation, "21 tokens, seen 5 times", "ru", plurals) == "21 токен, встречается 5 раз"


def test_chinese_fills_numbers_unchanged():
    template = Template.parse("Two weeks are {seconds:,} seconds; about {days:.1f} days.")
    assert template.fill("两周共 {seconds:,} 秒，约 {days:.1f} 天。", "Two weeks are 1,209,600 seconds; about 14.0 days.",
                         "zh") == "两周共 1,209,600 秒，约 14.0 天。"


def test_a_field_inside_a_code_span_keeps_its_english_form():
    template = Template.parse("`x = {x}` is {y} in all.")
    assert template.fill("`x = {x}` — всего {y}.", "`x = 1.5` is 2.5 in all.", "ru") == "`x = 1.5` — всего 2,5."


def test_a_plural_word_counting_a_missing_field_is_an_error():
    with pytest.raises(TemplateError, match="counts {k}"):
        Template.parse("{n} days").fill("{n} {word}", "3 days", "ru", {"word": PluralWord("k", {"other": "дня"})})


# ---------------------------------------------------------------- the catalog format


def entry(**changes) -> Entry:
    base = dict(en="About {days:.0f} days.", translation="Около {days:.0f} {days_word}.", template=True,
                plurals={"days_word": DAYS})
    return Entry(**{**base, **changes})


def test_check_accepts_a_plural_word_with_every_category():
    assert entry().problems("ru") == []
    assert entry(plurals={"days_word": PluralWord("days:.0f", {"other": "天"})}).problems("zh") == []


def test_check_names_what_is_wrong_with_a_plural_word():
    lacking = entry(plurals={"days_word": PluralWord("days:.0f", {"one": "дня", "other": "дня"})})
    assert lacking.problems("ru") == ["plural word {days_word} lacks its form for few, many"]
    extra = entry(plurals={"days_word": PluralWord("days:.0f", {"one": "天", "other": "天"})})
    assert extra.problems("zh") == ["plural word {days_word} has forms for one, not plural categories of Chinese"]
    wrong_count = entry(plurals={"days_word": PluralWord("days", DAYS.forms)})
    assert wrong_count.problems("ru") == ["plural word {days_word} counts {days}, which is not a field of the English"]
    unused = entry(translation="Около {days:.0f} дней.")
    assert unused.problems("ru") == ["plural word {days_word} is not used in the translation"]
    # a name of its own is needed: the translation's other fields must still be the English ones
    assert entry(translation="Около {days:.0f} {days_word} {n}.").problems("ru")[0].startswith("fields differ")
    plain = Entry("Days.", "Дни {word}.", plurals={"word": DAYS})
    assert "plural words need a template" in plain.problems("ru")[0]


def test_plural_words_survive_a_save_and_extract_adds_the_forms_a_language_lacks(tmp_path):
    path = tmp_path / "locales" / "ru" / "lecture.yaml"
    lecture = 'def days_needed(days):\n    text(f"About {days:.0f} days.")\n'
    calls = list(scan_source(lecture, "lecture.py").values())
    half_written = entry(plurals={"days_word": PluralWord("days:.0f", {"one": "дня"})}, where="days_needed")
    catalog = Catalog("ru", "lecture.py", [half_written]).update(calls)
    save_catalog(catalog, path)
    text = path.read_text(encoding="utf-8")
    assert "plurals:\n    days_word:\n      count: days:.0f\n      one: дня\n      few: ''\n      many: ''\n      other: ''" in text
    [reloaded] = load_catalog(path).entries
    assert reloaded.plurals["days_word"] == PluralWord("days:.0f", {"one": "дня", "few": "", "many": "", "other": ""})
    assert reloaded.problems("ru") == ["plural word {days_word} lacks its form for few, many, other"]


def test_an_edited_english_keeps_its_plural_words_with_the_stale_translation():
    calls = list(scan_source('def days_needed(days):\n    text(f"About {days:.0f} days in all.")\n', "lecture.py").values())
    [updated] = Catalog("ru", "lecture.py", [entry(where="days_needed")]).update(calls).entries
    assert updated.stale == "About {days:.0f} days." and updated.plurals["days_word"].count == "days:.0f"


def test_i18n_check_reports_a_missing_plural_form(tmp_path):
    (tmp_path / "lecture.py").write_text('def main():\n    days = 3\n    text(f"About {days:.0f} days.")\n',
                                         encoding="utf-8")
    lacking = entry(plurals={"days_word": PluralWord("days:.0f", {"one": "дня", "other": "дня"})}, where="main")
    save_catalog(Catalog("ru", "lecture.py", [lacking]), tmp_path / "locales" / "ru" / "lecture.yaml")
    done = subprocess.run([sys.executable, "-m", "cs336_lectures", "i18n", "check", "lecture.py"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "mismatch main: 'About {days:.0f} days.': plural word {days_word} lacks its form for few, many" in done.stdout


def test_figure_labels_get_the_same_numbers_and_plural_words():
    from cs336_lectures.runtime.i18n.translation import _translated_label

    entries = {
        "{rate:.1f} TB/s": Entry("{rate:.1f} TB/s", "{rate:.1f} ТБ/с", template=True),
        "merge {step}  ({n} tokens)": Entry("merge {step}  ({n} tokens)", "слияние {step}  ({n} {tokens})", template=True,
                                            plurals={"tokens": TOKENS}),
        "forward": Entry("forward", "прямой проход"),
        "{kind}: {n:,} steps": Entry("{kind}: {n:,} steps", "{kind}: {n:,} шагов", template=True),
    }
    assert _translated_label("19.5 TB/s", entries, "ru") == "19,5 ТБ/с"
    assert _translated_label("19.5 TB/s", entries, "zh") == "19.5 ТБ/с"  # (a Russian entry read as Chinese: digits kept)
    assert _translated_label("merge 2  (22 tokens)", entries, "ru") == "слияние 2  (22 токена)"
    assert _translated_label("merge 3  (11 tokens)", entries, "ru") == "слияние 3  (11 токенов)"
    # a field whose value is a translated word gets the word, a number its Russian form
    assert _translated_label("forward: 1,024 steps", entries, "ru") == f"прямой проход: 1{NNBSP}024 шагов"
