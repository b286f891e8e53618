"""Numbers as documents write them (pure): either decimal convention, fractions, percentages, and the Spanish
digit words the acta spells its counts in."""

from __future__ import annotations

import functools
import re
import unicodedata
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any

# a minus sign only where it cannot be a hyphen inside a code ("XJ-7781" shows 7781, not -7781)
_NUMBER_TOKEN = re.compile(r"(?:(?<![\w.,])[-−])?\d[\d.,'’/]*%?")
_CLEAN_AMOUNT = re.compile(r"[^\d.,'’\-−+/%]")


def _group_ok(groups: list[str]) -> bool:
    return bool(groups[0]) and len(groups[0]) <= 3 and all(len(g) == 3 for g in groups[1:])


def number_readings(token: str) -> set[Decimal]:
    """Every sensible reading of one numeric token: '1.234,56' -> {1234.56}; '1.234' -> {1.234, 1234};
    '0056' -> {56}. Separators are told apart by position, as writers in either convention use them."""
    t = token.strip().replace("−", "-").replace("’", "'").rstrip(".,")
    negative = t.startswith("-")
    t = t.lstrip("+-").replace("'", ",") if "'" in t else t.lstrip("+-")
    if not t or not t[0].isdigit():
        return set()
    out: set[Decimal] = set()
    seps = {c for c in t if c in ".,"}
    try:
        if not seps:
            out.add(Decimal(t))
        elif len(seps) == 2:
            dec = max(".,", key=t.rfind)  # the last separator is the decimal one
            thou = "," if dec == "." else "."
            whole, _, frac = t.rpartition(dec)
            if _group_ok(whole.split(thou)) and frac.isdigit():
                out.add(Decimal(whole.replace(thou, "") + "." + frac))
        else:
            sep = seps.pop()
            parts = t.split(sep)
            if len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit():
                out.add(Decimal(parts[0] + "." + parts[1]))
            if _group_ok(parts) and all(p.isdigit() for p in parts):
                out.add(Decimal("".join(parts)))
    except InvalidOperation:
        return set()
    return {-d if negative else d for d in out}


def parse_number(value: Any) -> Decimal | None:
    """One number from a JSON value or text ('$1,234.56', '1.234,56 €', '(12.00)', 0.5); None if not one.

    An ambiguous '1.234' / '1,234' is read the way a single separator before three digits is most often
    meant in prices: ',' as thousands, '.' as decimals.
    """
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | Decimal):
        return Decimal(value)
    if isinstance(value, float):
        return Decimal(str(value))
    if not isinstance(value, str):
        return None
    text = value.strip()
    negative = text.startswith("(") and text.endswith(")")
    text = _CLEAN_AMOUNT.sub("", text.strip("()"))
    if not text or "/" in text or "%" in text or not _NUMBER_TOKEN.fullmatch(text):
        return None
    readings = number_readings(text)
    if not readings:
        return None
    if len(readings) > 1:
        sep = "," if "," in text else "."
        readings = {max(readings)} if sep == "," else {min(readings)}
    result = readings.pop()
    return -result if negative else result


def parse_fraction(value: Any) -> Fraction | None:
    """A share as an exact Fraction ('1/3', '33.33%', '33,33 %', 0.5, '0.5', 1); None if not one."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float | Decimal):
        return Fraction(Decimal(str(value)))
    if not isinstance(value, str):
        return None
    text = value.strip().replace(" ", "")
    m = re.fullmatch(r"(\d+)/(\d+)", text)
    if m:
        den = int(m.group(2))
        return Fraction(int(m.group(1)), den) if den else None
    percent = text.endswith("%")
    number = parse_number(text.rstrip("%"))
    if number is None:
        return None
    return Fraction(number) / 100 if percent else Fraction(number)


def numbers_in_text(text: str) -> set[Fraction]:
    """Every number a text may show, as exact Fractions: each reading of each numeric token, a/b
    fractions, and percentages both as written and divided by 100."""
    out: set[Fraction] = set()
    for token in _NUMBER_TOKEN.findall(text):
        token = token.rstrip(".,")
        percent = token.endswith("%")
        token = token.rstrip("%")
        if "/" in token:
            frac = parse_fraction(token)
            if frac is not None:
                out.add(frac)
            continue
        for reading in number_readings(token):
            out.add(Fraction(reading))
            if percent:
                out.add(Fraction(reading) / 100)
    return out


def as_int(value: Any) -> int | None:
    """An integer count from a JSON value ('0056' -> 56, 12.0 -> 12); None when it is not a whole number."""
    number = (
        parse_number(value)
        if not isinstance(value, str)
        else (Decimal(value.strip()) if re.fullmatch(r"\s*-?\d+\s*", value) else None)
    )
    if number is None or number != number.to_integral_value():
        return None
    return int(number)


# --- Spanish digit words (the acta spells its counts in them) ------------------------------------------

DIGIT_WORD_VALUES = {
    w: i
    for i, w in enumerate(["CERO", "UNO", "DOS", "TRES", "CUATRO", "CINCO", "SEIS", "SIETE", "OCHO", "NUEVE"])
}


@functools.lru_cache(maxsize=65536)  # the rules fold the same block texts for every answer they check
def fold(text: str) -> str:
    """Upper case without accents, for comparing OCR'd words."""
    nfkd = unicodedata.normalize("NFKD", text)
    return "".join(c for c in nfkd if not unicodedata.combining(c)).upper()


