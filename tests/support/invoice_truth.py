"""Test helpers: the known answers of ../shared/data/invoices and finding them in OCR blocks.

`locate` accepts the ways invoices print a value: 717,97 / 717.97 / 1.234,56 / 1,234.56 / 1 234,56,
dates as 19-04-2014, 19/04/2014, 2014-04-19, 19 april 2014, Aug 3, 2014, 20 Oct 2015, ... and ids
with or without their punctuation; ids may also match fuzzily (rapidfuzz) to absorb OCR noise.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

from rapidfuzz import fuzz

from extraction.ocr.blocks import BlockType, OcrBlock
from tests.support.paths import SHARED

INVOICES = SHARED / "data" / "invoices"

# (source, invoice, label) -> why the value cannot be found on the page.
KNOWN_MISSING: dict[tuple[str, str, str], str] = {
    ("pdf", "AzureInterior", "date_start"): "only in the embedded UBL XML; the printed page has no period",
    ("pdf", "AzureInterior", "date_end"): "only in the embedded UBL XML; the printed page has no period",
    ("pdf", "free_fiber", "date_start"): "printed as a range, 'du 1er au 31 Juillet 2015': the 1st has no "
                                         "month or year of its own",
}

AMOUNT_KEYS = ("amount", "amount_untaxed", "amount_tax")
DATE_PREFIX = "date"  # date, date_due, date_start, date_end, date_check_in, ...
ID_KEYS = ("invoice_number",)
FUZZY_MIN = 90  # partial_ratio for an id read with OCR noise
FUZZY_MIN_LENGTH = 8  # shorter ids must match exactly: one wrong digit is another id

# Month names as invoices in this corpus print them (en, nl, de, fr), full and abbreviated.
MONTHS = {
    1: ["january", "jan", "januari", "januar", "janvier", "janv"],
    2: ["february", "feb", "februari", "februar", "février", "fevrier", "févr", "fev"],
    3: ["march", "mar", "maart", "mrt", "märz", "maerz", "mars"],
    4: ["april", "apr", "avril", "avr"],
    5: ["may", "mei", "mai"],
    6: ["june", "jun", "juni", "juin"],
    7: ["july", "jul", "juli", "juillet", "juil"],
    8: ["august", "aug", "augustus", "août", "aout"],
    9: ["september", "sep", "sept", "septembre"],
    10: ["october", "oct", "oktober", "okt", "octobre"],
    11: ["november", "nov", "novembre"],
    12: ["december", "dec", "dezember", "dez", "décembre", "decembre", "déc"],
}
SEARCH_ORDER = (BlockType.WORD, BlockType.CELL, BlockType.LINE)


def load_truth(name: str) -> dict[str, Any]:
    """The known answer for invoice `name` (the JSON holds a one-element list)."""
    data = json.loads((INVOICES / f"{name}.json").read_text(encoding="utf-8"))
    return data[0] if isinstance(data, list) else data


def expected_values(truth: dict[str, Any]) -> list[tuple[str, Any]]:
    """(label, value) for the amounts, dates and invoice number the page must show."""
    out: list[tuple[str, Any]] = []
    for key in AMOUNT_KEYS:
        if isinstance(truth.get(key), int | float):
            out.append((key, float(truth[key])))
    for key in sorted(k for k in truth if k.startswith(DATE_PREFIX)):
        if truth[key]:
            out.append((key, dt.date.fromisoformat(truth[key])))
    for key in ID_KEYS:
        if truth.get(key):
            out.append((key, str(truth[key])))
    return out


def locate(value: Any, blocks: list[OcrBlock]) -> OcrBlock | None:
    """The smallest block (WORD, then CELL, then LINE; first in reading order) that shows `value`."""
    if isinstance(value, dt.date):
        pattern = _date_pattern(value)
    elif isinstance(value, int | float):
        pattern = _amount_pattern(float(value))
    else:
        return _locate_id(str(value), blocks)
    for kind in SEARCH_ORDER:
        for block in _of_type(blocks, kind):
            if pattern.search(_normalize(block.text)):
                return block
    return None


def _of_type(blocks: list[OcrBlock], kind: BlockType) -> list[OcrBlock]:
    return sorted((b for b in blocks if b.type == kind), key=lambda b: (b.page, b.order))


def _normalize(text: str) -> str:
    text = text.casefold().replace("\u00a0", " ").replace("\u202f", " ")
    text = re.sub(r"\s+([.,])", r"\1", text)  # spaces before punctuation: "August 3 , 2014", "717 ,97"
    return re.sub(r"\s+", " ", text).strip()


def _amount_pattern(value: float) -> re.Pattern[str]:
    cents = round(abs(value) * 100)
    units, fraction = divmod(cents, 100)
    digits = str(units)
    groups = []
    rest = digits
    while len(rest) > 3:
        groups.insert(0, rest[-3:])
        rest = rest[:-3]
    groups.insert(0, rest)
    whole = [digits] + [sep.join(groups) for sep in (",", ".", " ", "'") if len(groups) > 1]
    decimals = [f"{fraction:02d}"] + ([str(fraction // 10)] if fraction % 10 == 0 else [])
    # OCR may put a space after the decimal separator ("717, 97").
    variants = [rf"{re.escape(w)}[.,]\s?{dec}" for w in whole for dec in decimals]
    if fraction == 0:
        variants += [re.escape(w) for w in whole] + [re.escape(f"{w},-") for w in whole]
    alternatives = "|".join(sorted(set(variants), key=len, reverse=True))
    # Not part of a longer number: no digit before, no further digits (or decimals) after.
    return re.compile(rf"(?<!\d)(?<!\d[.,])(?:{alternatives})(?!\d|[.,]\d)")


def _date_pattern(day: dt.date) -> re.Pattern[str]:
    d, m, y = day.day, day.month, day.year
    days, months, years = {str(d), f"{d:02d}"}, {str(m), f"{m:02d}"}, {str(y), f"{y % 100:02d}"}
    variants = set()
    for sep in "-/. ":
        for dd in days:
            for mm in months:
                for yy in years:
                    variants |= {f"{dd}{sep}{mm}{sep}{yy}", f"{mm}{sep}{dd}{sep}{yy}"}
                variants.add(f"{y}{sep}{mm}{sep}{dd}")
    for name in MONTHS[m]:
        for dd in days | {_ordinal(d)}:
            for yy in years:
                for sep in (" ", "-", ". ", "."):
                    variants.add(f"{dd}{sep}{name}{sep}{yy}")
                variants.add(f"{dd}. {name} {yy}")  # German: "7. Mai 2014"
                variants |= {f"{name} {dd}, {yy}", f"{name} {dd} {yy}", f"{name}. {dd}, {yy}"}
    alternatives = "|".join(re.escape(v) for v in sorted(variants, key=len, reverse=True))
    return re.compile(rf"(?<![\w])(?:{alternatives})(?![\d])")


def _ordinal(day: int) -> str:
    suffix = "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


def _compact(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.casefold())


def _locate_id(value: str, blocks: list[OcrBlock]) -> OcrBlock | None:
    target = _compact(value)
    if not target:
        return None
    exact = re.compile(rf"(?<![^\W_]){re.escape(target)}(?![^\W_])")
    for kind in SEARCH_ORDER:
        for block in _of_type(blocks, kind):
            # Compare word by word so "INV/2023/03/0008" matches "inv2023030008" but "12" not "3012".
            if exact.search(" ".join(_compact(token) for token in block.text.split())):
                return block
    if len(target) < FUZZY_MIN_LENGTH:
        return None
    for kind in SEARCH_ORDER:
        for block in _of_type(blocks, kind):
            if fuzz.partial_ratio(target, _compact(block.text)) >= FUZZY_MIN:
                return block
    return None
