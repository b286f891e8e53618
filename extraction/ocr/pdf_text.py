"""Read the text layer of born-digital PDFs with PyMuPDF: exact text, no OCR.

Produces PAGE > LINE > WORD from page.get_text("words") (lines rebuilt from word geometry, see
extraction/ocr/lines.py) and PAGE > TABLE > CELL from page.find_tables(), its rows refined by word
geometry (layout.refine_rows, layout.split_spanning_cells). Cell text is rebuilt from the words inside each cell, because
Table.extract() drops the spaces between words.
"""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pymupdf

from extraction.ocr.blocks import BBox, BlockType, OcrBlock, OcrError, OcrPage, SourceDocument
from extraction.ocr.geometry import Box, PageSize
from extraction.ocr.layout import (
    ITEM_TURNS,
    GridCell,
    estimate_skew,
    numbers_only,
    refine_rows,
    split_spanning_cells,
    turns_like_items,
    words_in_cells,
)
from extraction.ocr.lines import EngineWord, build_page_lines

# A page needs this many letters/digits to count as born-digital ...
MIN_TEXT_CHARS = 20
# ... and this many when images cover most of it (a scan with a stamped header is still a scan).
MIN_TEXT_CHARS_OVER_IMAGE = 200
MAX_GARBLED_SHARE = 0.1  # share of U+FFFD / private-use glyphs that marks a broken font encoding
EPS = 0.5  # points; tolerance when comparing table grid edges

logger = logging.getLogger(__name__)

Normalize = Callable[[Iterable[float]], BBox]


class PdfTextEngine:
    name = "pdf-text"

    def __init__(self, *, tables: bool = True) -> None:
        self.tables = tables

    def read(self, document: SourceDocument) -> list[OcrPage]:
        """One OcrPage per page in document.pages (all PDF pages when none were rendered)."""
        if document.kind != "pdf":
            raise OcrError("the pdf-text engine reads PDFs only; choose an OCR engine for images")
        with open_pdf(document.path) as doc:
            numbers = [p.number for p in document.pages] or list(range(1, doc.page_count + 1))
            pages = []
            for number in numbers:
                if not 1 <= number <= doc.page_count:
                    raise OcrError(f"the PDF has no page {number}")
                pages.append(read_pdf_page(doc.load_page(number - 1), number, tables=self.tables))
            return pages


def open_pdf(path: Path) -> pymupdf.Document:
    try:
        doc = pymupdf.open(path, filetype="pdf")
    except (RuntimeError, ValueError, OSError) as exc:
        raise OcrError("the file is not a readable PDF") from exc
    if doc.needs_pass:
        doc.close()
        raise OcrError("the PDF is password-protected")
    return doc


def has_usable_text_layer(pdf_path: Path, page_number: int) -> bool:
    """True when the page's text layer holds real text worth reading instead of OCR."""
    with open_pdf(pdf_path) as doc:
        if not 1 <= page_number <= doc.page_count:
            raise OcrError(f"the PDF has no page {page_number}")
        return page_has_usable_text(doc.load_page(page_number - 1))


def page_has_usable_text(page: pymupdf.Page) -> bool:
    chars = [c for c in page.get_text("text") if not c.isspace()]
    if not chars:
        return False
    garbled = sum(c == "\ufffd" or unicodedata.category(c) in ("Co", "Cc", "Cs") for c in chars)
    if garbled > MAX_GARBLED_SHARE * len(chars):
        return False
    real = sum(c.isalnum() for c in chars)
    needed = MIN_TEXT_CHARS_OVER_IMAGE if _image_coverage(page) >= 0.5 else MIN_TEXT_CHARS
    return real >= needed


def _image_coverage(page: pymupdf.Page) -> float:
    """Share of the page area painted by images (overlaps counted twice; capped at 1)."""
    unrotated = page.rect * page.derotation_matrix
    area = abs(unrotated) or 1.0
    covered = sum(abs(pymupdf.Rect(info["bbox"]) & unrotated) for info in page.get_image_info())
    return min(1.0, covered / area)


def read_pdf_page(page: pymupdf.Page, number: int, *, tables: bool = True) -> OcrPage:
    normalize = _normalizer(page)
    size = PageSize(page.rect.width or 1.0, page.rect.height or 1.0)  # points, as shown
    # PyMuPDF's own line grouping is not kept: lines are rebuilt from word geometry like every engine's.
    words = [w for w in page.get_text("words") if w[4].strip()]
    # PyMuPDF's (block, line) numbers only add cuts: its text runs stay apart unless a word space joins them.
    runs: dict[tuple[int, int], int] = {}
    built = build_page_lines(number, [
        EngineWord(text=w[4], bbox=normalize(w[:4]), confidence=1.0, line=runs.setdefault((w[5], w[6]), len(runs)))
        for w in words
    ], size=size, scanned=False)
    blocks = built.blocks
    if tables:
        # Cell text follows the reading order of the lines.
        rank = {block.id: k for k, block in enumerate(blocks)}
        ranked = sorted(range(len(words)), key=lambda i: rank[built.word_ids[i]])
        blocks.extend(_table_blocks(page, number, blocks[0].id, [words[i] for i in ranked], normalize,
                                    first_order=len(blocks), size=size))
    return OcrPage(number=number, blocks=blocks, engine=PdfTextEngine.name)


