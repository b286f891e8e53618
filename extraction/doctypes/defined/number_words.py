"""Numbers spelled in words, per language, for the `digits_words` rule of defined types (pure).

- "es_digits": Spanish digit words read digit by digit, as tally sheets print counts ("CERO CINCO SEIS" is 56);
  `extraction.values.numbers.parse_digit_words` reads them, OCR slips included.
- "en": English cardinal numbers as cheques and contracts write amounts ("Two hundred and five", "one
  thousand three hundred forty-two"); a trailing currency word and "only" are allowed, cents are not read.
"""

from __future__ import annotations

import re
from decimal import Decimal

from extraction.values.numbers import parse_digit_words

__all__ = ["parse_number_words"]

_UNITS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen".split())}
_TENS = {w: 10 * (i + 2) for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())}
_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9}
_IGNORED = {"and", "only", "dollars", "dollar", "euros", "euro", "pounds", "pound", "ringgit", "rupees"}


def _english(text: str) -> int | None:
    words = [w for w in re.split(r"[\s\-,]+", text.lower().strip(" .")) if w and w not in _IGNORED]
    if not words:
        return None
    total, current, seen = 0, 0, False
    for w in words:
        if w in _UNITS:
            current += _UNITS[w]
        elif w in _TENS:
            current += _TENS[w]
        elif w == "hundred":
            current = (current or 1) * 100
        elif w in _SCALES:
            total += (current or 1) * _SCALES[w]
            current = 0
        else:
            return None  # a word that is not a number word: no reading, so no evidence either way
        seen = True
    return total + current if seen else None


def parse_number_words(text: str, *, language: str) -> Decimal | None:
    """The number `text` spells in `language`; None when it is not such a number."""
    if language == "es_digits":
        value = parse_digit_words(text)
    elif language == "en":
        value = _english(text)
    else:
        raise ValueError(f"unknown language {language!r}")
    return None if value is None else Decimal(value)
