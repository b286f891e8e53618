"""Proof resolution and the two universal proof rules (pure).

A proof names a LINE or TABLE by the short id of the prompt, a WORD through its LINE and its text, a CELL
through its TABLE, row and column. Resolution finds the OcrBlocks: the cited id first; for a WORD the exact
text among the line's words, then a fuzzy match among them, then among the words of the line's page; for a
CELL the cell covering (row, column), checked against the value it claims to hold.

Every document type gets two rules: `proof_found` (a value has a proof that resolves) and
`value_grounded` (the cited text supports the value).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from decimal import Decimal
from fractions import Fraction
from typing import Any, Literal

import pydantic
from rapidfuzz import fuzz

from extraction.currency import ISO_4217, shows_currency
from extraction.doctypes.base import CellProof, LineProof, ProofRef, TableProof, WordProof
from extraction.ocr.blocks import BBox, BlockType, OcrBlock
from extraction.prompt_doc import PromptDocument
from extraction.rules import (
    Rule,
    RuleContext,
    Violation,
    dates_in_text,
    digit_word_runs,
    digit_words,
    fold,
    iter_fields,
    numbers_in_text,
    parse_dates,
    parse_digit_words,
    parse_fraction,
    parse_number,
)

__all__ = [
    "FUZZY_MIN",
    "BlockIndex",
    "ResolvedProof",
    "block_index",
    "describe_proof",
    "resolve_field",
    "resolve_proof",
    "resolve_proofs",
    "supports",
    "universal_rules",
]

FUZZY_MIN = 80  # rapidfuzz ratio (0..100) for a loose WORD/CELL reference to count as found
_TEXT_FUZZY_MIN = 90  # partial ratio for a text value to count as supported by its cited text

Method = Literal["id", "exact", "fuzzy"]
_REF = pydantic.TypeAdapter(ProofRef)


@dataclass(frozen=True)
class ResolvedProof:
    block_id: str
    page: int
    bbox: BBox
    type: str  # BlockType value of the block found
    text: str
    method: Method
    score: float  # 0..1; 1.0 for an id or exact match
    # Set by `narrow_to_words` for a number: True when these are the words that show it; False when the cited
    # block has words and no whole run of them on one printed row shows it; None when not judged there.
    shows_value: bool | None = field(default=None, compare=False)

    def to_dict(self) -> dict[str, Any]:
        b = self.bbox
        return {
            "block_id": self.block_id,
            "page": self.page,
            "type": self.type,
            "text": self.text,
            "method": self.method,
            "score": self.score,
            "bbox": {"left": b.left, "top": b.top, "width": b.width, "height": b.height},
        }


class BlockIndex:
    """Blocks by id, children by parent (in reading order) and words by page."""

    def __init__(self, blocks: Iterable[OcrBlock]) -> None:
        self.by_id: dict[str, OcrBlock] = {}
        self.children: dict[str, list[OcrBlock]] = defaultdict(list)
        self.words_by_page: dict[int, list[OcrBlock]] = defaultdict(list)
        self._cell_words: dict[str, list[OcrBlock]] = {}
        for b in blocks:
            self.by_id[b.id] = b
            if b.parent:
                self.children[b.parent].append(b)
            if b.type is BlockType.WORD:
                self.words_by_page[b.page].append(b)
        for kids in self.children.values():
            kids.sort(key=lambda b: b.order)
        for words in self.words_by_page.values():
            words.sort(key=lambda b: b.order)

    def words_of(self, block_id: str) -> list[OcrBlock]:
        return [b for b in self.children.get(block_id, []) if b.type is BlockType.WORD]

    def words_in(self, block: OcrBlock) -> list[OcrBlock]:
        """The WORD blocks that print a LINE or a CELL: a line's own words; a cell's words are those whose
        centre lies inside it (engines keep a word's LINE as its parent, even inside a table)."""
        if block.type is BlockType.LINE:
            return self.words_of(block.id)
        if block.type is not BlockType.CELL:
            return []
        if block.id not in self._cell_words:
            box = block.bbox
            self._cell_words[block.id] = [
                w for w in self.words_by_page.get(block.page, [])
                if box.left <= w.bbox.left + w.bbox.width / 2 <= box.right
                and box.top <= w.bbox.top + w.bbox.height / 2 <= box.bottom
            ]
        return self._cell_words[block.id]

    def cells_of(self, table_id: str) -> list[OcrBlock]:
        cells = [b for b in self.children.get(table_id, []) if b.type is BlockType.CELL]
        return sorted(cells, key=lambda c: (c.row or 0, c.column or 0))

    def text_of(self, block: OcrBlock) -> str:
        if block.type is BlockType.TABLE:
            rows: dict[int, list[str]] = defaultdict(list)
            for cell in self.cells_of(block.id):
                rows[cell.row or 0].append(self.text_of(cell))
            return "\n".join(" | ".join(t for t in row) for _, row in sorted(rows.items())) or block.text
        if block.text:
            return block.text
        return " ".join(w.text for w in self.words_of(block.id))

    def cell_at(self, table_id: str, row: int, column: int) -> OcrBlock | None:
        for c in self.cells_of(table_id):
            if (
                c.row is not None
                and c.column is not None
                and c.row <= row < c.row + max(c.row_span, 1)
                and c.column <= column < c.column + max(c.column_span, 1)
            ):
                return c
        return None


def _found(block: OcrBlock, text: str, method: Method, score: float) -> ResolvedProof:
    return ResolvedProof(
        block_id=block.id,
        page=block.page,
        bbox=block.bbox,
        type=str(block.type),
        text=text,
        method=method,
        score=round(score, 3),
    )


def _norm(text: str) -> str:
    return " ".join(fold(text).split()).strip(".,;:")


def _match_span(value: str, words: list[OcrBlock], *, allow_fuzzy: bool) -> list[ResolvedProof]:
    """The run of consecutive words that reads `value`: exact first, then (optionally) the best fuzzy run."""
    target = _norm(value)
    if not target or not words:
        return []
    size = len(target.split())
    squashed = target.replace(" ", "")
    sizes = sorted({max(1, size - 1), size, size + 1})
    for n in sizes:
        for i in range(len(words) - n + 1):
            span = words[i : i + n]
            text = _norm(" ".join(w.text for w in span))
            if text == target or (n != size and text.replace(" ", "") == squashed):
                return [_found(w, w.text, "exact", 1.0) for w in span]
    if not allow_fuzzy or len(squashed) < 3:
        return []  # a fuzzy match on one or two characters would find anything
    best: tuple[float, list[OcrBlock]] = (0.0, [])
    for n in sizes:
        for i in range(len(words) - n + 1):
            span = words[i : i + n]
            score = fuzz.ratio(target, _norm(" ".join(w.text for w in span)))
            if score > best[0]:
                best = (score, span)
    if best[0] >= FUZZY_MIN:
        return [_found(w, w.text, "fuzzy", best[0] / 100) for w in best[1]]
    return []


def _resolve_word(ref: WordProof, prompt: PromptDocument, index: BlockIndex) -> list[ResolvedProof]:
    line = index.by_id.get(prompt.line_ids.get(ref.line, ""))
    if line is not None:
        words = index.words_of(line.id)
        if words:
            found = _match_span(ref.value, words, allow_fuzzy=True)
            if found:
                return found
        else:  # an engine without WORD blocks: the line itself holds the word
            target, text = _norm(ref.value), _norm(line.text)
            if target and target in text:
                return [_found(line, line.text, "exact", 1.0)]
            score = fuzz.partial_ratio(target, text) if len(target) >= 3 else 0
            if score >= FUZZY_MIN:
                return [_found(line, line.text, "fuzzy", score / 100)]
        pages = [line.page]
    else:
        pages = sorted(index.words_by_page)
    for page in pages:
        found = _match_span(ref.value, index.words_by_page.get(page, []), allow_fuzzy=True)
        if found:
            # found away from the cited line: never better than fuzzy
            return [_found(index.by_id[f.block_id], f.text, "fuzzy", min(f.score, 0.99)) for f in found]
    return []


def _resolve_cell(ref: CellProof, prompt: PromptDocument, index: BlockIndex) -> list[ResolvedProof]:
    table = index.by_id.get(prompt.table_ids.get(ref.table, ""))
    if table is None:
        return []
    cell = index.cell_at(table.id, ref.row, ref.column)
    if ref.value is None or not ref.value.strip():
        return [_found(cell, index.text_of(cell), "id", 1.0)] if cell else []
    target = _norm(ref.value)
    if cell is not None:
        text = index.text_of(cell)
        if _norm(text) == target or target in _norm(text):
            return [_found(cell, text, "id", 1.0)]
        score = fuzz.ratio(target, _norm(text))
        if score >= FUZZY_MIN:
            return [_found(cell, text, "id", score / 100)]
    # The model may have miscounted rows or columns: look for the value in the other cells of the table.
    cells = index.cells_of(table.id)
    for c in cells:
        text = index.text_of(c)
        if _norm(text) == target:
            return [_found(c, text, "exact", 1.0)]
    if len(target.replace(" ", "")) >= 3:
        scored = [(fuzz.ratio(target, _norm(index.text_of(c))), c) for c in cells]
        if scored:
            score, best = max(scored, key=lambda s: s[0])
            if score >= FUZZY_MIN:
                return [_found(best, index.text_of(best), "fuzzy", score / 100)]
    # The addressed cell exists but holds something else: it is found; grounding will judge the value.
    return [_found(cell, index.text_of(cell), "id", 0.0)] if cell else []


def resolve_proof(ref: Any, *, prompt: PromptDocument, index: BlockIndex) -> list[ResolvedProof]:
    """The blocks one proof item points at (several for a WORD value spanning words); [] if none."""
    if not isinstance(ref, LineProof | TableProof | WordProof | CellProof):
        try:
            ref = _REF.validate_python(ref)
        except pydantic.ValidationError:
            return []
    if isinstance(ref, LineProof | TableProof):
        ids = prompt.line_ids if isinstance(ref, LineProof) else prompt.table_ids
        block = index.by_id.get(ids.get(ref.id, ""))
        return [_found(block, index.text_of(block), "id", 1.0)] if block else []
    if isinstance(ref, WordProof):
        return _resolve_word(ref, prompt, index)
    return _resolve_cell(ref, prompt, index)


def describe_proof(ref: Any) -> str:
    """'LINE 12', 'WORD "4°C" of LINE 5', 'CELL r2 c4 of TABLE 3'."""
    if not isinstance(ref, dict):
        return str(ref)
    kind = str(ref.get("type", "?")).upper()
    if kind in ("LINE", "TABLE"):
        return f"{kind} {ref.get('id')}"
    if kind == "WORD":
        return f"WORD {json.dumps(ref.get('value'), ensure_ascii=False)} of LINE {ref.get('line')}"
    if kind == "CELL":
        return f"CELL row {ref.get('row')} column {ref.get('column')} of TABLE {ref.get('table')}"
    return json.dumps(ref, ensure_ascii=False, default=str)


def block_index(ctx: RuleContext) -> BlockIndex:
    """The context's BlockIndex, built once."""
    if "block_index" not in ctx.cache:
        ctx.cache["block_index"] = BlockIndex(ctx.blocks)
    return ctx.cache["block_index"]


def resolve_field(node: dict[str, Any], ctx: RuleContext) -> list[ResolvedProof]:
    """Resolve a proved field's proofs in a rule context (memoised, so rules share work).

    A cited LINE or CELL that holds more than the value resolves to the words that show it (see
    `narrow_to_words`), so the desk boxes the value itself and `value_grounded` judges those words.
    """
    if ctx.prompt is None:
        return []
    memo: dict[str, list[ResolvedProof]] = ctx.cache.setdefault("resolved", {})
    value = node.get("value")
    out: list[ResolvedProof] = []
    seen: set[str] = set()
    for ref in node.get("proof") or []:
        key = json.dumps([ref, value], sort_keys=True, default=str)
        if key not in memo:
            index = block_index(ctx)
            found = resolve_proof(ref, prompt=ctx.prompt, index=index)
            memo[key] = [w for f in found for w in narrow_to_words(f, value, index=index, ctx=ctx)]
        for found in memo[key]:
            if found.block_id not in seen:
                seen.add(found.block_id)
                out.append(found)
    if len(out) > 1 and all(f.shows_value is False for f in out):
        return _narrow_across(out, value, index=block_index(ctx), ctx=ctx) or out
    return out


def _narrow_across(found: list[ResolvedProof], value: Any, *, index: BlockIndex,
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
                return [replace(_found(w, w.text, found[0].method, found[0].score), shows_value=True) for w in run]
    return None


def resolve_proofs(
    answer: dict[str, Any], *, prompt: PromptDocument, blocks: list[OcrBlock], word_numbers: bool = False
) -> dict[str, list[ResolvedProof]]:
    """Every proved field of the answer -> the blocks its proofs point at (an empty list when none)."""
    ctx = RuleContext(prompt=prompt, blocks=blocks, word_numbers=word_numbers)
    return {path: resolve_field(node, ctx) for path, node in iter_fields(answer)}


# --- the words of a cited block that show the value ---------------------------------------------------

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
    return [replace(_found(w, w.text, found.method, found.score), shows_value=True) for w in best]


# --- does the cited text support the value? ----------------------------------------------------------


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
    return len(a) >= 4 and fuzz.partial_ratio(a, b) >= _TEXT_FUZZY_MIN


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
    number = parse_number(value)
    if number is None and re.search(r"\d", value):
        number = parse_fraction(value)
    if number is not None:
        return _number_supported(Fraction(number), text, word_numbers=word_numbers)
    dates = parse_dates(value)
    if dates and dates & dates_in_text(text):
        return True
    return _text_supports(value, text)


# --- the two universal rules -------------------------------------------------------------------------


def _has_value(value: Any) -> bool:
    return value is not None and not (isinstance(value, str) and not value.strip())


def _proof_found(answer: dict[str, Any], ctx: RuleContext) -> list[Violation]:
    if ctx.prompt is None:  # the model saw no tagged text: nothing it could have cited
        return []
    out = []
    for path, node in iter_fields(answer):
        if not _has_value(node.get("value")):
            continue
        refs = node.get("proof") or []
        if not refs:
            out.append(
                Violation(
                    code="proof_found",
                    fields=(path,),
                    expected="at least one proof",
                    found="no proof",
                    message=f"{path}: the value {json.dumps(node['value'], ensure_ascii=False)} has no "
                    "proof; cite the LINE, WORD, CELL or TABLE it was read from",
                )
            )
        elif not resolve_field(node, ctx):
            cited = "; ".join(describe_proof(r) for r in refs)
            out.append(
                Violation(
                    code="proof_found",
                    fields=(path,),
                    expected="a proof that exists in the document",
                    found=cited,
                    message=f"{path}: its proof ({cited}) points at nothing in the document; cite ids that "
                    "appear in the text and copy WORD values exactly",
                )
            )
    return out


def _shorten(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _grounded(value: Any, found: list[ResolvedProof], *, word_numbers: bool) -> bool:
    """The words a proof narrowed to show the value by construction; a number is never shown by a block
    whose words all failed to show it (its text would join numbers of several rows); anything else is
    judged on the cited text."""
    if any(f.shows_value for f in found):
        return True
    text = " ".join(f.text for f in found if f.shows_value is not False)
    return bool(text) and supports(value, text, word_numbers=word_numbers)


def _value_grounded_rule(*, word_numbers: bool) -> Rule:
    def value_grounded(answer: dict[str, Any], ctx: RuleContext) -> list[Violation]:
        if ctx.prompt is None:
            return []
        out = []
        for path, node in iter_fields(answer):
            value = node.get("value")
            if not _has_value(value):
                continue
            found = resolve_field(node, ctx)
            if not found:
                continue  # proof_found already says so
            if _grounded(value, found, word_numbers=word_numbers):
                continue
            text = " ".join(f.text for f in found)
            shown = json.dumps(value, ensure_ascii=False)
            out.append(
                Violation(
                    code="value_grounded",
                    fields=(path,),
                    expected=value if isinstance(value, int | float | str) else shown,
                    found=_shorten(text),
                    message=f'{path}: the answer says {shown} but the cited text reads "{_shorten(text)}", '
                    "which does not show that value",
                )
            )
        return out

    return value_grounded


def universal_rules(*, word_numbers: bool = False) -> list[Rule]:
    """The proof rules every document type gets, after its own rules."""
    return [_proof_found, _value_grounded_rule(word_numbers=word_numbers)]