@functools.lru_cache(maxsize=4096)
def digit_word(token: str) -> int | None:
    """The digit a Spanish digit word stands for; tolerates one OCR slip ('CINC0', 'SIETF')."""
    from rapidfuzz import fuzz, process

    word = fold(token).strip(".,;:")
    if word in DIGIT_WORD_VALUES:
        return DIGIT_WORD_VALUES[word]
    if len(word) < 3 or not word.isalnum():
        return None
    if (slip := _letter_slip(word)) is not None:
        return slip
    best = process.extract(word, list(DIGIT_WORD_VALUES), scorer=fuzz.ratio, limit=2)
    if best and best[0][1] >= 80 and (len(best) < 2 or best[1][1] < best[0][1]):
        return DIGIT_WORD_VALUES[best[0][0]]
    return None


# What faded print makes an OCR engine read for a letter of a digit word: a digit for the letter it looks like
# ('CER0', 'D05'), a D for an O ('CERD', 'UND').
_AS_LETTER = str.maketrans({"0": "O", "1": "I", "5": "S", "8": "B", "6": "G", "2": "Z"})


def _letter_slip(word: str) -> int | None:
    """The digit word a mostly-letter token reads as once its look-alike characters are read as the letters
    they stand for; exact matches only (UNE, a party, is not UNO)."""
    if sum(c.isalpha() for c in word) * 2 < len(word):
        return None
    letters = word.translate(_AS_LETTER)
    if letters in DIGIT_WORD_VALUES:
        return DIGIT_WORD_VALUES[letters]
    found = {letters[:i] + "O" + letters[i + 1:] for i, c in enumerate(letters) if c == "D"} & DIGIT_WORD_VALUES.keys()
    return DIGIT_WORD_VALUES[found.pop()] if len(found) == 1 else None


def digit_words(token: str) -> list[int] | None:
    """The digits a token spells: one digit word ('CINC0' too), or up to three run together where the OCR
    lost the space between them ('CUATROOCHO' -> [4, 8]; each part then exactly a digit word)."""
    d = digit_word(token)
    if d is not None:
        return [d]
    word = fold(token).strip(".,;:")
    return _joined_digit_words(word, parts=3) if word.isalpha() else None


def _joined_digit_words(word: str, *, parts: int) -> list[int] | None:
    if word in DIGIT_WORD_VALUES:
        return [DIGIT_WORD_VALUES[word]]
    if parts < 2:
        return None
    for i in range(2, len(word) - 1):
        if word[:i] in DIGIT_WORD_VALUES:
            rest = _joined_digit_words(word[i:], parts=parts - 1)
            if rest is not None:
                return [DIGIT_WORD_VALUES[word[:i]], *rest]
    return None


@functools.lru_cache(maxsize=4096)
def parse_digit_words(text: str) -> int | None:
    """'CERO CERO CINCO SEIS' -> 56; None when any token is not a digit word or there is none. Kept per text:
    the rules read every row's words on every check."""
    tokens = re.split(r"[\s,;/\-]+", text.strip())
    digits = [digit_words(t) for t in tokens if t]
    if not digits or any(d is None for d in digits):
        return None
    return int("".join(str(d) for ds in digits for d in ds))  # type: ignore[union-attr]


def digit_word_runs(text: str) -> list[int]:
    """The numbers spelled by each run of consecutive digit words in a text ('56 CERO CINCO SEIS' -> [56]). A
    numeral the OCR ran into the first word ('111UNO UNO UNO') is read apart from it: a word never begins
    with a digit's own numeral."""
    runs: list[int] = []
    current: list[int] = []
    for token in re.split(r"[\s,;/]+|(?<=[0-9])(?=[^\W\d_])", text):
        d = digit_words(token) if token and not token[0].isdigit() else None  # "0" is a numeral, not a word
        if d is None:
            if current:
                runs.append(int("".join(map(str, current))))
            current = []
        else:
            current += d
    if current:
        runs.append(int("".join(map(str, current))))
    return runs

