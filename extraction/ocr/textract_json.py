"""Textract JSON (AnalyzeDocument / GetDocumentAnalysis) as OcrPages (pure): the parsing and the reading order.

Mapping decisions
- Kept block types: PAGE, LINE, WORD, TABLE, CELL. Everything else (KEY_VALUE_SET, QUERY, SIGNATURE,
  SELECTION_ELEMENT, TABLE_TITLE, LAYOUT_*, ...) is skipped; their text is still present as LINEs.
- MERGED_CELL is *folded*: the merged cell becomes one CELL block (Textract's MERGED_CELL Id, its row/column,
  row_span/column_span > 1, text built from its child cells' words in row-major order) and the child cells it
  covers are dropped. One block per visual cell is what a reviewer sees, the prompt renders it once, and a
  proof naming any (row, column) inside the span resolves to it through the spans (see prompt.cell_at).
- LINEs are Textract's, except that a LINE whose words lie on two visual rows is cut into one LINE per row
  (`_split_lines`; see extraction/ocr/layout.py). CELLs are Textract's: its table structure is the truth.
- Parents: WORD -> its LINE, LINE -> PAGE, TABLE -> PAGE, CELL -> TABLE. Cell text is built from the cell's
  CHILD WORDs (the WORD blocks keep their LINE parent).
- Confidence is scaled to 0..1; boxes are clamped to 0..1 (Textract sometimes returns -0.0001).
- Reading order (`order`, per page): Textract's own LINE order interleaves the rows of side-by-side text
  columns, so LINEs not inside a table plus TABLEs are ordered by a recursive XY-cut (`reading_order`); the
  lines inside a table follow the table, each WORD follows its LINE, CELLs follow in row-major order.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from extraction.ocr.blocks import BBox, BlockType, OcrBlock, OcrError, OcrPage
from extraction.ocr.geometry import PageSize, block_box, box_of
from extraction.ocr.layout import estimate_skew, visual_rows
from extraction.ocr.layout import reading_order as layout_reading_order

_KEPT = {"PAGE", "LINE", "WORD", "TABLE", "CELL"}




def parse_textract(response: dict | list[dict], *, sizes: Mapping[int, PageSize]) -> list[OcrPage]:
    """Convert Textract JSON (one response, or the paginated responses of one job) into pages, in order.

    Textract gives boxes in fractions of the page only; `sizes` (page number -> the page image's size) is what
    its geometry is measured in."""
    responses = [response] if isinstance(response, dict) else list(response)
    raw: list[dict] = []
    for part in responses:
        blocks = part.get("Blocks") if isinstance(part, dict) else None
        if not isinstance(blocks, list):
            raise OcrError("Not a Textract response: no 'Blocks' list.")
        raw.extend(blocks)
    by_id = {b["Id"]: b for b in raw if isinstance(b, dict) and "Id" in b and "BlockType" in b}
    pages: dict[int, OcrPage] = {}
    for b in by_id.values():
        if b["BlockType"] == "PAGE":
            number = _page_of(b)
            pages.setdefault(number, OcrPage(number=number, engine="textract"))
    if not pages and by_id:
        pages[1] = OcrPage(number=1, engine="textract")
    grouped: dict[int, list[dict]] = {n: [] for n in pages}
    for b in by_id.values():
        if b["BlockType"] in _KEPT:
            grouped.setdefault(_page_of(b), []).append(b)
            pages.setdefault(_page_of(b), OcrPage(number=_page_of(b), engine="textract"))
    for number, page in pages.items():
        if number not in sizes:
            raise OcrError(f"Textract read a page {number} that the document does not have.")
        page.blocks = _page_blocks(number, grouped.get(number, []), by_id, sizes[number])
    return [pages[n] for n in sorted(pages)]


def load_textract_json(data: bytes | str, *, sizes: Mapping[int, PageSize]) -> list[OcrPage]:
    """Parse an admin-attached Textract JSON: a response, a list of responses, or a bare {"Blocks": [...]}.

    Anything else, however malformed (nested past the parser's stack, a box that is not numbers), is an
    OcrError with a message for the admin, never a crash.
    """
    try:
        payload = json.loads(data, parse_constant=_no_constant)
    except RecursionError:
        raise OcrError("The attached JSON is nested far too deeply to be a Textract response.") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise OcrError(f"The attached file is not JSON: {exc}") from exc
    if isinstance(payload, dict):
        payload = [payload]
    if not isinstance(payload, list) or not payload or not all(isinstance(p, dict) for p in payload):
        raise OcrError("The attached JSON is not a Textract response (expected an object with 'Blocks').")
    for part in payload:
        blocks = part.get("Blocks")
        if not isinstance(blocks, list) or not all(
            isinstance(b, dict) and "Id" in b and "BlockType" in b for b in blocks
        ):
            raise OcrError(
                "The attached JSON is not a Textract response (each part needs 'Blocks' with Ids)."
            )
    if not any(b["BlockType"] == "PAGE" for part in payload for b in part["Blocks"]):
        raise OcrError("The attached Textract JSON has no PAGE block.")
    try:
        return parse_textract(payload, sizes=sizes)
    except (TypeError, ValueError, KeyError, AttributeError, RecursionError) as exc:
        raise OcrError(
            "The attached Textract JSON has a value of the wrong kind (a box, page number or confidence that is "
            f"not a number, or a block of the wrong shape): {type(exc).__name__}: {str(exc)[:200]}"
        ) from None


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number a Textract response can hold")


def _page_of(b: dict) -> int:
    return int(b.get("Page") or 1)


def _children(b: dict, kind: str = "CHILD") -> list[str]:
    return [i for r in b.get("Relationships") or [] if r.get("Type") == kind for i in r.get("Ids") or []]


def _bbox(b: dict) -> BBox:
    g = (b.get("Geometry") or {}).get("BoundingBox") or {}
    left = min(max(float(g.get("Left", 0.0)), 0.0), 1.0)
    top = min(max(float(g.get("Top", 0.0)), 0.0), 1.0)
    width = min(max(float(g.get("Width", 0.0)), 0.0), 1.0 - left)
    height = min(max(float(g.get("Height", 0.0)), 0.0), 1.0 - top)
    return BBox(left, top, width, height)


def _polygon(b: dict) -> list[tuple[float, float]] | None:
    points = (b.get("Geometry") or {}).get("Polygon")
    return [(float(p["X"]), float(p["Y"])) for p in points] if points else None


def _confidence(b: dict) -> float | None:
    c = b.get("Confidence")
    return None if c is None else min(max(float(c) / 100.0, 0.0), 1.0)


def _words_text(ids: Iterable[str], by_id: dict[str, dict]) -> str:
    return " ".join(by_id[i].get("Text", "") for i in ids if by_id.get(i, {}).get("BlockType") == "WORD")


def _block(b: dict, kind: BlockType, page: int, text: str, parent: str | None, size: PageSize,
           **extra: Any) -> OcrBlock:
    return OcrBlock(
        id=b["Id"], type=kind, page=page, text=text, bbox=_bbox(b), confidence=_confidence(b),
        parent=parent, polygon=_polygon(b), page_size=size, **extra,
    )


def _page_blocks(number: int, raw: list[dict], by_id: dict[str, dict], size: PageSize) -> list[OcrBlock]:
    page_raw = next((b for b in raw if b["BlockType"] == "PAGE"), None)
    page_id = page_raw["Id"] if page_raw else f"page-{number}"
    page_block = (
        _block(page_raw, BlockType.PAGE, number, "", None, size)
        if page_raw
        else OcrBlock(id=page_id, type=BlockType.PAGE, page=number, text="", bbox=BBox(0, 0, 1, 1), page_size=size)
    )

    lines = [b for b in raw if b["BlockType"] == "LINE"]
    word_parent = {w: ln["Id"] for ln in lines for w in _children(ln)}
    word_blocks = {
        b["Id"]: _block(b, BlockType.WORD, number, b.get("Text", ""), word_parent.get(b["Id"], page_id), size)
        for b in raw
        if b["BlockType"] == "WORD"
    }
    line_blocks = _split_lines(
        [_block(b, BlockType.LINE, number, b.get("Text", ""), page_id, size) for b in lines],
        {ln["Id"]: [word_blocks[w] for w in _children(ln) if w in word_blocks] for ln in lines},
        skew=estimate_skew([block_box(w) for w in word_blocks.values()]),
    )
    tables: list[tuple[OcrBlock, list[OcrBlock]]] = []
    for t in (b for b in raw if b["BlockType"] == "TABLE"):
        cells = _table_cells(t, by_id, number, size)
        text = "\n".join(
            " | ".join(c.text for c in cells if c.row == r) for r in sorted({c.row for c in cells})
        )
        tables.append((_block(t, BlockType.TABLE, number, text, page_id, size), cells))

    # Reading order: free lines and whole tables are the units; a line mostly inside a table belongs to it.
    table_of_line: dict[str, int] = {}
    for ln in line_blocks:
        for k, (tb, _) in enumerate(tables):
            if _overlap_ratio(ln.bbox, tb.bbox) >= 0.5:
                table_of_line[ln.id] = k
                break
    units: list[OcrBlock] = [ln for ln in line_blocks if ln.id not in table_of_line] + [t for t, _ in tables]
    words_of: dict[str, list[OcrBlock]] = {}
    for w in word_blocks.values():
        words_of.setdefault(w.parent or "", []).append(w)

    out: list[OcrBlock] = [page_block]
    for unit in (units[i] for i in reading_order([u.bbox for u in units], size=size, texts=[u.text for u in units])):
        if unit.type is BlockType.LINE:
            out += [unit, *words_of.get(unit.id, [])]
            continue
        k = next(i for i, (t, _) in enumerate(tables) if t is unit)
        out.append(unit)
        for ln in line_blocks:
            if table_of_line.get(ln.id) == k:
                out += [ln, *words_of.get(ln.id, [])]
        out += tables[k][1]
    seen = {b.id for b in out}
    out += [w for w in word_blocks.values() if w.id not in seen]  # words no LINE claims (rare)
    for i, b in enumerate(out):
        b.order = i
    return out


def _split_lines(lines: list[OcrBlock], words_of: dict[str, list[OcrBlock]], *, skew: float) -> list[OcrBlock]:
    """Textract's LINEs, each cut into one LINE per visual row its words lie on (layout.visual_rows).

    Textract's lines are kept as they are unless they join two rows (it happens on skewed or tightly set
    pages); the first part keeps the LINE's id, the others get "<id>-2", "<id>-3", ... Their WORDs are
    re-parented, so a WORD's LINE holds it on its row.
    """
    out: list[OcrBlock] = []
    for line in lines:
        words = words_of.get(line.id, [])
        rows = visual_rows([block_box(w) for w in words], skew=skew) if len(words) > 1 else []
        if len(rows) < 2:
            out.append(line)
            continue
        for k, row in enumerate(rows, start=1):
            part = [words[i] for i in sorted(row)]  # in Textract's own word order
            part_id = line.id if k == 1 else f"{line.id}-{k}"
            for word in part:
                word.parent = part_id
            out.append(replace(line, id=part_id, text=" ".join(w.text for w in part), polygon=None,
                               bbox=BBox.enclosing([w.bbox for w in part])))
    return out


def _table_cells(table: dict, by_id: dict[str, dict], page: int, size: PageSize) -> list[OcrBlock]:
    cells: dict[str, OcrBlock] = {}
    for cid in _children(table):
        c = by_id.get(cid)
        if c is None or c.get("BlockType") != "CELL":
            continue
        cells[cid] = _block(
            c, BlockType.CELL, page, _words_text(_children(c), by_id), table["Id"], size,
            row=int(c.get("RowIndex", 1)), column=int(c.get("ColumnIndex", 1)),
            row_span=int(c.get("RowSpan", 1)), column_span=int(c.get("ColumnSpan", 1)),
        )
    for mid in _children(table, "MERGED_CELL"):
        m = by_id.get(mid)
        if m is None or m.get("BlockType") != "MERGED_CELL":
            continue
        covered = sorted(
            (cells.pop(i) for i in _children(m) if i in cells), key=lambda c: (c.row or 0, c.column or 0)
        )
        text = " ".join(c.text for c in covered if c.text)
        cells[mid] = _block(
            m, BlockType.CELL, page, text, table["Id"], size,
            row=int(m.get("RowIndex", 1)), column=int(m.get("ColumnIndex", 1)),
            row_span=int(m.get("RowSpan", 1)), column_span=int(m.get("ColumnSpan", 1)),
        )
    return sorted(cells.values(), key=lambda c: (c.row or 0, c.column or 0))


def _overlap_ratio(inner: BBox, outer: BBox) -> float:
    """Share of `inner`'s area that lies inside `outer`."""
    w = min(inner.right, outer.right) - max(inner.left, outer.left)
    h = min(inner.bottom, outer.bottom) - max(inner.top, outer.top)
    area = inner.width * inner.height
    return 0.0 if w <= 0 or h <= 0 or area <= 0 else (w * h) / area


# --------------------------------------------------------------------------------------------- reading order


def reading_order(bboxes: Sequence[BBox], *, size: PageSize, texts: Sequence[str] | None = None) -> list[int]:
    """Indices of `bboxes` (fractions of a page of `size`) in reading order (`layout.reading_order`)."""
    return layout_reading_order([box_of(b, size) for b in bboxes], texts)
