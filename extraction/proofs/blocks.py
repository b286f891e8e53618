"""The blocks a proof resolved to (pure): `ResolvedProof`, and `BlockIndex` over a document's OCR blocks."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from extraction.ocr.blocks import BBox, BlockType, OcrBlock
from extraction.ocr.geometry import PageSize

Method = Literal["id", "exact", "fuzzy"]


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
    # The size of the block's page (geometry.PageSize), to measure the box in the page's unit.
    page_size: PageSize | None = field(default=None, compare=False)
    # Where a number's proof does not show it (shows_value False): the cited block as it was read, its printed
    # rows apart (" | ") and each number of a row as one word; what a violation quotes.
    reading: str | None = field(default=None, compare=False)

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
        return cell_covering(self.cells_of(table_id), row, column)


def cell_covering(cells: Iterable[OcrBlock], row: int, column: int) -> OcrBlock | None:
    """The cell at (row, column): the one whose own slot it is, as the prompt prints it there (a table finder
    may return cells that overlap), else the one whose span covers it; None if there is none."""
    covering = None
    for c in cells:
        if c.row is None or c.column is None:
            continue
        if (c.row, c.column) == (row, column):
            return c
        if covering is None and c.row <= row < c.row + max(c.row_span, 1) and c.column <= column < c.column + max(
                c.column_span, 1):
            covering = c
    return covering


def resolved(block: OcrBlock, text: str, method: Method, score: float) -> ResolvedProof:
    """A proof resolved to `block`, found by `method` with `score` (0..1)."""
    return ResolvedProof(
        block_id=block.id,
        page=block.page,
        bbox=block.bbox,
        type=str(block.type),
        text=text,
        method=method,
        score=round(score, 3),
        page_size=block.page_size,
    )
