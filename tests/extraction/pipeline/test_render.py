"""Rendering documents to page PNGs: every supported format, dpi, previews, limits and broken input."""

from __future__ import annotations

import shutil
from pathlib import Path

import pymupdf
import pytest
from PIL import Image, ImageDraw

from extraction.pipeline import render
from extraction.pipeline.render import RenderError, detect_kind, pdf_page_count, render_document
from tests.support.paths import shared_data


def _pdf(path: Path, pages: int = 2, size: tuple[float, float] = (595, 842)) -> Path:
    with pymupdf.open() as doc:
        for number in range(1, pages + 1):
            page = doc.new_page(width=size[0], height=size[1])
            page.insert_text((72, 72), f"Page {number} total 717,97", fontsize=14)
        doc.save(path)
    return path


def _picture(size: tuple[int, int], colour: str = "white", mode: str = "RGB") -> Image.Image:
    image = Image.new(mode, size, colour)
    ImageDraw.Draw(image).rectangle((5, 5, 25, 15), fill="black" if mode != "RGBA" else (0, 0, 0, 255))
    return image


def _open_size(path: Path) -> tuple[int, int]:
    with Image.open(path) as image:
        assert image.format == "PNG"
        return image.size


def test_a_two_page_pdf_renders_each_page_at_the_requested_dpi(tmp_path):
    pdf = _pdf(tmp_path / "two.pdf")
    pages = render_document(source=pdf, kind="pdf", out_dir=tmp_path / "out", dpi=72)
    assert [p.number for p in pages] == [1, 2]
    assert [(p.width, p.height) for p in pages] == [(595, 842), (595, 842)]
    assert all(_open_size(p.path) == (p.width, p.height) for p in pages)
    assert pdf_page_count(pdf) == 2


def test_a_higher_dpi_gives_proportionally_more_pixels(tmp_path):
    pdf = _pdf(tmp_path / "one.pdf", pages=1)
    [low] = render_document(source=pdf, kind="pdf", out_dir=tmp_path / "low", dpi=72)
    [high] = render_document(source=pdf, kind="pdf", out_dir=tmp_path / "high", dpi=150)
    assert high.width == pytest.approx(low.width * 150 / 72, abs=1)
    assert high.height == pytest.approx(low.height * 150 / 72, abs=1)


@pytest.mark.parametrize(("suffix", "save_args"), [
    ("png", {}), ("jpg", {"quality": 90}), ("webp", {}), ("png", {"dpi": (300, 300)}),
])
def test_a_single_image_keeps_its_pixel_size(tmp_path, suffix, save_args):
    source = tmp_path / f"scan.{suffix}"
    _picture((321, 207)).save(source, **save_args)
    [page] = render_document(source=source, kind="image", out_dir=tmp_path / "out", dpi=300)
    assert (page.width, page.height) == (321, 207) == _open_size(page.path)


def test_a_page_keeps_every_pixel_of_the_raster_it_was_made_from(tmp_path):
    # Pages are written with a faster compression than the default (render.PNG_LEVEL); it must stay lossless.
    pdf = _pdf(tmp_path / "one.pdf", pages=1)
    [page] = render_document(source=pdf, kind="pdf", out_dir=tmp_path / "pdf", dpi=100)
    with pymupdf.open(pdf) as doc:
        raster = doc[0].get_pixmap(matrix=pymupdf.Matrix(100 / 72, 100 / 72), alpha=False)
        expected = Image.frombytes("RGB", (raster.width, raster.height), raster.samples)
    with Image.open(page.path) as written:
        assert written.mode == "RGB" and written.tobytes() == expected.tobytes()
    source = tmp_path / "scan.jpg"
    _picture((321, 207)).save(source, quality=70)
    [scan] = render_document(source=source, kind="image", out_dir=tmp_path / "jpg", dpi=150)
    with Image.open(source) as decoded, Image.open(scan.path) as written:
        assert written.tobytes() == decoded.convert("RGB").tobytes()


def test_every_frame_of_a_multi_page_tiff_becomes_a_page(tmp_path):
    source = tmp_path / "fax.tif"
    frames = [_picture((300, 400)), _picture((310, 410), "yellow"), _picture((320, 420), "red")]
    frames[0].save(source, save_all=True, append_images=frames[1:], compression="tiff_lzw")
    pages = render_document(source=source, kind="image", out_dir=tmp_path / "out")
    assert [(p.number, p.width, p.height) for p in pages] == [(1, 300, 400), (2, 310, 410), (3, 320, 420)]
    with Image.open(pages[2].path) as third:
        assert third.convert("RGB").getpixel((100, 100)) == (255, 0, 0)


def test_transparent_areas_become_white_not_black(tmp_path):
    source = tmp_path / "logo.png"
    _picture((60, 40), colour=(0, 0, 0, 0), mode="RGBA").save(source)
    [page] = render_document(source=source, kind="image", out_dir=tmp_path / "out")
    with Image.open(page.path) as image:
        assert image.convert("RGB").getpixel((50, 30)) == (255, 255, 255)
        assert image.convert("RGB").getpixel((10, 10)) == (0, 0, 0)


