"""The local OCR engines (pdf-text, rapidocr, tesseract), the auto engine and the registry.

The real invoices of ../shared/data/invoices are read from their PDFs by pdf-text and from their
PNGs by rapidocr; every expected amount, date and invoice number must be found on the page unless
KNOWN_MISSING says why not (and a KNOWN_MISSING value that is found fails too, to keep the list honest).
"""

from __future__ import annotations

import shutil
import sys
import types
from pathlib import Path

import numpy as np
import pymupdf
import pytest
from PIL import Image

from extraction.ocr.blocks import BBox, BlockType, OcrBlock, OcrError, OcrPage, PageImage, SourceDocument
from extraction.ocr.pdf_text import PdfTextEngine, has_usable_text_layer
from extraction.ocr.rapid import RapidOcrEngine, split_words
from extraction.ocr.registry import ENGINE_CHOICES, AutoEngine, get_engine
from extraction.ocr.tesseract import TesseractEngine, parse_tsv
from extraction.pipeline.render import render_document
from tests.support.invoice_truth import INVOICES, KNOWN_MISSING, expected_values, load_truth, locate
from tests.support.pages import SQUARE
from tests.support.paths import MISSING, needs_shared_data

needs_data = needs_shared_data("invoices")


def _names(suffix: str) -> list[str]:
    return sorted(p.stem for p in INVOICES.glob(f"*.{suffix}")) if INVOICES.is_dir() else []


def _cases(source: str, suffix: str) -> list:
    cases = [
        pytest.param(name, label, value, id=f"{name}-{label}")
        for name in _names(suffix)
        for label, value in expected_values(load_truth(name))
    ]
    return cases or [pytest.param(None, None, None, marks=pytest.mark.skip(reason=MISSING))]


def _image(path: Path, number: int = 1) -> PageImage:
    with Image.open(path) as image:
        return PageImage(number=number, path=path, width=image.width, height=image.height)


def _blocks(pages: list[OcrPage]) -> list[OcrBlock]:
    return [block for page in pages for block in page.blocks]


@pytest.fixture(scope="module")
def pdf_pages() -> dict[str, list[OcrPage]]:
    # Text only: table detection is slow and is tested on its own below.
    engine = PdfTextEngine(tables=False)
    return {name: engine.read(SourceDocument(INVOICES / f"{name}.pdf", "pdf", [])) for name in _names("pdf")}


@pytest.fixture(scope="module")
def table_pages() -> list[OcrPage]:
    return PdfTextEngine().read(SourceDocument(INVOICES / "coolblue1.pdf", "pdf", []))


@pytest.fixture(scope="module")
def scan_pages() -> dict[str, list[OcrPage]]:
    engine = RapidOcrEngine()  # one engine: the models load once for all scans
    return {
        name: engine.read(SourceDocument(png, "image", [_image(png)]))
        for name, png in ((name, INVOICES / f"{name}.png") for name in _names("png"))
    }


def _check_expected(source: str, name: str, label: str, value: object, pages: list[OcrPage]) -> None:
    found = locate(value, _blocks(pages))
    reason = KNOWN_MISSING.get((source, name, label))
    if reason:
        assert found is None, f"{label}={value} is listed as missing ({reason}) but is in {found.text!r}"
    else:
        assert found is not None, f"{label}={value} not found on {name} ({source})"
        assert 0 <= found.bbox.left <= found.bbox.right <= 1
        assert 0 <= found.bbox.top <= found.bbox.bottom <= 1
        assert found.bbox.width > 0 and found.bbox.height > 0


# ------------------------------------------------------------------------------------------------ pdf-text


@needs_data
@pytest.mark.parametrize(("name", "label", "value"), _cases("pdf", "pdf"))
def test_pdf_text_finds_each_expected_value_of_the_invoice_pdfs(pdf_pages, name, label, value):
    _check_expected("pdf", name, label, value, pdf_pages[name])


@needs_data
def test_pdf_text_reads_a_table_into_cells_whose_text_keeps_its_spaces(table_pages):
    blocks = _blocks(table_pages)
    tables = [b for b in blocks if b.type == BlockType.TABLE]
    cells = [b for b in blocks if b.type == BlockType.CELL]
    assert tables and cells
    assert {c.parent for c in cells} <= {t.id for t in tables}
    item = next(c for c in cells if c.text == "Apple iPad Air Wifi 16 GB Zilver")
    price = next(c for c in cells if c.parent == item.parent and c.row == item.row and c.column == 3)
    assert price.text == "€ 399,00"
    header = next(c for c in cells if c.text == "BTW Prijs incl. BTW")
    assert (header.row, header.column, header.column_span) == (1, 4, 2)


