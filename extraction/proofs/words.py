"""The words of a cited block that show the value (pure): a cited LINE or CELL often holds more than the value;
the desk boxes the value itself and `value_grounded` judges those words."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from typing import Any

from extraction.ocr.blocks import BlockType, OcrBlock
from extraction.ocr.page_rows import PageRows, page_skew
from extraction.proofs.blocks import BlockIndex, ResolvedProof, resolved
from extraction.proofs.grounding import supports
from extraction.rules.violations import RuleContext
from extraction.values.numbers import parse_digit_words, parse_number

_MAX_SPAN = 8  # words; a value longer than this is judged on its whole block


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


def page_rows(index: BlockIndex, page: int, ctx: RuleContext) -> PageRows:
    """The page's rows of words, built once per context (they depend on the blocks only)."""
    memo: dict[int, PageRows] = ctx.cache.setdefault("page_rows", {})
    if page not in memo:
        words = index.words_by_page.get(page, [])
        lines = [b for b in index.by_id.values() if b.type is BlockType.LINE and b.page == page]
        memo[page] = PageRows(words, skew=page_skew(lines, words))
    return memo[page]


def narrow_to_words(found: ResolvedProof, value: Any, *, index: BlockIndex, ctx: RuleContext,
                    anchor: str | None = None) -> list[ResolvedProof]:
    """The words of a cited LINE, CELL or WORD that show `value`; the block itself when it has no words.

    A number (or a number spelled in digit words) is shown only by a whole number of the page (see
    extraction/ocr/page_rows.py) that the cited block prints some of: '6' is not shown by the last word of 'CERO
    CINCO SEIS', nor 234,56 by '1 234,56', while 55 is shown by '0 5 5' printed one digit per box, even where
    the proof cites one box. Other values (names, dates, codes) by the shortest run of the block's words on
    one page row that shows them, or else by the block's whole text (a name may wrap over two rows of a cell).

    Where the block shows the value more than once (a cell an engine merged over a group of rows), the
    proof is the occurrence on the row of `anchor`, the label of the field's row (a party's name), when one
    stands there; else the first in reading order.
    """
    if found.type not in (BlockType.LINE, BlockType.CELL, BlockType.WORD) or value is None or isinstance(
            value, bool | list | dict):
        return [found]
    block = index.by_id.get(found.block_id)
    if block is None:
        return [found]
    words = [block] if block.type is BlockType.WORD else index.words_in(block)
    if not words or (isinstance(value, str) and not value.strip()):
        return [found]
    word_numbers = ctx.word_numbers
    numeric = _value_kind(value, word_numbers=word_numbers) != "text"
    rows = page_rows(index, block.page, ctx)
    shown: list[list[OcrBlock]] = []
    if numeric:
        runs = rows.runs_of(words)
        if not runs and block.type is BlockType.WORD:
            return [found]  # a word that reads as no number (a letter for a digit): judged on its text
        shown = [list(run.words) for run in runs if supports(value, run.text, word_numbers=word_numbers)]
        if not shown:
            # Where the geometry did not join the words (digit words set wider apart than a word space, say),
            # that is doubt, not evidence: each printed row of the block is read as text, the numbers the
            # geometry did join kept whole ('0 5 5' printed one digit per box still reads 055, never 5).
            printed = [_printed_tokens(row, rows) for row in rows.by_row(words)]
            shown = [span for row in printed if (span := _shortest_span(row, value, word_numbers))]
            if not shown:
                reading = " | ".join(" ".join(text for text, _ in row) for row in printed)
                return [replace(found, shows_value=False, reading=reading)]
            shown = [[w for _, token in span for w in token] for span in shown]
    elif block.type is not BlockType.WORD:
        shown = [span for row in rows.by_row(words) if (span := _shortest_span(row, value, word_numbers))]
    if not shown:
        return [found]
    best = on_label_row(shown, rows, anchor)
    return [replace(resolved(w, w.text, found.method, found.score), shows_value=True) for w in best]


def _printed_tokens(row: list[OcrBlock], rows: PageRows) -> list[tuple[str, tuple[OcrBlock, ...]]]:
    """A printed row's words as they read: each number the page's geometry joined as one token (its run's
    text and every word of the run), every other word as itself."""
    tokens: list[tuple[str, tuple[OcrBlock, ...]]] = []
    last = None
    for w in row:
        run = rows.run_of(w.id)
        if run is None:
            tokens.append((w.text, (w,)))
        elif run is not last:
            tokens.append((run.text, run.words))
        last = run
    return tokens


def _text_of(item: Any) -> str:
    return item.text if isinstance(item, OcrBlock) else item[0]


def _shortest_span(row: list, value: Any, word_numbers: bool) -> list | None:
    """The shortest run of a row's items (words, or printed tokens) whose text shows `value`."""
    best: list | None = None
    for i in range(len(row)):
        for j in range(i, min(len(row), i + _MAX_SPAN)):
            if best is not None and j - i + 1 >= len(best):
                break
            if supports(value, " ".join(_text_of(x) for x in row[i : j + 1]), word_numbers=word_numbers):
                best = row[i : j + 1]
                break
    return best


def on_label_row(spans: list[list[OcrBlock]], rows: PageRows, anchor: str | None) -> list[OcrBlock]:
    """Of several spans that show a value, the one on a row where the field's label is printed, nearest to
    it; else one on the next line of the label's item (a form that prints the figures under their name,
    `PageRows.head_of`), under it; the first when none is (or the field has no label)."""
    if len(spans) == 1 or not anchor:
        return spans[0]
    labels = rows.labels(anchor)
    if not labels:
        return spans[0]

    def cost(span: list[OcrBlock]) -> tuple[int, bool, float]:
        row = rows.row_of.get(span[0].id)
        box = rows.box(span[0])
        gaps = [abs(box.x0 - right) for r, _, right in labels if r == row]
        if gaps:
            return (0, False, min(gaps))
        head = rows.head_of(row) if row is not None else None
        under = [(box.x0 < left - box.height, abs(box.x0 - left)) for r, left, _ in labels if r == head]
        return (1, *min(under)) if under else (2, False, 0.0)

    return min(spans, key=cost)
