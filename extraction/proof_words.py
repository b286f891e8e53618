"""The words of a cited block that show the value (pure): a cited LINE or CELL often holds more than the value;
the desk boxes the value itself and `value_grounded` judges those words."""

from __future__ import annotations

import re
from dataclasses import replace
from decimal import Decimal
from typing import Any

from extraction.grounding import supports
from extraction.numbers import digit_words, parse_digit_words, parse_number
from extraction.ocr.blocks import BlockType, OcrBlock
from extraction.proof_blocks import BlockIndex, ResolvedProof, resolved
from extraction.violations import RuleContext

_MAX_SPAN = 8  # words; a value longer than this is judged on its whole block


def visual_rows(words: list[OcrBlock]) -> list[list[OcrBlock]]:
    """Words grouped into the rows the page prints them on, each row left to right.

    A word joins the current row when its vertical centre lies within half the median word height of the
    row's centre: the tolerance comes from the text itself, so it holds at any print size or resolution.
    """
    if not words:
        return []
    heights = sorted(w.bbox.height for w in words)
    half = heights[len(heights) // 2] / 2
    rows: list[list[OcrBlock]] = []
    centre = 0.0
    for w in sorted(words, key=lambda w: w.bbox.top + w.bbox.height / 2):
        middle = w.bbox.top + w.bbox.height / 2
        if rows and abs(middle - centre) <= half:
            rows[-1].append(w)
            centre = sum(x.bbox.top + x.bbox.height / 2 for x in rows[-1]) / len(rows[-1])
        else:
            rows.append([w])
            centre = middle
    return [sorted(row, key=lambda w: w.bbox.left) for row in rows]


def _token_kind(text: str) -> str:
    """'digits' for a word holding a numeral ('0056', '$4.11', 'n°562044387'), 'word' for a spelled digit
    word, '' for anything else."""
    t = text.strip(".,;:()[]")
    if any(c.isdigit() for c in t):
        return "digits"
    return "word" if t and digit_words(t) is not None else ""


_GROUP = re.compile(r"\d{3}(?:[.,]\d+)?[^\w]*")  # a thousands group: '234' or '234,56' (and a trailing sign)
_LEAD = re.compile(r"[^\d]*\d{1,3}")  # the group before it: '1', '$1', '12'


def _continues(a: OcrBlock, b: OcrBlock, kind: str) -> bool:
    """Whether word b carries on the number that word a belongs to: digit words run on; numerals only as a
    thousands group after a word space ('1 234,56'), never across a column gap ('10.00 15.00%' is two)."""
    if kind == "word":
        return True
    return bool(_LEAD.fullmatch(a.text) and _GROUP.fullmatch(b.text)) and _gap(a, b) <= _char_width(a, b)


def _value_kind(value: Any, *, word_numbers: bool) -> str:
    """How a value is printed: 'number' and 'words' must be shown by a whole run on one row; 'text' (names,
    dates, codes) by any run, or by the whole block when it wraps over several rows."""
    if isinstance(value, int | float | Decimal) and not isinstance(value, bool):
        return "number"
    if isinstance(value, str):
        if word_numbers and parse_digit_words(value) is not None:
            return "words"
        if not any(c.isalpha() for c in value) and parse_number(value) is not None:
            return "number"  # an amount written as text ('1.234,56'); ids and codes hold letters
    return "text"


def numeric_runs(row: list[OcrBlock]) -> list[tuple[list[OcrBlock], str]]:
    """The runs of one printed row that print a number: consecutive digit words, or a numeral with the
    thousands groups that follow it after a word space. Each comes with the text to read it by: numerals are joined
    without their spaces ('1 234,56' is one number), digit words with them.

    The space allowed comes from the words themselves (one character's width), so two numbers in
    neighbouring columns stay two numbers at any print size.
    """
    runs: list[tuple[list[OcrBlock], str]] = []
    current: list[OcrBlock] = []
    kind = ""
    for w in row:
        k = _token_kind(w.text)
        if current and k == kind and k and _continues(current[-1], w, k):
            current.append(w)
            continue
        if current and kind:
            runs.append((current, ("" if kind == "digits" else " ").join(x.text for x in current)))
        current, kind = [w], k
    if current and kind:
        runs.append((current, ("" if kind == "digits" else " ").join(x.text for x in current)))
    return runs


def _gap(a: OcrBlock, b: OcrBlock) -> float:
    return b.bbox.left - a.bbox.right


def _char_width(a: OcrBlock, b: OcrBlock) -> float:
    chars = len(a.text) + len(b.text)
    return (a.bbox.width + b.bbox.width) / chars if chars else 0.0


def narrow_to_words(found: ResolvedProof, value: Any, *, index: BlockIndex, ctx: RuleContext) -> list[ResolvedProof]:
    """The words of a cited LINE or CELL that show `value`; the block itself when it has no words.

    A number (or a number spelled in digit words) is shown only by a whole run of numerals or digit words on
    one printed row, read as a whole: '6' is not shown by the last word of 'CERO CINCO SEIS', nor 234,56 by
    '1 234,56', nor by a cell that an engine merged over several table rows unless one of its rows prints
    it. Other values (names, dates, codes) by the shortest run of words on one row that shows them, first
    in reading order, or else by the block's whole text (a name may wrap over two rows of a cell).
    """
    if found.type not in (BlockType.LINE, BlockType.CELL) or value is None or isinstance(value, bool | list | dict):
        return [found]
    block = index.by_id.get(found.block_id)
    words = index.words_in(block) if block is not None else []
    if not words or (isinstance(value, str) and not value.strip()):
        return [found]
    word_numbers = ctx.word_numbers
    numeric = _value_kind(value, word_numbers=word_numbers) != "text"
    best: list[OcrBlock] | None = None
    for row in visual_rows(words):
        if numeric:
            for run, text in numeric_runs(row):
                if supports(value, text, word_numbers=word_numbers) and (best is None or len(run) < len(best)):
                    best = run
                    break
            continue
        for i in range(len(row)):
            for j in range(i, min(len(row), i + _MAX_SPAN)):
                if best is not None and j - i + 1 >= len(best):
                    break
                if supports(value, " ".join(w.text for w in row[i : j + 1]), word_numbers=word_numbers):
                    best = row[i : j + 1]
                    break
    if best is None:
        return [replace(found, shows_value=False) if numeric else found]
    return [replace(resolved(w, w.text, found.method, found.score), shows_value=True) for w in best]


def narrow_across(found: list[ResolvedProof], value: Any, *, index: BlockIndex,
                   ctx: RuleContext) -> list[ResolvedProof] | None:
    """The words showing a number that an engine cut into several cited blocks of one printed row (a wide
    gap inside 'CERO UNO | CINCO'): one run over the cited blocks' words together, on one visual row, and
    reaching into more than one of them. None when no such run shows the value."""
    words = [w for f in found if (b := index.by_id.get(f.block_id)) is not None for w in index.words_in(b)]
    if len({w.page for w in words}) != 1:
        return None
    for row in visual_rows(words):
        for run, text in numeric_runs(row):
            if len({w.parent for w in run}) > 1 and supports(value, text, word_numbers=ctx.word_numbers):
                return [replace(resolved(w, w.text, found[0].method, found[0].score), shows_value=True) for w in run]
    return None