@needs_data
def test_pdf_text_links_words_to_lines_and_lines_and_tables_to_the_page(pdf_pages, table_pages):
    assert any(b.type == BlockType.CELL for b in _blocks(table_pages))
    for pages in [*pdf_pages.values(), table_pages]:
        for page in pages:
            by_id = {b.id: b for b in page.blocks}
            assert len(by_id) == len(page.blocks), "block ids must be unique"
            for block in page.blocks:
                expected_parent = {BlockType.WORD: BlockType.LINE, BlockType.LINE: BlockType.PAGE,
                                   BlockType.TABLE: BlockType.PAGE, BlockType.CELL: BlockType.TABLE}
                if block.type in expected_parent:
                    assert by_id[block.parent].type == expected_parent[block.type]
            line = next(b for b in page.blocks if b.type == BlockType.LINE)
            words = [b.text for b in page.blocks if b.parent == line.id]
            assert " ".join(words) == line.text


@needs_data
def test_pdf_text_boxes_sit_where_pymupdf_finds_the_text(pdf_pages):
    with pymupdf.open(INVOICES / "coolblue1.pdf") as doc:
        page = doc[0]
        hits = page.search_for("717,97")
        width, height = page.rect.width, page.rect.height
    words = [b for b in _blocks(pdf_pages["coolblue1"]) if b.type == BlockType.WORD and b.text == "717,97"]
    assert len(words) == len(hits) == 4
    for word in words:
        assert any(word.bbox.left == pytest.approx(hit.x0 / width, abs=0.005)
                   and word.bbox.top == pytest.approx(hit.y0 / height, abs=0.005)
                   and word.bbox.right == pytest.approx(hit.x1 / width, abs=0.005) for hit in hits)


def test_pdf_text_boxes_follow_a_rotated_page_as_it_is_rendered(tmp_path):
    pdf = tmp_path / "rotated.pdf"
    with pymupdf.open() as doc:
        page = doc.new_page(width=600, height=800)
        page.insert_text((100, 150), "ROTATED", fontsize=40)
        page.set_rotation(90)
        doc.save(pdf)
    [rendered] = render_document(source=pdf, kind="pdf", out_dir=tmp_path / "pages", dpi=72)
    [ocr] = PdfTextEngine().read(SourceDocument(pdf, "pdf", [rendered.as_page_image()]))
    word = next(b for b in ocr.blocks if b.type == BlockType.WORD)
    ink = np.asarray(Image.open(rendered.path).convert("L")) < 128
    ys, xs = np.nonzero(ink)
    assert rendered.width > rendered.height  # the page is shown landscape
    assert word.bbox.left <= xs.min() / rendered.width and xs.max() / rendered.width <= word.bbox.right
    assert word.bbox.top <= ys.min() / rendered.height and ys.max() / rendered.height <= word.bbox.bottom


def test_pdf_text_refuses_an_image(tmp_path):
    with pytest.raises(OcrError, match="PDFs only"):
        PdfTextEngine().read(SourceDocument(tmp_path / "x.png", "image", []))


def _scanned_pdf(path: Path, image: Path, stray_text: str = "") -> Path:
    with pymupdf.open() as doc:
        page = doc.new_page(width=595, height=842)
        page.insert_image(page.rect, filename=str(image))
        if stray_text:
            page.insert_text((20, 20), stray_text, fontsize=8)
        doc.save(path)
    return path


@needs_data
def test_a_born_digital_page_has_a_usable_text_layer():
    assert has_usable_text_layer(INVOICES / "coolblue1.pdf", 1)


@needs_data
def test_a_scanned_page_has_no_usable_text_layer_even_with_a_stamped_line(tmp_path):
    bare = _scanned_pdf(tmp_path / "scan.pdf", INVOICES / "oyo.png")
    stamped = _scanned_pdf(tmp_path / "stamped.pdf", INVOICES / "oyo.png", "Scanned 2024-01-05 by mailroom")
    assert not has_usable_text_layer(bare, 1)
    assert not has_usable_text_layer(stamped, 1)


# ------------------------------------------------------------------------------------------------ rapidocr


@needs_data
@pytest.mark.parametrize(("name", "label", "value"), _cases("scan", "png"))
def test_rapidocr_finds_each_expected_value_of_the_invoice_scans(scan_pages, name, label, value):
    _check_expected("scan", name, label, value, scan_pages[name])


@needs_data
def test_rapidocr_gives_lines_of_words_with_confidences(scan_pages):
    for pages in scan_pages.values():
        [page] = pages
        assert page.engine == "rapidocr"
        by_id = {b.id: b for b in page.blocks}
        assert len(by_id) == len(page.blocks)
        words = [b for b in page.blocks if b.type == BlockType.WORD]
        assert words and all(by_id[w.parent].type == BlockType.LINE for w in words)
        assert all(0 <= b.confidence <= 1 for b in page.blocks if b.type != BlockType.PAGE)
        orders = [b.order for b in page.blocks]
        assert orders == sorted(orders)


