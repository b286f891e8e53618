"""Read the text layer of born-digital PDFs with PyMuPDF: exact text, no OCR.

Produces PAGE > LINE > WORD from page.get_text("words") and PAGE > TABLE > CELL from
page.find_tables(). Cell text is rebuilt from the words inside each cell, because
Table.extract() drops the spaces between words.
"""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import Callable, Iterable
from pathlib import Path

import pymupdf

from extraction.ocr.blocks import BBox, BlockType, OcrBlock, OcrError, OcrPage, SourceDocument

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
    prefix = f"p{number}"
    page_block = OcrBlock(id=f"{prefix}-page", type=BlockType.PAGE, page=number, text="",
                          bbox=BBox(0.0, 0.0, 1.0, 1.0), order=0)
    blocks = [page_block]

    # Group words into PyMuPDF's lines, keeping the sorted (top-to-bottom, left-to-right) line order.
    words = [w for w in page.get_text("words", sort=True) if w[4].strip()]
    lines: dict[tuple[int, int], list[tuple]] = {}
    for word in words:
        lines.setdefault((word[5], word[6]), []).append(word)

    word_rank: dict[int, int] = {}  # id(word tuple) -> reading-order rank, to order the text of cells
    for line_index, line_words in enumerate(lines.values(), start=1):
        line_words.sort(key=lambda w: w[7])  # word_no within the line
        line_id = f"{prefix}-l{line_index}"
        word_boxes = [normalize(w[:4]) for w in line_words]
        blocks.append(OcrBlock(id=line_id, type=BlockType.LINE, page=number,
                               text=" ".join(w[4] for w in line_words), bbox=BBox.enclosing(word_boxes),
                               confidence=1.0, parent=page_block.id, order=len(blocks)))
        for word, box in zip(line_words, word_boxes, strict=True):
            word_rank[id(word)] = len(word_rank)
            blocks.append(OcrBlock(id=f"{prefix}-w{len(word_rank)}", type=BlockType.WORD, page=number,
                                   text=word[4], bbox=box, confidence=1.0, parent=line_id,
                                   order=len(blocks)))

    if tables:
        ranked = sorted(words, key=lambda w: word_rank[id(w)])
        blocks.extend(_table_blocks(page, number, page_block.id, ranked, normalize, first_order=len(blocks)))
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
                  normalize: Normalize, *, first_order: int) -> list[OcrBlock]:
    try:
        found = page.find_tables().tables
    except (RuntimeError, ValueError):  # detection is a heuristic; the lines still carry all the text
        logger.warning("table detection failed on page %s; keeping lines and words", number, exc_info=True)
        return []
    blocks: list[OcrBlock] = []
    for table_index, table in enumerate(found, start=1):
        table_id = f"p{number}-t{table_index}"
        blocks.append(OcrBlock(id=table_id, type=BlockType.TABLE, page=number, text="",
                               bbox=normalize(table.bbox), parent=page_id, order=first_order + len(blocks)))
        row_tops = [row.bbox[1] for row in table.rows]
        column_lefts = sorted({round(cell[0], 1) for row in table.rows for cell in row.cells if cell})
        for row_index, row in enumerate(table.rows, start=1):
            for column_index, cell in enumerate(row.cells, start=1):
                if cell is None:  # covered by a neighbour's span
                    continue
                x0, y0, x1, y1 = cell
                blocks.append(OcrBlock(
                    id=f"{table_id}-c{row_index}.{column_index}", type=BlockType.CELL, page=number,
                    text=_text_inside(words, cell), bbox=normalize(cell), parent=table_id,
                    order=first_order + len(blocks), row=row_index, column=column_index,
                    row_span=max(1, sum(y0 - EPS <= top < y1 - EPS for top in row_tops)),
                    column_span=max(1, sum(x0 - EPS <= left < x1 - EPS for left in column_lefts)),
                ))
    return blocks


def _text_inside(words: list[tuple], rect: tuple[float, float, float, float]) -> str:
    x0, y0, x1, y1 = rect
    inside = [w[4] for w in words if x0 <= (w[0] + w[2]) / 2 <= x1 and y0 <= (w[1] + w[3]) / 2 <= y1]
    return " ".join(inside)
