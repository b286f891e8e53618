"""Blocks follow the rows of the page, whatever its layout, for every engine.

The sheets of tests/support/layout_fixtures.py are drawn here with PyMuPDF: a candidate cell merged over party
rows with no ruled line between them (or only some), two and three columns of candidates, the same text
without any grid, and an invoice whose description wraps inside one cell. The text layer is read
directly; the OCR engines read the rendered page (RapidOCR on a crop, to keep it quick).
"""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import pymupdf
import pytest
from PIL import Image

from extraction.ocr.blocks import BlockType, OcrBlock, OcrPage, PageImage, SourceDocument
from extraction.ocr.pdf_text import PdfTextEngine
from extraction.ocr.rapid import RapidOcrEngine
from extraction.ocr.tesseract import TesseractEngine
from extraction.reading.prompt import cell_at, render_prompt
from tests.support.layout_fixtures import (
    PARTIES_PER_CANDIDATE,
    WRAPPED,
    Sheet,
    blocks_joining_rows,
    columns_sheet,
    merged_candidate_sheet,
    rows_shown,
    wrapped_cell_invoice,
)


def _read_pdf(pdf: bytes, tmp_path: Path) -> OcrPage:
    path = tmp_path / "sheet.pdf"
    path.write_bytes(pdf)
    [page] = PdfTextEngine().read(SourceDocument(path, "pdf", []))
    return page


def _of(page: OcrPage, kind: BlockType) -> list[OcrBlock]:
    return [b for b in page.blocks if b.type is kind]


def _render(pdf: bytes, path: Path, *, dpi: int = 150, clip: pymupdf.Rect | None = None,
            degrees: float = 0.0) -> PageImage:
    with pymupdf.open(stream=pdf, filetype="pdf") as doc:
        pix = doc[0].get_pixmap(dpi=dpi, clip=clip)
    image = Image.frombytes("RGB", (pix.width, pix.height), pix.samples).convert("L")
    if degrees:  # a page fed slightly askew through the scanner
        image = image.rotate(degrees, resample=Image.Resampling.BICUBIC, fillcolor=255)
    image.save(path)
    return PageImage(number=1, path=path, width=image.width, height=image.height)


def _assert_each_row_has_its_own_cells(page: OcrPage, sheet: Sheet) -> None:
    cells = _of(page, BlockType.CELL)
    for row in sheet.rows:
        party = next(c for c in cells if c.text == row.party)
        digits = next(c for c in cells if c.text == row.digits)
        words = next(c for c in cells if c.text == row.words)
        assert party.parent == digits.parent == words.parent
        assert party.row == digits.row == words.row, row.party


# ------------------------------------------------------------------------------------------- pdf-text


def test_the_text_layer_of_a_table_without_rules_between_party_rows_gives_each_row_its_own_cells(tmp_path):
    # The measured cause: PyMuPDF's table finder draws rows from ruled lines only, so it returned one
    # row per candidate whose cells held all of its parties ("0138 0583 0868 ...").
    sheet = merged_candidate_sheet(rules="none")
    page = _read_pdf(sheet.pdf, tmp_path)
    assert blocks_joining_rows(page.blocks, sheet.rows) == []
    _assert_each_row_has_its_own_cells(page, sheet)


@pytest.mark.parametrize("rules", ["none", "some", "all"])
def test_a_candidate_cell_merged_over_its_parties_spans_their_rows(tmp_path, rules):
    sheet = merged_candidate_sheet(rules=rules)
    page = _read_pdf(sheet.pdf, tmp_path)
    cells = _of(page, BlockType.CELL)
    assert blocks_joining_rows(page.blocks, sheet.rows) == []
    first_party = 0
    for count in PARTIES_PER_CANDIDATE:
        row = sheet.rows[first_party]
        candidate = next(c for c in cells if c.text == row.candidate)
        party_rows = sorted(next(c for c in cells if c.text == r.party).row
                            for r in sheet.rows[first_party:first_party + count])
        assert candidate.row_span == count, row.candidate
        assert party_rows == list(range(candidate.row, candidate.row + count))
        first_party += count


def test_a_description_wrapped_inside_one_cell_stays_one_cell(tmp_path):
    page = _read_pdf(wrapped_cell_invoice(), tmp_path)
    cells = _of(page, BlockType.CELL)
    wrapped = next(c for c in cells if c.text.startswith("Consulting"))
    assert wrapped.text == " ".join(WRAPPED)
    assert wrapped.row_span == 1
    assert {c.text for c in cells if c.row == wrapped.row} == {wrapped.text, "3", "450.00", "1350.00"}
    assert max(c.row for c in cells) == 4  # the header and three items