@needs_data
def test_rapidocr_and_pdf_text_put_the_same_value_in_the_same_place(pdf_pages, scan_pages):
    # AmazonWebServices.png is a scan of the PDF page, so normalized boxes must agree.
    from_pdf = locate("42183017", _blocks(pdf_pages["AmazonWebServices"]))
    from_scan = locate("42183017", _blocks(scan_pages["AmazonWebServices"]))
    assert from_pdf.type == from_scan.type == BlockType.WORD
    for a, b in ((from_pdf.bbox.left, from_scan.bbox.left), (from_pdf.bbox.top, from_scan.bbox.top),
                 (from_pdf.bbox.right, from_scan.bbox.right), (from_pdf.bbox.bottom, from_scan.bbox.bottom)):
        assert a == pytest.approx(b, abs=0.015)


def test_split_words_groups_character_boxes_into_words():
    chars = [("a", 0.9, (0, 0, 10, 10)), ("b", 0.8, (10, 0, 20, 10)), ("c", 0.7, (30, 0, 40, 10))]
    assert split_words("ab c", chars, (0, 0, 40, 10), 0.9) == [
        ("ab", 0.8, (0, 0, 20, 10)), ("c", 0.7, (30, 0, 40, 10)),
    ]


def test_split_words_divides_a_piece_that_holds_two_words():
    pieces = [("Wifi16", 0.9, (0, 0, 60, 10)), ("GB", 0.8, (70, 0, 90, 10))]
    words = split_words("Wifi 16 GB", pieces, (0, 0, 90, 10), 0.9)
    assert [(t, box) for t, _, box in words] == [("Wifi", (0, 0, 40, 10)), ("16", (40, 0, 60, 10)),
                                                 ("GB", (70, 0, 90, 10))]


def test_split_words_falls_back_to_the_line_box_when_pieces_do_not_spell_the_line():
    words = split_words("ab cd", [("xx", 0.9, (0, 0, 5, 5))], (0, 0, 40, 10), 0.6)
    assert words == [("ab", 0.6, (0, 0, 20, 10)), ("cd", 0.6, (20, 0, 40, 10))]


def test_rapidocr_reads_a_blank_page_as_a_page_without_lines(tmp_path):
    blank = tmp_path / "blank.png"
    Image.new("RGB", (300, 200), "white").save(blank)
    [page] = RapidOcrEngine().read(SourceDocument(blank, "image", [PageImage(4, blank, 300, 200)]))
    assert (page.number, page.engine) == (4, "rapidocr")
    assert [b.type for b in page.blocks] == [BlockType.PAGE]


def test_rapidocr_reports_an_unreadable_image_as_an_ocr_error(tmp_path):
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"not an image")
    with pytest.raises(OcrError, match="page 1"):
        RapidOcrEngine().read(SourceDocument(broken, "image", [PageImage(1, broken, 10, 10)]))


# ------------------------------------------------------------------------------------------------ tesseract

TSV = (
    "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n"
    "1\t1\t0\t0\t0\t0\t0\t0\t200\t100\t-1\t\n"
    "4\t1\t1\t1\t1\t0\t10\t10\t120\t20\t-1\t\n"
    "5\t1\t1\t1\t1\t1\t10\t10\t50\t20\t96.5\tTotal\n"
    "5\t1\t1\t1\t1\t2\t70\t12\t60\t18\t88\t717,97\n"
    "5\t1\t1\t1\t2\t1\t10\t40\t30\t20\t-1\t \n"
    "5\t1\t2\t1\t1\t1\t20\t60\t40\t20\t91\t\"quoted\n"
)


def test_tesseract_tsv_becomes_lines_of_words_with_normalized_boxes():
    page = parse_tsv(TSV, number=3, width=200, height=100)
    lines = [b for b in page.blocks if b.type == BlockType.LINE]
    words = [b for b in page.blocks if b.type == BlockType.WORD]
    assert [line.text for line in lines] == ["Total 717,97", '"quoted']
    assert [w.parent for w in words] == [lines[0].id, lines[0].id, lines[1].id]
    assert words[1].bbox == BBox(0.35, 0.12, pytest.approx(0.3), pytest.approx(0.18))
    assert words[0].confidence == pytest.approx(0.965)
    assert lines[0].bbox == BBox(0.05, 0.1, pytest.approx(0.6), pytest.approx(0.2))
    assert all(b.page == 3 for b in page.blocks)


