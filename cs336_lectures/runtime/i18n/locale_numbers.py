"""Numbers in a translation read as the reader's language writes them, and words agree with them.

A template's field values are recovered from the English output (templates.py), so a number
arrives formatted the English way: "1,209,600", "12.5", "40%". `localized_number` rewrites such
a value with the language's own symbols from CLDR (through Babel), digit for digit, so the
precision the lecture asked for is kept exactly:

    >>> localized_number("1,209,600", "ru"), localized_number("12.019", "ru")
    ('1\u202f209\u202f600', '12,019')

`plural_category` says which CLDR plural category a value falls in ("one", "few", "many",
"other" for Russian), so a catalog can give a word one form per category (catalog.py).
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from functools import lru_cache

__all__ = ["ENGLISH_NUMBER", "localized_number", "number_of", "plural_categories", "plural_category"]

# A number as Python's format() writes it in English: optional sign, digits grouped by commas
# or not, a fraction, an exponent, a percent sign.
ENGLISH_NUMBER = re.compile(r"(?P<sign>[-+]?)(?P<integer>\d{1,3}(?:,\d{3})+|\d+)(?:\.(?P<fraction>\d+))?"
                            r"(?P<exponent>[eE][-+]?\d+)?(?P<percent>%?)")
# Russian typography sets digit groups apart with a thin space; CLDR's no-break space is a full
# word space wide. The narrow no-break space is the thin space that never breaks a line.
GROUP_SEPARATORS = {"ru": "\u202f"}


def number_of(value: str) -> Decimal | None:
    """The number an English-formatted value stands for ("1,024" -> 1024, "40%" -> 40), or None."""
    match = ENGLISH_NUMBER.fullmatch(value.strip())
    if match is None:
        return None
    digits = match["integer"].replace(",", "") + (f".{match['fraction']}" if match["fraction"] else "")
    try:
        return Decimal(match["sign"] + digits + (match["exponent"] or ""))
    except InvalidOperation:
        return None


def localized_number(value: str, language: str) -> str:
    """`value` written in `language` when it is an English-formatted number, else unchanged.

    Digits are kept as they are (no rounding); the grouping (only where the English grouped),
    the decimal sign and the percent pattern are the language's.
    """
    match = ENGLISH_NUMBER.fullmatch(value)
    if match is None or language == "en":
        return value
    group, decimal, percent_prefix, percent_suffix = _symbols(language)
    text = match["sign"] + match["integer"].replace(",", group)
    if match["fraction"]:
        text += decimal + match["fraction"]
    if match["exponent"]:
        text += match["exponent"]
    return percent_prefix + text + percent_suffix if match["percent"] else text


def plural_categories(language: str) -> frozenset[str]:
    """The CLDR plural categories of `language`: {"one", "few", "many", "other"} for Russian."""
    return _locale(language).plural_form.tags | {"other"}


def plural_category(value: str, language: str) -> str | None:
    """The CLDR category of the number in the English-formatted `value`, or None when it is no number.

    The fraction digits count, as CLDR's rules ask: "1" is "one" in Russian, "1.0" is "other".
    """
    number = number_of(value)
    if number is None:
        return None
    return _locale(language).plural_form(number)


@lru_cache(maxsize=None)
def _locale(language: str):
    from babel import Locale

    return Locale.parse(language)


@lru_cache(maxsize=None)
def _symbols(language: str) -> tuple[str, str, str, str]:
    """(group separator, decimal sign, text before and after a percentage) of `language`."""
    from babel.numbers import get_decimal_symbol, get_group_symbol

    locale = _locale(language)
    pattern = locale.percent_formats[None].pattern  # "#,##0\u00a0%" in Russian, "#,##0%" in Chinese
    prefix, _, rest = pattern.partition("#")
    suffix = rest[rest.rfind("0") + 1:]
    group = GROUP_SEPARATORS.get(language, get_group_symbol(locale))
    return group, get_decimal_symbol(locale), prefix, suffix
