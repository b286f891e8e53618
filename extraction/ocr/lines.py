"""PAGE > LINE > WORD blocks from an engine's words, with lines rebuilt from word geometry (pure).

Every local engine (pdf-text, RapidOCR, Tesseract) hands its words here and gets the same kind of LINE:
a run of words on one visual row, cut at column gutters (see layout.text_lines), the lines in reading order
(columns one after the other, layout.reading_order). The engine's word boxes, texts and confidences are kept
as they are, but for a leader read into a word ('TUPAMARO---1'), which splits it (`split_leaders`); what an
engine said about its own lines is kept where it
still fits: a line's confidence is its engine line's (the lowest, when a rebuilt line joins several), and
its polygon is the engine line's, or the piece of it under the words when the line was cut at a gutter.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from extraction.ocr.blocks import BBox, BlockType, OcrBlock
from extraction.ocr.geometry import Box, PageSize, box_of, points_of
from extraction.ocr.layout import page_skew, reading_order, text_lines


@dataclass(frozen=True)
class EngineWord:
    text: str
    bbox: BBox  # 0..1 of the page
    confidence: float | None
    line: int | None = None  # the engine line it came from (an index into `engine_lines` when given)


@dataclass(frozen=True)
class EngineLine:
    confidence: float | None = None
    polygon: list[tuple[float, float]] | None = None


@dataclass
class PageLines:
    blocks: list[OcrBlock]  # PAGE, then each LINE followed by its WORDs, in reading order
    word_ids: list[str]  # the WORD block id of each input word, in input order (its first part's, if split)


def _fragments(words: Sequence[EngineWord], boxes: Sequence[Box]) -> list[Box]:
    """One upright box per line the engine read (its words sit level within it), and each word it placed in
    none: what the page's rows are chained from."""
    of_line: dict[int, list[Box]] = {}
    alone: list[Box] = []
    for word, box in zip(words, boxes, strict=True):
        if word.line is None:
            alone.append(box)
        else:
            of_line.setdefault(word.line, []).append(box)
    return [Box.enclosing(group) for group in of_line.values()] + alone


def build_page_lines(number: int, words: Sequence[EngineWord], *, size: PageSize,
                     engine_lines: Sequence[EngineLine] = (), keep_engine_order: bool = False,
                     scanned: bool = True) -> PageLines:
    """Blocks of one page of `size` (its unit is what lines are measured in; every block carries it). Lines
    read in rows top to bottom, left to right, unless `keep_engine_order` (the words are then in the engine's
    reading order, and each line takes the place of its first word). `scanned`: the words were read from an
    image (see layout.split_gutters), not from a text layer.
    """
    prefix = f"p{number}"
    page_block = OcrBlock(id=f"{prefix}-page", type=BlockType.PAGE, page=number, text="",
                          bbox=BBox(0.0, 0.0, 1.0, 1.0), order=0, page_size=size)
    blocks = [page_block]
    given, origin = words, []
    words = []
    for index, word in enumerate(given):
        pieces = split_leaders(word)
        words += pieces
        origin += [index] * len(pieces)
    word_ids = [""] * len(words)
    boxes = [box_of(w.bbox, size) for w in words]
    skew = page_skew(_fragments(words, boxes), [points_of(line.polygon, size) for line in engine_lines])
    lines = text_lines(boxes, [w.text for w in words], [w.line for w in words], scanned=scanned, skew=skew)
    if keep_engine_order:
        lines.sort(key=min)
    elif lines:
        # Columns of text read one after the other, not row by row across the page (layout.reading_order).
        order = reading_order([Box.enclosing(boxes[i] for i in line) for line in lines],
                              [" ".join(words[i].text for i in line) for line in lines], skew=skew)
        lines = [lines[k] for k in order]
    word_count = 0
    members: dict[int, list[int]] = {}
    for index, word in enumerate(words):
        if word.line is not None:
            members.setdefault(word.line, []).append(index)
    for line_number, line in enumerate(lines, start=1):
        line_id = f"{prefix}-l{line_number}"
        chosen = [words[i] for i in line]
        sources = {w.line for w in chosen if w.line is not None}
        polygon = None
        if len(sources) == 1 and next(iter(sources)) < len(engine_lines):
            source = next(iter(sources))
            polygon = engine_lines[source].polygon
            if polygon and sorted(members[source]) != sorted(line):
                box = BBox.enclosing([w.bbox for w in chosen])
                polygon = part_of_quad(polygon, box.left, box.right)
        blocks.append(OcrBlock(
            id=line_id, type=BlockType.LINE, page=number, text=_line_text(line, words, origin),
            bbox=BBox.enclosing([w.bbox for w in chosen]), confidence=_line_confidence(chosen, engine_lines),
            parent=page_block.id, order=len(blocks), polygon=polygon, page_size=size,
        ))
        for i in line:
            word_count += 1
            word_ids[i] = f"{prefix}-w{word_count}"
            blocks.append(OcrBlock(id=word_ids[i], type=BlockType.WORD, page=number, text=words[i].text,
                                   bbox=words[i].bbox, confidence=words[i].confidence, parent=line_id,
                                   order=len(blocks), page_size=size))
    first: dict[int, str] = {}
    for piece, index in enumerate(origin):
        first.setdefault(index, word_ids[piece])
    return PageLines(blocks=blocks, word_ids=[first[i] for i in range(len(given))])


