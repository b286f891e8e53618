"""Dates as documents write them (pure): numeric forms and month names in eight languages."""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from extraction.numbers import fold

_MONTHS: dict[str, int] = {}
for _number, _names in enumerate(
    [
        "january jan januar janvier janv enero ene januari gennaio gen janeiro styczen stycznia",
        "february feb februar fevrier fevr fev febrero februari febbraio fevereiro luty lutego",
        "march mar marz mars marzo maart maar marco marzec marca",
        "april apr avril avr abril abr aprile kwiecien kwietnia",
        "may mai mayo mei maggio mag maio maj maja",
        "june jun juni juin junio giugno giu junho czerwiec czerwca",
        "july jul juli juillet juil julio luglio lug julho lipiec lipca",
        "august aug aout agosto ago augustus sierpien sierpnia",
        "september sep sept septembre septiembre set settembre setembro wrzesien wrzesnia",
        "october oct oktober octobre octubre okt ottobre ott outubro out pazdziernik pazdziernika",
        "november nov novembre noviembre novembro listopad listopada",
        "december dec dezember decembre dic diciembre dez dicembre dezembro grudzien grudnia",
    ],
    start=1,
):
    for _name in _names.split():
        _MONTHS.setdefault(_name, _number)

_DATE_NUMERIC = re.compile(r"(\d{1,4})[-/.](\d{1,2})[-/.](\d{1,4})")
DATE_EXAMPLES = "2023-03-20, 20/03/2023, 20.03.2023, 03/20/2023, 20 March 2023, March 20, 2023"


def _valid_date(y: int, m: int, d: int) -> date | None:
    if y < 100:
        y += 2000 if y < 70 else 1900
    try:
        return date(y, m, d) if 1900 <= y <= 2100 else None
    except ValueError:
        return None


def parse_dates(text: str) -> set[date]:
    """Every date a short text can be read as (both day/month orders when ambiguous); empty if none.

    Numeric forms (2023-03-20, 20/03/2023, 03.20.23) and month names in English, Spanish, French,
    German, Dutch, Italian, Portuguese and Polish ('20 de marzo de 2023', 'March 20, 2023', '20-Mar-2023').
    """
    folded = fold(text).lower().strip()
    folded = re.sub(r"(\d)(st|nd|rd|th|er|e)\b", r"\1", folded)
    m = _DATE_NUMERIC.fullmatch(folded)
    if m:
        a, b, c = (int(g) for g in m.groups())
        found = set()
        if len(m.group(1)) == 4:
            found.add(_valid_date(a, b, c))
        elif len(m.group(3)) in (2, 4):
            found.add(_valid_date(c, b, a))  # day first
            found.add(_valid_date(c, a, b))  # month first
        return {d for d in found if d}
    words = [w for w in re.split(r"[\s,./\-]+", folded) if w and w not in {"de", "del", "of", "the"}]
    if len(words) != 3:
        return set()
    months = [i for i, w in enumerate(words) if w in _MONTHS]
    nums = [i for i, w in enumerate(words) if w.isdigit()]
    if len(months) != 1 or len(nums) != 2:
        return set()
    month = _MONTHS[words[months[0]]]
    x, y = (int(words[i]) for i in nums)
    if len(words[nums[0]]) == 4:  # 2023 March 20
        found_date = _valid_date(x, month, y)
    else:
        found_date = _valid_date(y, month, x)
    return {found_date} if found_date else set()


def parse_date(text: Any) -> date | None:
    """The date a value states; for an ambiguous 03/04/2023 the day-first reading."""
    if not isinstance(text, str):
        return None
    dates = parse_dates(text)
    if not dates:
        return None
    m = _DATE_NUMERIC.fullmatch(fold(text).strip())
    if m and len(m.group(1)) != 4:
        day_first = _valid_date(int(m.group(3)), int(m.group(2)), int(m.group(1)))
        if day_first:
            return day_first
    return min(dates)


# A numeric date inside a word: after a label or bracket ('Date:27/07/17', '(29/07/2016)'), or with the time
# an OCR engine ran into it where it lost the space ('5/3/201822:52:33': a year, then H:MM).
_DATE_IN_WORD = re.compile(r"(?<!\d)(\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4})(?!\d)")
_DATE_BEFORE_TIME = re.compile(r"(?<!\d)(\d{1,2}[-/.]\d{1,2}[-/.](?:\d{4}|\d{2}))(?=\d{1,2}:\d{2})")


def dates_in_text(text: str) -> set[date]:
    """Dates found in any run of one to four words of a text, and numeric dates inside its words."""
    words = text.split()
    out: set[date] = set()
    for size in range(1, 5):
        for i in range(len(words) - size + 1):
            out |= parse_dates(" ".join(words[i : i + size]).strip(",;:()"))
    for pattern in (_DATE_IN_WORD, _DATE_BEFORE_TIME):
        for m in pattern.finditer(text):
            out |= parse_dates(m.group(1))
    return out