def _normalizer(page: pymupdf.Page) -> Normalize:
    """Map unrotated page coordinates (what get_text/find_tables return) to 0..1 of the shown page."""
    matrix = page.rotation_matrix
    width, height = page.rect.width or 1.0, page.rect.height or 1.0

    def normalize(coords: Iterable[float]) -> BBox:
        rect = (pymupdf.Rect(*coords) * matrix).normalize()
        left = min(max(rect.x0 / width, 0.0), 1.0)
        top = min(max(rect.y0 / height, 0.0), 1.0)
        right = min(max(rect.x1 / width, left), 1.0)
        bottom = min(max(rect.y1 / height, top), 1.0)
        return BBox(left, top, right - left, bottom - top)

    return normalize


def _table_blocks(page: pymupdf.Page, number: int, page_id: str, words: list[tuple],
                  normalize: Normalize, *, first_order: int, size: PageSize) -> list[OcrBlock]:
    """TABLE > CELL blocks from page.find_tables(), with rows refined by word geometry.

    The table finder draws rows from ruled lines only, so rows printed without a rule between them come
    out as one row whose cells hold several rows of text; layout.refine_rows splits them again.
    Geometry is done in the unrotated page space, where the finder works (points on both axes).
    """
    try:
        found = page.find_tables().tables
    except (RuntimeError, ValueError):  # detection is a heuristic; the lines still carry all the text
        logger.warning("table detection failed on page %s; keeping lines and words", number, exc_info=True)
        return []
    boxes = [Box(*w[:4]) for w in words]
    skew = estimate_skew(boxes)
    blocks: list[OcrBlock] = []
    for table_index, table in enumerate(found, start=1):
        table_id = f"p{number}-t{table_index}"
        blocks.append(OcrBlock(id=table_id, type=BlockType.TABLE, page=number, text="",
                               bbox=normalize(table.bbox), parent=page_id, order=first_order + len(blocks),
                               page_size=size))
        inside = [i for i, box in enumerate(boxes) if _centre_inside(box, table.bbox)]
        table_boxes = [boxes[i] for i in inside]
        cells = _grid_cells(table)
        words_in_cells(cells, table_boxes)
        refined = split_spanning_cells(refine_rows(cells, _bands(table), table_boxes, skew=skew), table_boxes, skew=skew)
        texts = {id(cell): " ".join(words[inside[k]][4] for k in sorted(cell.words)) for cell in refined}
        if _columns_of_items(refined, texts):
            blocks.pop()  # not a table: its lines stay as they are
            continue
        for cell in refined:
            blocks.append(OcrBlock(
                id=f"{table_id}-c{cell.row}.{cell.column}", type=BlockType.CELL, page=number,
                text=texts[id(cell)], bbox=normalize(cell.box),
                parent=table_id, order=first_order + len(blocks), row=cell.row, column=cell.column,
                row_span=cell.row_span, column_span=cell.column_span, page_size=size,
            ))
    return blocks


def _columns_of_items(cells: list[GridCell], texts: dict[int, str]) -> bool:
    """Whether what the finder took for a table is columns of printed items side by side (a sheet's lines
    flowed over two columns, its rows pairing lines of the one with lines of the other): every column long
    enough to tell turns, row after row, between a name and figures alone (a party's name, its count on the
    next line, the next party's name...). A table of records has a column of one kind of thing (its
    positions, quantities or amounts), even where a description column runs over a name and a date."""
    kinds: dict[int, list[tuple[int, bool]]] = {}
    for cell in cells:
        text = texts[id(cell)]
        if any(c.isalnum() for c in text):
            kinds.setdefault(cell.column, []).append((cell.row, numbers_only(text)))
    turning = [turns_like_items([figures for _, figures in sorted(column)])
               for column in kinds.values() if len(column) > ITEM_TURNS]  # long enough to tell
    return bool(turning) and all(turning)


def _grid_cells(table: Any) -> list[GridCell]:
    """The finder's cells on its grid: 1-based row/column, spans counted from the grid edges they cover.

    The finder may return a cell that reaches down over the cells of later rows (a blank row above a
    block of totals came out as one cell covering the totals); such a cell stops where those begin, so
    that every grid slot has one cell.
    """
    row_tops = [row.bbox[1] for row in table.rows]
    column_lefts = sorted({round(cell[0], 1) for row in table.rows for cell in row.cells if cell})
    cells = []
    for row_index, row in enumerate(table.rows, start=1):
        for column_index, cell in enumerate(row.cells, start=1):
            if cell is None:  # covered by a neighbour's span
                continue
            x0, y0, x1, y1 = cell
            cells.append(GridCell(
                row=row_index, column=column_index, box=(x0, y0, x1, y1),
                row_span=max(1, sum(y0 - EPS <= top < y1 - EPS for top in row_tops)),
                column_span=max(1, sum(x0 - EPS <= left < x1 - EPS for left in column_lefts)),
            ))
    for cell in cells:
        below = [other.row for other in cells
                 if cell.row < other.row < cell.row + cell.row_span
                 and other.column < cell.column + cell.column_span
                 and cell.column < other.column + other.column_span]
        if below:
            cell.row_span = min(below) - cell.row
            cell.box = (*cell.box[:3], row_tops[min(below) - 1])
    return cells


def _bands(table: Any) -> list[tuple[float, float]]:
    """(top, bottom) of each grid row, a row ending where the next begins."""
    rows = table.rows
    return [(row.bbox[1], min(row.bbox[3], rows[k + 1].bbox[1]) if k + 1 < len(rows) else row.bbox[3])
            for k, row in enumerate(rows)]


def _centre_inside(box: tuple, rect: tuple) -> bool:
    x, y = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    return rect[0] <= x <= rect[2] and rect[1] <= y <= rect[3]
