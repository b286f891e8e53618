"""Dates as documents write them (pure): numeric forms and month names in eight languages."""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from extraction.values.numbers import fold

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


# A numeric date inside a word: after a label or bracket ('Date:27/07/17', '(29/07/2016)'). One followed by a
# colon and a digit is a date run into a time ('15/06/2008:34'), read by `_dates_before_times` alone.
_DATE_IN_WORD = re.compile(r"(?<!\d)(\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4})(?!\d)(?!:\d)")
# A date whose year an OCR engine ran into the time printed after it, where it lost the space:
# '5/3/201822:52:33', '15 Jun1808:34:31 PM', '15/06/1808:34'. The digits between the date's day and month
# and the time's first colon (the `run`) are a year of two or four digits followed by the hour (one or two
# digits), or, before a colon, the year alone where nothing but a separator parts it from the month
# ('27/07/17:10:30'; in 'MAR 18 09:12:41' the 09 after a space is the hour). A split is read only where both of its
# sides are what they claim: a calendar date, and a time of the day (hours to 23, or 1 to 12 before AM/PM;
# minutes and seconds to 59; nothing but the time's own digits). So '15 Jun 1808:34' is 15 June 2018 at 08:34:
# the other split, a year 1808 then ':34', is no date and leaves no time. Where both splits of a four-digit
# run are valid ('27/07/2017:10:30': 2017 then 10:30, or 20 then 17:10:30) both dates are read: the text may
# print either, and a rule must not fire on a doubt about where a space was lost. Read on folded text.
_CLOCK = r"(?P<run>\d{2,6})(?P<clock>(?::\d{2}){1,3})(?!\d)(?!:\d)(?:\s*(?P<half>[AP])\.?\s?M\b\.?)?"
_NUMERIC_BEFORE_TIME = re.compile(r"(?<!\d)(?P<head>\d{1,2}[-/.]\d{1,2}[-/.])" + _CLOCK)
_MONTH_NAME = "(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")(?![^\W\d_])"
_DAY_MONTH_BEFORE_TIME = re.compile(
    r"(?<!\w)(?P<day>\d{1,2})[\s./-]*" + _MONTH_NAME + r"\.?(?P<gap>[\s./,-]*)" + _CLOCK, re.IGNORECASE)
_MONTH_DAY_BEFORE_TIME = re.compile(
    r"(?<![^\W\d_])" + _MONTH_NAME + r"\.?[\s./-]*(?P<day>\d{1,2})(?P<gap>,\s*|[\s./-]+)" + _CLOCK, re.IGNORECASE)
# A numeric date an OCR engine ran into a number on one side ('#19536001/06/2018': a receipt number, then the
# date). Where digits touch, only the widths of the date's fields say where it starts or ends, so only the
# fixed-width forms are read: day and month zero-padded to two digits, the year in four, one separator
# throughout (DD/MM/YYYY, MM/DD/YYYY, YYYY-MM-DD), the year 1xxx or 2xxx (not "0018", which parse_dates would
# take for 2018). Glued on both sides, neither end is known: not read.
_FIXED_WIDTH_DATE = r"(\d{2}([-/.])\d{2}\2[12]\d{3}|[12]\d{3}([-/.])\d{2}\3\d{2})"
_DATE_AFTER_NUMBER = re.compile(r"(?<=\d)" + _FIXED_WIDTH_DATE + r"(?!\d)")
_DATE_BEFORE_NUMBER = re.compile(r"(?<!\d)" + _FIXED_WIDTH_DATE + r"(?=\d)")
# A date printed without separators ('27032018'): eight digits standing alone, not in a word ('INV20180327'),
# a longer digit run or a decimal ('0.27032018'). Read only as the two orders printed dates use, DDMMYYYY and
# YYYYMMDD (ISO 8601's basic form), and only where the digits make a valid calendar date in that order.
_EIGHT_DIGITS = re.compile(r"(?<!\w)(?<!\d[.,])(\d{8})(?![.,]\d)(?!\w)")


def _eight_digit_dates(digits: str) -> set[date]:
    found = set()
    for year, month, day in ((digits[4:], digits[2:4], digits[:2]), (digits[:4], digits[4:6], digits[6:])):
        if year[0] in "12":  # a year in four digits: '0018' is no year, though _valid_date reads 18 as 2018
            found.add(_valid_date(int(year), int(month), int(day)))  # DDMMYYYY, then YYYYMMDD
    return {d for d in found if d}


def _is_time(hour: str, rest: list[str], half: str | None) -> bool:
    """Whether `hour` and the colon-separated `rest` (minutes, then perhaps seconds) are a time of the day."""
    if not hour or not 1 <= len(rest) <= 2 or any(int(part) > 59 for part in rest):
        return False
    return int(hour) <= (12 if half else 23)


def _year_splits(run: str, clock: list[str], half: str | None, *, attached: bool) -> list[str]:
    """The years `run` may end a date with, where what follows them is a time (see `_CLOCK`). `attached`: no
    space parts the run from the month, so the run alone may be the year."""
    years = [run[:size] for size in (2, 4) if 1 <= len(run) - size <= 2 and _is_time(run[size:], clock, half)]
    if attached and len(run) in (2, 4) and _is_time(clock[0], clock[1:], half):  # '17:10:30': year, colon, time
        years.append(run)
    return years


def _dates_before_times(text: str) -> set[date]:
    folded = fold(text)
    out: set[date] = set()
    for pattern in (_NUMERIC_BEFORE_TIME, _DAY_MONTH_BEFORE_TIME, _MONTH_DAY_BEFORE_TIME):
        for m in pattern.finditer(folded):
            parts = m.groupdict()
            clock = m.group("clock").split(":")[1:]
            attached = not re.search(r"\s", parts.get("gap") or "")
            for year in _year_splits(m.group("run"), clock, m.group("half"), attached=attached):
                if "month" in parts:
                    out |= parse_dates(f"{parts['day']} {parts['month']} {year}")
                else:
                    out |= parse_dates(parts["head"] + year)
    return out


def dates_in_text(text: str) -> set[date]:
    """Dates found in any run of one to four words of a text, numeric dates inside its words (fixed-width ones
    even where a number touches them), dates run into the time after them and dates printed as eight digits
    (DDMMYYYY, YYYYMMDD)."""
    words = text.split()
    out: set[date] = set()
    for size in range(1, 5):
        for i in range(len(words) - size + 1):
            out |= parse_dates(" ".join(words[i : i + size]).strip(",;:()"))
    for pattern in (_DATE_IN_WORD, _DATE_AFTER_NUMBER, _DATE_BEFORE_NUMBER):
        for m in pattern.finditer(text):
            out |= parse_dates(m.group(1))
    out |= _dates_before_times(text)
    for m in _EIGHT_DIGITS.finditer(text):
        out |= _eight_digit_dates(m.group(1))
    return out