def test_a_phone_photo_is_turned_upright_from_its_exif_orientation(tmp_path):
    source = tmp_path / "photo.jpg"
    exif = Image.Exif()
    exif[0x0112] = 6  # stored sideways: rotate 90 degrees clockwise to view
    _picture((400, 300)).save(source, exif=exif)
    [page] = render_document(source=source, kind="image", out_dir=tmp_path / "out")
    assert (page.width, page.height) == (300, 400)


def test_each_page_gets_a_small_preview(tmp_path):
    pages = render_document(source=_pdf(tmp_path / "two.pdf"), kind="pdf", out_dir=tmp_path / "out",
                            preview_width=120)
    for page in pages:
        assert page.preview_path.exists() and page.preview_path != page.path
        with Image.open(page.preview_path) as preview:
            assert preview.width == 120
            assert preview.height == pytest.approx(120 * page.height / page.width, abs=1)
    assert pages[0].as_page_image().path == pages[0].path


def test_a_document_over_the_page_limit_is_refused(tmp_path):
    with pytest.raises(RenderError, match="3 pages; the limit is 2"):
        render_document(source=_pdf(tmp_path / "three.pdf", pages=3), kind="pdf", out_dir=tmp_path / "o",
                        max_pages=2)


def test_a_huge_page_is_rendered_below_the_pixel_cap(tmp_path, monkeypatch):
    monkeypatch.setattr(render, "MAX_PAGE_PIXELS", 1_000_000)
    [page] = render_document(source=_pdf(tmp_path / "poster.pdf", pages=1, size=(2000, 3000)), kind="pdf",
                             out_dir=tmp_path / "out", dpi=150)
    assert page.width * page.height <= 1_000_000
    assert page.width / page.height == pytest.approx(2000 / 3000, abs=0.01)


@pytest.mark.parametrize("kind", ["pdf", "image"])
def test_broken_input_raises_a_render_error(tmp_path, kind):
    broken = tmp_path / "broken.bin"
    broken.write_bytes(b"%PDF-1.4 not really a PDF" if kind == "pdf" else b"\x89PNG\r\n\x1a\n garbage")
    with pytest.raises(RenderError):
        render_document(source=broken, kind=kind, out_dir=tmp_path / "out")


def test_a_truncated_image_raises_a_render_error(tmp_path):
    whole = tmp_path / "whole.png"
    _picture((500, 500)).save(whole)
    cut = tmp_path / "cut.png"
    cut.write_bytes(whole.read_bytes()[:200])
    with pytest.raises(RenderError, match="cannot be read"):
        render_document(source=cut, kind="image", out_dir=tmp_path / "out")


def test_a_password_protected_pdf_is_refused_with_that_reason(tmp_path):
    locked = tmp_path / "locked.pdf"
    with pymupdf.open() as doc:
        doc.new_page()
        doc.save(locked, encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="secret", owner_pw="owner")
    with pytest.raises(RenderError, match="password"):
        render_document(source=locked, kind="pdf", out_dir=tmp_path / "out")


def test_unknown_kind_or_renderer_is_refused(tmp_path):
    pdf = _pdf(tmp_path / "one.pdf", pages=1)
    with pytest.raises(RenderError, match="kind"):
        render_document(source=pdf, kind="docx", out_dir=tmp_path / "out")
    with pytest.raises(RenderError, match="renderer"):
        render_document(source=pdf, kind="pdf", out_dir=tmp_path / "out", renderer="ghostscript")


def test_the_kind_is_detected_from_the_content_not_the_name(tmp_path):
    pdf = _pdf(tmp_path / "scan.png", pages=1)
    image = tmp_path / "report.pdf"
    _picture((20, 20)).save(image, format="PNG")
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    assert detect_kind(pdf) == "pdf"
    assert detect_kind(image) == "image"
    with pytest.raises(RenderError, match="neither a PDF nor"):
        detect_kind(text)


@pytest.mark.skipif(shutil.which("pdftoppm") is None, reason="poppler-utils (pdftoppm) is not installed")
def test_pdf2image_renders_the_same_pages_at_the_same_size(tmp_path):
    pdf = _pdf(tmp_path / "two.pdf")
    by_mupdf = render_document(source=pdf, kind="pdf", out_dir=tmp_path / "a", dpi=100)
    by_poppler = render_document(source=pdf, kind="pdf", out_dir=tmp_path / "b", dpi=100,
                                 renderer="pdf2image")
    assert [p.number for p in by_poppler] == [1, 2]
    for a, b in zip(by_mupdf, by_poppler, strict=True):
        assert abs(a.width - b.width) <= 1 and abs(a.height - b.height) <= 1
        assert _open_size(b.path) == (b.width, b.height) and b.preview_path.exists()


def test_pdf2image_without_poppler_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(RenderError, match="install poppler-utils"):
        render_document(source=_pdf(tmp_path / "one.pdf", pages=1), kind="pdf", out_dir=tmp_path / "out",
                        renderer="pdf2image")


def test_the_shared_invoice_scans_render_at_their_own_size(tmp_path):
    scan = shared_data("invoices", "oyo.png")
    [page] = render_document(source=scan, kind="image", out_dir=tmp_path)
    with Image.open(scan) as original:
        assert (page.width, page.height) == original.size
