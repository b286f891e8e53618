"""Token-sober rendering of OCR pages for the LLM, with short ids that map back to blocks (pure).

    # page 1
    L1 Invoice 42183017
    T1
    |Description|Qty|Amount
    |AWS Data Transfer|1|0.01
    L2 Thank you

- Short ids run across the whole document: L1..LN for lines and T1..TM for tables, in page order, then
  reading order (`OcrBlock.order`). Only rendered lines get a number. A line is `L<n> <text>`; a table is its
  tag `T<t>` on a line of its own, then one row per line, each starting with `|`, cells separated by `|`,
  no padding and no closing tag (the next `L` or `T` line ends it): the rendering costs little more than
  the plain text (bench/prompt_tokens.py).
- A LINE lying inside a TABLE's box is not rendered (the table carries its words); a table sits where its
  first such line would have been. A line whose words the table's cells do not hold is kept, so no text
  is lost when an engine's tables are incomplete.
- Table rows and columns count from 1 as rendered; every grid row is printed (even an empty one) so the
  model can count. A spanning cell is printed once, in its top-left slot; the slots it covers are empty.
- A proof names a cell as {"type": "CELL", "table": t, "row": r, "column": c}: `table_ids[t]` gives the TABLE
  block, `cell_at` the CELL covering (r, c). It names a word as {"type": "WORD", "line": n, "value": "4°C"}:
  `line_ids[n]` gives the LINE block, whose WORD children (parent == line id) are matched on the value.
"""

from __future__ import annotations

from collections.abc import Iterable

from extraction.ocr.blocks import BBox, BlockType, OcrBlock, OcrPage
from extraction.ocr.tagged_text import PromptDocument
from extraction.proofs.blocks import cell_covering

__all__ = ["PROOF_INSTRUCTIONS", "PromptDocument", "cell_at", "render_prompt"]

PROOF_INSTRUCTIONS = (
    "The document is given as OCR text. Each line starts with its id: L12 is LINE 12. A table starts with "
    "its id on a line of its own (T3 is TABLE 3), then one row per line starting with |, cells separated "
    "by |, rows and columns counted from 1 as shown. Answer every field as "
    '{"value": ..., "proof": [...]} where proof lists where you read the value: a line '
    '{"type": "LINE", "id": 12}, one word of a line {"type": "WORD", "line": 5, "value": "4°C"}, '
    'a whole table {"type": "TABLE", "id": 3}, or one table cell '
    '{"type": "CELL", "table": 3, "row": 2, "column": 4}. '
    "Use only ids that appear in the text, prefer the smallest proof (a cell or word over a whole table or "
    "line), and copy WORD values exactly as written."
)

_INSIDE = 0.5  # share of a line's area within a table box for the table to own it


def render_prompt(pages: list[OcrPage]) -> PromptDocument:
    """Render pages as tagged text; the maps send short LINE/TABLE ids back to OcrBlock ids."""
    out: list[str] = []
    line_ids: dict[int, str] = {}
    table_ids: dict[int, str] = {}
    for page in sorted(pages, key=lambda p: p.number):
        out.append(f"# page {page.number}")
        for unit in _units(page.blocks):
            if unit.type is BlockType.TABLE:
                table_ids[len(table_ids) + 1] = unit.id
                out.append(f"T{len(table_ids)}")
                cells = [b for b in page.blocks if b.type is BlockType.CELL and b.parent == unit.id]
                out += _table_rows(cells)
            else:
                line_ids[len(line_ids) + 1] = unit.id
                out.append(f"L{len(line_ids)} {_clean(unit.text)}")
    return PromptDocument(text="\n".join(out), line_ids=line_ids, table_ids=table_ids)


def cell_at(blocks: Iterable[OcrBlock], table_id: str, row: int, column: int) -> OcrBlock | None:
    """The CELL of table `table_id` at (row, column), spans included (`proof_blocks.cell_covering`)."""
    return cell_covering((b for b in blocks if b.type is BlockType.CELL and b.parent == table_id), row, column)


def _units(blocks: list[OcrBlock]) -> list[OcrBlock]:
    """Free LINEs and TABLEs of one page in reading order; a table takes the place of its first line.

    A line belongs to a table when it lies in the table's box and the table's cells hold its very words (each
    word's centre inside a cell that has text; for an engine that gives no words, the line's words among the
    cells' text); a line of the same words printed outside every cell (a part of the page the finder took
    into its box without a cell for it) stays a line, so no text is lost."""
    tables = [b for b in blocks if b.type is BlockType.TABLE]
    cells = {t.id: [b for b in blocks if b.type is BlockType.CELL and b.parent == t.id and b.text.strip()]
             for t in tables}
    cell_words = {t.id: {w for c in cells[t.id] for w in c.text.split()} for t in tables}
    lines = sorted((b for b in blocks if b.type is BlockType.LINE), key=lambda b: b.order)
    words: dict[str, list[OcrBlock]] = {}
    for b in blocks:
        if b.type is BlockType.WORD and b.parent:
            words.setdefault(b.parent, []).append(b)
    key = {b.id: b.order for b in lines}
    owned: set[str] = set()
    for t in tables:
        mine = [
            ln for ln in lines
            if ln.id not in owned
            and _share_inside(ln.bbox, t.bbox) >= _INSIDE
            and (all(any(_centre_in(w.bbox, c.bbox) for c in cells[t.id]) for w in words[ln.id]) if ln.id in words
                 else set(ln.text.split()) <= cell_words[t.id])
        ]
        owned.update(ln.id for ln in mine)
        key[t.id] = min((ln.order for ln in mine), default=t.order)
    units = [b for b in lines if b.id not in owned] + tables
    return sorted(units, key=lambda b: (key[b.id], b.type is BlockType.LINE))


def _centre_in(inner: BBox, outer: BBox) -> bool:
    x, y = inner.left + inner.width / 2, inner.top + inner.height / 2
    return outer.left <= x <= outer.right and outer.top <= y <= outer.bottom


def _table_rows(cells: list[OcrBlock]) -> list[str]:
    placed = [c for c in cells if c.row and c.column]
    if not placed:
        return []
    rows = max(c.row + max(c.row_span, 1) - 1 for c in placed)  # type: ignore[operator]
    cols = max(c.column + max(c.column_span, 1) - 1 for c in placed)  # type: ignore[operator]
    grid = [[""] * cols for _ in range(rows)]
    for c in placed:
        grid[c.row - 1][c.column - 1] = _clean(c.text).replace("|", "\\|")  # type: ignore[operator]
    return ["|" + "|".join(row) for row in grid]


def _clean(text: str) -> str:
    return " ".join(text.split())


def _share_inside(inner: BBox, outer: BBox) -> float:
    w = min(inner.right, outer.right) - max(inner.left, outer.left)
    h = min(inner.bottom, outer.bottom) - max(inner.top, outer.top)
    area = inner.width * inner.height
    return 0.0 if w <= 0 or h <= 0 or area <= 0 else (w * h) / area
