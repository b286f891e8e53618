"""A second OCR engine's reading of the places the proofs cite (pure): one of the confidence signals.

Two engines err differently (a blurred 3 that one reads as 8 the other may read right), so a value whose
cited place a second engine reads otherwise is less sure, and one both engines read alike is surer. The
second engine's words are kept per page as `[text, left, top, width, height]` (fractions of the page); a
field agrees when those words inside the place its proofs cite show its value, by the same check that
grounds a value in its own proofs (`grounding.supports`). A field without resolved proofs, or cited only on
pages the second engine did not read, has no verdict (the signal stays neutral).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from extraction.ocr.blocks import BlockType, OcrPage
from extraction.ocr.geometry import NoPageSize, box_of
from extraction.proofs.blocks import ResolvedProof
from extraction.proofs.grounding import supports
from extraction.proofs.resolve import resolve_path
from extraction.rules.answers import iter_fields
from extraction.rules.violations import RuleContext

# How far around a cited box a second engine's word may lie, in heights of that box: engines draw a word's
# box a little differently, and the centre of a word must still fall in the place cited.
MARGIN = 0.5

Word = Sequence[Any]  # [text, left, top, width, height]


def page_words(page: OcrPage) -> list[list[Any]]:
    """A page's words as the second engine read them (its lines where it gives no words)."""
    kept = [b for b in page.blocks if b.type is BlockType.WORD] or [
        b for b in page.blocks if b.type is BlockType.LINE]
    return [[b.text, b.bbox.left, b.bbox.top, b.bbox.width, b.bbox.height] for b in kept if b.text.strip()]


def _inside(word: Word, found: ResolvedProof, margin: float) -> bool:
    """Whether a second engine's word (fractions of the page) stands in the cited box, `margin` of the box's
    height around it on every side, measured in the page's unit."""
    _, left, top, width, height = word
    size = found.page_size
    if size is None:
        raise NoPageSize(f"the proof {found.block_id} carries no page size, so it cannot be measured")
    box = box_of(found.bbox, size)
    x, y = (left + width / 2) * size.width, (top + height / 2) * size.height
    pad = margin * box.height
    return box.x0 - pad <= x <= box.x1 + pad and box.y0 - pad <= y <= box.y1 + pad


def second_engine_agreement(*, answer: dict[str, Any], ctx: RuleContext,
                            words_by_page: Mapping[int, Sequence[Word]], margin: float = MARGIN) -> dict[str, bool]:
    """path -> whether the second engine's words in the places the field's proofs cite show its value; only
    for fields with a value and a proof on a page the second engine read."""
    out: dict[str, bool] = {}
    if ctx.prompt is None or not words_by_page:
        return out
    for path, node in iter_fields(answer):
        value = node.get("value")
        if value is None or (isinstance(value, str) and not value.strip()):
            continue
        cited = [f for f in resolve_path(answer, path, node, ctx) if f.page in words_by_page]
        if not cited:
            continue
        seen = {id(w): w for f in cited for w in words_by_page[f.page] if _inside(w, f, margin)}
        text = " ".join(str(w[0]) for w in _reading_order(list(seen.values())))
        out[path] = bool(text.strip()) and supports(value, text, word_numbers=ctx.word_numbers)
    return out


def _reading_order(words: list[Word]) -> list[Word]:
    """Words line by line, left to right: a word starts a new line when its centre is more than half its
    height below the line's first word (digit words must keep their order: UNO CERO is not CERO UNO)."""
    lines: list[list[Word]] = []
    for w in sorted(words, key=lambda w: w[2] + w[4] / 2):
        centre = w[2] + w[4] / 2
        if lines and centre - (lines[-1][0][2] + lines[-1][0][4] / 2) <= w[4] / 2:
            lines[-1].append(w)
        else:
            lines.append([w])
    return [w for line in lines for w in sorted(line, key=lambda w: w[1])]
