"""Does a cited text show a value? (pure) Numbers as numbers, dates as dates, other text loosely."""

from __future__ import annotations

import re
from decimal import Decimal
from fractions import Fraction
from typing import Any

from rapidfuzz import fuzz

from extraction.values.currency import ISO_4217, shows_currency
from extraction.values.dates import dates_in_text, parse_dates
from extraction.values.numbers import digit_word_runs, fold, numbers_in_text, parse_digit_words, parse_fraction, parse_number

_TEXT_FUZZY_MIN = 90  # partial ratio for a text value to count as supported by its cited text


def _alnum(text: str) -> str:
    return re.sub(r"[^0-9A-Z]", "", fold(text))


def _text_supports(value: str, text: str) -> bool:
    a, b = _alnum(value), _alnum(text)
    if not a:
        return True
    if a in b:
        return True
    if sum(c.isdigit() for c in a) * 2 > len(a):
        return False  # ids and codes must match exactly: one digit off is another id
    # A slip is a few characters misread, not most of the value missing: a cited 'SDN' shows no company
    # whose name ends in SDN BHD, though it lies inside it (partial_ratio aligns the shorter text).
    if len(b) < len(a) - len(a) // 10:
        return False
    return len(a) >= 4 and fuzz.partial_ratio(a, b) >= _TEXT_FUZZY_MIN


_CURRENCY_WORD = re.compile(r"^[A-Za-z]{1,3}$")


def _reads_as_amount(value: str) -> bool:
    """Whether a text value is an amount: no letters but a currency's ('RM 9.00', '8.60 USD'); an address or
    a name with numbers in it ('JALAN 7/4, 81200 JOHOR') is text."""
    words = re.findall(r"[^\W\d_]+", value)
    return all(_CURRENCY_WORD.match(w) for w in words) and len(words) <= 1


def _number_supported(target: Fraction, text: str, *, word_numbers: bool) -> bool:
    if target in numbers_in_text(text):
        return True
    return word_numbers and target.denominator == 1 and int(target) in digit_word_runs(text)


def _shown_verbatim(value: str, text: str) -> bool:
    pattern = r"(?<![0-9A-Za-z])" + re.escape(value.strip()) + r"(?![0-9A-Za-z])"
    return re.search(pattern, text, flags=re.IGNORECASE) is not None


def supports(value: Any, text: str, *, word_numbers: bool = False) -> bool:
    """Whether `text` (what the proofs cite) shows `value`.

    Numbers are compared as numbers whatever their writing ('1.234,56' / '1,234.56' / '0056', '50%' for
    0.5, '1/3'); dates as dates whatever their format; other text ignoring case, accents and punctuation
    (and small OCR slips for wordy values). With `word_numbers`, a run of Spanish digit words in the text
    counts as showing its number, and a value in digit words is compared with the runs in the text.
    """
    if value is None or isinstance(value, bool):
        return True
    if isinstance(value, int | float | Decimal):
        return _number_supported(Fraction(Decimal(str(value))), text, word_numbers=word_numbers)
    if not isinstance(value, str):
        return True  # lists and objects are not leaf values; nothing to compare
    if not value.strip():
        return True
    if word_numbers:
        spelled = parse_digit_words(value)
        if spelled is not None:
            return spelled in digit_word_runs(text)
    if _shown_verbatim(value, text):  # an id such as "P-0001" is shown as written, not as the number -1
        return True
    if value.strip().upper() in ISO_4217 and shows_currency(value.strip().upper(), text):
        return True  # a currency code is shown by its symbol: "EUR" by "€ 399,00"
    number = parse_number(value) if _reads_as_amount(value) else None
    if number is None and re.search(r"\d", value) and _reads_as_amount(value):
        number = parse_fraction(value)
    if number is not None:
        return _number_supported(Fraction(number), text, word_numbers=word_numbers)
    dates = parse_dates(value)
    if dates and dates & dates_in_text(text):
        return True
    return _text_supports(value, text)