@pytest.mark.parametrize(("columns", "grid"), [(2, True), (3, True), (3, False)])
def test_candidates_in_side_by_side_columns_keep_each_party_row_apart(tmp_path, columns, grid):
    sheet = columns_sheet(columns=columns, grid=grid)
    page = _read_pdf(sheet.pdf, tmp_path)
    assert blocks_joining_rows(page.blocks, sheet.rows) == []
    lines = _of(page, BlockType.LINE)
    for row in sheet.rows:  # every row's digits are on a line of their own row
        assert any(row.digits in line.text.split() for line in lines)


def test_text_without_any_grid_gives_one_line_per_cell_of_each_row(tmp_path):
    sheet = merged_candidate_sheet(grid=False)
    page = _read_pdf(sheet.pdf, tmp_path)
    lines = _of(page, BlockType.LINE)
    assert blocks_joining_rows(page.blocks, sheet.rows) == []
    for row in sheet.rows:
        digits = next(line for line in lines if line.text == row.digits)
        words = next(line for line in lines if line.text == row.words)
        assert abs(digits.bbox.top - words.bbox.top) < digits.bbox.height


def test_the_prompt_counts_the_split_rows_as_it_renders_them(tmp_path):
    sheet = merged_candidate_sheet(rules="none")
    page = _read_pdf(sheet.pdf, tmp_path)
    prompt = render_prompt([page])
    after = prompt.text.split("\nT1\n", 1)[1].splitlines()
    table = list(itertools.takewhile(lambda r: r.startswith("|"), after))
    filled = [r for r, rendered in enumerate(table, start=1) if rendered.strip("| ")]
    assert len(filled) == 1 + len(sheet.rows)  # the header, then one rendered row per party and total
    for r in filled[1:]:
        rendered = table[r - 1]
        cells = [c.strip() for c in rendered[1:].split("|")]  # "|a|b": one bar before each cell
        row = next(x for x in sheet.rows if x.digits in cells)
        assert rows_shown(" ".join(cells), sheet.rows) == {sheet.rows.index(row)}
        column = cells.index(row.digits) + 1
        assert cell_at(page.blocks, prompt.table_ids[1], r, column).text == row.digits
        assert cells[column] == row.words


# ------------------------------------------------------------------------------------------ OCR engines


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="the tesseract binary is not installed")
@pytest.mark.parametrize(("columns", "gutter", "degrees"), [(2, 12.0, 0.0), (2, 12.0, 1.0), (3, 2.0, 1.0)])
def test_tesseract_lines_do_not_join_party_rows_of_side_by_side_candidate_columns(tmp_path, columns, gutter,
                                                                                   degrees):
    # Tesseract reads across the gutter: "PAC CERO NUEVE SIETE NUEVE 0979 CRS CERO CINCO ..." is one of its
    # lines, and with ruled cells close together the rules come out as "|]" words that bridge the gap.
    sheet = columns_sheet(columns=columns, gutter=gutter)
    image = _render(sheet.pdf, tmp_path / "page.png", clip=pymupdf.Rect(0, 50, 595, 250), degrees=degrees)
    [page] = TesseractEngine(languages="eng").read(SourceDocument(image.path, "image", [image]))
    lines = _of(page, BlockType.LINE)
    assert sum(len(rows_shown(line.text, sheet.rows)) for line in lines) >= 20  # it did read the votes
    assert blocks_joining_rows(page.blocks, sheet.rows) == []


def test_rapidocr_lines_stay_apart_across_a_narrow_gap_between_candidate_columns_on_a_skewed_scan(tmp_path):
    # The columns touch (8 pt between a row's votes and the next column's party, about 1.5 characters):
    # RapidOCR's detector keeps them apart, and rebuilt lines must not join them again.
    sheet = columns_sheet(columns=2, grid=False, gutter=0.0)
    image = _render(sheet.pdf, tmp_path / "page.png", clip=pymupdf.Rect(0, 50, 595, 250), degrees=1.5)
    [page] = RapidOcrEngine().read(SourceDocument(image.path, "image", [image]))
    lines = _of(page, BlockType.LINE)
    assert sum(len(rows_shown(line.text, sheet.rows)) for line in lines) >= 15
    assert blocks_joining_rows(page.blocks, sheet.rows) == []
    by_id = {b.id: b for b in page.blocks}
    for word in _of(page, BlockType.WORD):  # the engine's words and confidences are kept
        assert by_id[word.parent].type is BlockType.LINE and 0 <= word.confidence <= 1