def test_tesseract_engine_says_when_the_binary_is_missing(monkeypatch, tmp_path):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    png = tmp_path / "a.png"
    with pytest.raises(OcrError, match="tesseract is not installed"):
        TesseractEngine().read(SourceDocument(png, "image", [PageImage(1, png, 9, 9)]))


@needs_data
@pytest.mark.skipif(shutil.which("tesseract") is None, reason="the tesseract binary is not installed")
def test_tesseract_reads_the_invoice_number_and_total_of_a_scan():
    png = INVOICES / "FlipkartInvoice.png"
    [page] = TesseractEngine().read(SourceDocument(png, "image", [_image(png)]))
    assert page.engine == "tesseract"
    truth = dict(expected_values(load_truth("FlipkartInvoice")))
    assert locate(truth["invoice_number"], page.blocks) is not None
    assert locate(truth["amount"], page.blocks) is not None


# ------------------------------------------------------------------------------------------- auto + registry


class _StubScanEngine:
    """Numbers every one-page document as page 1, as a cloud engine might."""

    name = "stub"

    def __init__(self):
        self.seen: list[Path] = []

    def read(self, document: SourceDocument) -> list[OcrPage]:
        self.seen.append(document.pages[0].path)
        block = OcrBlock(page_size=SQUARE, id="stub-line", type=BlockType.LINE, page=1, text="scanned", bbox=BBox(0, 0, 1, 1))
        return [OcrPage(number=1, blocks=[block], engine=self.name)]


@needs_data
def test_auto_reads_text_pages_from_the_pdf_and_scanned_pages_with_the_scan_engine(tmp_path):
    mixed = tmp_path / "mixed.pdf"
    with pymupdf.open() as doc, pymupdf.open(INVOICES / "coolblue1.pdf") as digital:
        doc.insert_pdf(digital)
        doc.new_page(width=595, height=842).insert_image(pymupdf.Rect(0, 0, 595, 842),
                                                          filename=str(INVOICES / "oyo.png"))
        doc.save(mixed)
    rendered = render_document(source=mixed, kind="pdf", out_dir=tmp_path / "pages", dpi=50)
    stub = _StubScanEngine()
    document = SourceDocument(mixed, "pdf", [r.as_page_image() for r in rendered])
    pages = AutoEngine(scan_engine=stub, images=False).read(document)  # images in a page: test_ocr_embedded
    assert [(p.number, p.engine) for p in pages] == [(1, "pdf-text"), (2, "stub")]
    assert stub.seen == [rendered[1].path]
    assert {b.page for b in pages[1].blocks} == {2}
    assert locate(717.97, pages[0].blocks) is not None


def test_auto_sends_every_page_of_an_image_to_the_scan_engine(tmp_path):
    images = [PageImage(n, tmp_path / f"p{n}.png", 10, 10) for n in (1, 2)]
    document = SourceDocument(tmp_path / "a.tif", "image", images)
    pages = AutoEngine(scan_engine=_StubScanEngine()).read(document)
    assert [(p.number, p.engine) for p in pages] == [(1, "stub"), (2, "stub")]


def test_the_registry_builds_each_local_engine_by_name():
    assert isinstance(get_engine("pdf-text"), PdfTextEngine)
    assert isinstance(get_engine("rapidocr", threads=None), RapidOcrEngine)
    assert isinstance(get_engine("tesseract", languages="eng+deu"), TesseractEngine)
    auto = get_engine("auto", scan_engine="tesseract", psm=6)
    assert isinstance(auto, AutoEngine) and isinstance(auto.scan_engine, TesseractEngine)
    assert auto.scan_engine.psm == 6
    assert isinstance(get_engine("auto").scan_engine, RapidOcrEngine)
    assert [value for value, _ in ENGINE_CHOICES] == ["auto", "pdf-text", "rapidocr", "tesseract", "textract"]


def test_the_registry_rejects_unknown_engines_and_options():
    with pytest.raises(OcrError, match="unknown OCR engine 'abbyy'"):
        get_engine("abbyy")
    with pytest.raises(OcrError, match="bad options for the rapidocr"):
        get_engine("rapidocr", colour="blue")
    with pytest.raises(OcrError, match="needs an OCR engine for scans"):
        get_engine("auto", scan_engine="pdf-text")


def test_the_registry_imports_textract_only_when_asked_and_passes_its_options(monkeypatch):
    created = {}

    class FakeTextract:
        name = "textract"

        def __init__(self, client=None, **options):
            created.update(options)

    monkeypatch.setitem(sys.modules, "extraction.ocr.textract",
                        types.SimpleNamespace(TextractEngine=FakeTextract))
    engine = get_engine("textract", region="eu-west-1", bucket="docs")
    assert isinstance(engine, FakeTextract)
    assert created == {"region": "eu-west-1", "bucket": "docs"}
