"""The `auto` engine reads the text printed inside the images of a born-digital page."""

from __future__ import annotations

import io

import pymupdf
import qrcode

from extraction.ocr.blocks import BlockType, PageImage, SourceDocument
from extraction.ocr.registry import get_engine
from extraction.pipeline.render import render_document


def picture_of(text: str) -> bytes:
    """A PNG of `text`, drawn on a page and rasterised, so it exists only as pixels."""
    doc = pymupdf.open()
    page = doc.new_page(width=300, height=40)
    page.insert_text((10, 26), text, fontsize=16)
    png = page.get_pixmap(dpi=200).tobytes("png")
    doc.close()
    return png


def page_with(tmp_path, image: bytes, rect: tuple[float, float, float, float]):
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((50, 100), "INVOICE 2024-118 issued to Strategic Corp, Fakestreet 46", fontsize=10)
    page.insert_text((50, 120), "Total due EUR 49,99 within fourteen days of the invoice date", fontsize=10)
    page.insert_image(pymupdf.Rect(*rect), stream=image)
    path = tmp_path / "page.pdf"
    doc.save(path)
    doc.close()
    rendered = render_document(source=path, kind="pdf", out_dir=tmp_path, dpi=100, renderer="pymupdf", max_pages=2)
    return SourceDocument(path=path, kind="pdf", pages=[PageImage(r.number, r.path, r.width, r.height) for r in rendered])


def test_text_inside_an_image_of_a_born_digital_page_becomes_lines_placed_on_the_page(tmp_path):
    source = page_with(tmp_path, picture_of("Luscious Nederland BV"), (50, 700, 350, 740))
    [page] = get_engine("auto").read(source)
    lines = [b for b in page.blocks if b.type is BlockType.LINE]
    assert any("INVOICE 2024-118" in b.text for b in lines)  # the text layer is kept
    pictured = [b for b in lines if "Luscious" in b.text]
    assert pictured, [b.text for b in lines]
    box = pictured[0].bbox
    assert box.top >= 700 / 842 - 0.01 and box.bottom <= 740 / 842 + 0.01 and box.left >= 50 / 595 - 0.01
    words = [b for b in page.blocks if b.type is BlockType.WORD and b.parent == pictured[0].id]
    assert words and all(w.page == 1 for w in words)


def test_a_qr_code_image_is_not_read_as_text(tmp_path):
    code = qrcode.make("050201001.01!1,2,3")
    buf = io.BytesIO()
    code.save(buf, format="PNG")
    source = page_with(tmp_path, buf.getvalue(), (400, 600, 540, 740))
    [page] = get_engine("auto").read(source)
    assert not [b for b in page.blocks if "-i" in b.id]


def test_the_image_pass_can_be_turned_off(tmp_path):
    source = page_with(tmp_path, picture_of("Luscious Nederland BV"), (50, 700, 350, 740))
    [page] = get_engine("auto", images=False).read(source)
    assert not [b for b in page.blocks if "Luscious" in b.text]