def _line_text(line: Sequence[int], words: Sequence[EngineWord], origin: Sequence[int]) -> str:
    """A line's words joined by spaces, but for the parts of one engine word (split at a leader), which
    read as the engine read them."""
    out = ""
    for k, i in enumerate(line):
        glued = k > 0 and origin[i] == origin[line[k - 1]]
        out += ("" if glued or k == 0 else " ") + words[i].text
    return out


# A leader between a name and its figures that the engine read into one word with them ('TUPAMARO---1',
# '---006', 'PSUV........056'): three dots or more, or two dashes, underscores, equals signs or stars.
_LEADER = re.compile(r"(\.{3,}|…+|-{2,}|_{2,}|={2,}|\*{2,})")


def split_leaders(word: EngineWord) -> list[EngineWord]:
    """A word the engine read with a leader run into it, as its parts (the leader its own word), each with
    its share of the word's box by characters; any other word as it is."""
    parts = [p for p in _LEADER.split(word.text) if p]
    if len(parts) < 2:
        return [word]
    box, n, at, out = word.bbox, len(word.text), 0, []
    for part in parts:
        left = box.left + box.width * at / n
        out.append(replace(word, text=part, bbox=BBox(left, box.top, box.width * len(part) / n, box.height)))
        at += len(part)
    return out


def part_of_quad(quad: list[tuple[float, float]], left: float, right: float) -> list[tuple[float, float]] | None:
    """The piece of a line's quadrilateral (top-left, top-right, bottom-right, bottom-left) between two x.

    A line cut at a gutter keeps its slant: readers straighten a skewed scan from line polygons.
    """
    if len(quad) != 4:
        return None
    (tlx, tly), (trx, try_), (brx, bry), (blx, bly) = quad

    def at(x0: float, y0: float, x1: float, y1: float, x: float) -> tuple[float, float]:
        t = 0.0 if x1 == x0 else (x - x0) / (x1 - x0)
        return x, y0 + (y1 - y0) * t

    return [at(tlx, tly, trx, try_, left), at(tlx, tly, trx, try_, right),
            at(blx, bly, brx, bry, right), at(blx, bly, brx, bry, left)]


def _line_confidence(words: Sequence[EngineWord], engine_lines: Sequence[EngineLine]) -> float | None:
    """The engine's line confidence (the lowest of the lines joined); else the mean of the words'."""
    known = [engine_lines[w.line].confidence for w in words
             if w.line is not None and w.line < len(engine_lines)]
    known = [c for c in known if c is not None]
    if known:
        return min(known)
    scores = [w.confidence for w in words if w.confidence is not None]
    return sum(scores) / len(scores) if scores else None
