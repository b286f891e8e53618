"""Render an uploaded document (PDF or raster image) to one PNG per page plus a small preview.

Pure code: no ORM, no Celery. PDFs are rasterised with PyMuPDF (or poppler's pdftoppm through
pdf2image when configured); raster images are decoded with Pillow, which keeps their pixel size and
reads what this MuPDF build cannot (WebP) or sizes oddly (image pages are scaled by their dpi tag).
Pages are rendered one at a time and every document is closed, so memory stays flat on long PDFs. A
caller's `check` runs before each page and may raise to stop the rendering there (a worker that lost its
document does not render the rest of a long PDF).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pymupdf
from PIL import Image, ImageOps, ImageSequence, UnidentifiedImageError

from extraction.ocr.blocks import PageImage

RENDERERS = ("pymupdf", "pdf2image")
# A page larger than this (in pixels) is rendered at a lower resolution instead of exhausting memory.
MAX_PAGE_PIXELS = 40_000_000
# zlib level of the page PNGs. Saving was most of a scan's rendering, and level 3 writes a page faster than the
# default (6) and no larger (bench/ocr_engines.py's render column; figures in docs/BENCHMARKS.md).
PNG_LEVEL = 3

_Written = tuple[int, Path]  # (page number, PNG path)


def _carry_on() -> None:
    pass


class RenderError(Exception):
    """The document cannot be rendered; the message is meant for the person who uploaded it."""


@dataclass(frozen=True)
class RenderedPage:
    number: int  # 1-based
    path: Path  # full-size PNG
    width: int  # pixels
    height: int
    preview_path: Path  # small JPEG for lists

    def as_page_image(self) -> PageImage:
        return PageImage(number=self.number, path=self.path, width=self.width, height=self.height)


def detect_kind(path: Path) -> str:
    """'pdf' or 'image' from the file's content (not its name); RenderError for anything else."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(1024)
    except OSError as exc:
        raise RenderError(f"cannot read the file: {exc.strerror or exc}") from exc
    if b"%PDF-" in head:
        return "pdf"
    try:
        with Image.open(path) as image:
            image.verify()
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        raise RenderError("the file is neither a PDF nor a readable image") from exc
    return "image"


def pdf_page_count(path: Path) -> int:
    with _open_pdf(path) as doc:
        return doc.page_count


def render_document(
    *,
    source: Path,
    kind: str,
    out_dir: Path,
    dpi: int = 150,
    renderer: str = "pymupdf",
    preview_width: int = 200,
    max_pages: int | None = None,
    check: Callable[[], None] = _carry_on,
) -> list[RenderedPage]:
    """Write page-0001.png (+ page-0001-preview.jpg) ... into out_dir and describe them.

    `dpi` applies to PDFs only; images keep their pixel size. A document with more than
    `max_pages` pages is refused (RenderError) rather than silently cut short. `check` runs before each page
    (and each preview); what it raises stops the rendering and reaches the caller.
    """
    if dpi < 10 or dpi > 1200:
        raise RenderError(f"dpi must be between 10 and 1200, got {dpi}")
    out_dir.mkdir(parents=True, exist_ok=True)
    if kind == "pdf":
        if renderer == "pymupdf":
            pages = _render_pdf_pymupdf(source, out_dir, dpi, max_pages, check)
        elif renderer == "pdf2image":
            check()  # pdftoppm renders the whole file in one call
            pages = _render_pdf_poppler(source, out_dir, dpi, max_pages)
        else:
            raise RenderError(f"unknown renderer {renderer!r}; choose one of {', '.join(RENDERERS)}")
    elif kind == "image":
        pages = _render_image(source, out_dir, max_pages, check)
    else:
        raise RenderError(f"unknown document kind {kind!r}; expected 'pdf' or 'image'")
    previewed = []
    for number, path in pages:
        check()
        previewed.append(_with_preview(number, path, preview_width))
    return previewed


def _open_pdf(path: Path) -> pymupdf.Document:
    try:
        doc = pymupdf.open(path, filetype="pdf")
    except (RuntimeError, ValueError, OSError) as exc:  # FileDataError is a RuntimeError
        raise RenderError("the file is not a readable PDF (it may be damaged or of another type)") from exc
    if doc.needs_pass:
        doc.close()
        raise RenderError("the PDF is password-protected")
    if doc.page_count == 0:
        doc.close()
        raise RenderError("the PDF has no pages")
    return doc


def _check_page_limit(count: int, max_pages: int | None) -> None:
    if max_pages is not None and count > max_pages:
        raise RenderError(f"the document has {count} pages; the limit is {max_pages}")


def _page_path(out_dir: Path, number: int) -> Path:
    return out_dir / f"page-{number:04d}.png"


def _render_pdf_pymupdf(source: Path, out_dir: Path, dpi: int, max_pages: int | None,
                        check: Callable[[], None]) -> list[_Written]:
    written = []
    with _open_pdf(source) as doc:
        _check_page_limit(doc.page_count, max_pages)
        for index in range(doc.page_count):
            check()
            try:
                page = doc.load_page(index)
                zoom = _safe_zoom(page.rect.width, page.rect.height, dpi)
                pixmap = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), alpha=False)
                path = _page_path(out_dir, index + 1)
                pixmap.pil_save(path, format="PNG", compress_level=PNG_LEVEL)
            except (RuntimeError, ValueError, OSError) as exc:
                raise RenderError(f"page {index + 1} of the PDF cannot be rendered: {exc}") from exc
            del pixmap, page  # free the raster before the next page
            written.append((index + 1, path))
    return written


def _safe_zoom(width_pt: float, height_pt: float, dpi: int) -> float:
    zoom = dpi / 72
    pixels = width_pt * zoom * height_pt * zoom
    if pixels > MAX_PAGE_PIXELS:
        zoom *= (MAX_PAGE_PIXELS / pixels) ** 0.5 * 0.995  # MuPDF rounds the pixel size up
    return zoom


def _render_pdf_poppler(source: Path, out_dir: Path, dpi: int, max_pages: int | None) -> list[_Written]:
    if shutil.which("pdftoppm") is None:
        raise RenderError(
            "the pdf2image renderer needs poppler (pdftoppm): install poppler-utils or use pymupdf"
        )
    from pdf2image import convert_from_path
    from pdf2image.exceptions import PDFInfoNotInstalledError, PDFPageCountError, PDFSyntaxError

    count = pdf_page_count(source)  # also rejects unreadable or locked PDFs with a clear message
    _check_page_limit(count, max_pages)
    written = []
    with tempfile.TemporaryDirectory(dir=out_dir) as tmp:
        try:
            # paths_only: pdftoppm writes the files itself, so no page is ever held in memory here.
            paths = convert_from_path(
                source, dpi=dpi, output_folder=tmp, fmt="png", output_file="p", paths_only=True,
            )
        except (PDFInfoNotInstalledError, PDFPageCountError, PDFSyntaxError, OSError) as exc:
            raise RenderError(f"poppler cannot render the PDF: {exc}") from exc
        if len(paths) != count:
            raise RenderError(f"poppler rendered {len(paths)} of {count} pages")
        # pdftoppm zero-pads page numbers, so name order is page order.
        for number, produced in enumerate(sorted(paths), start=1):
            path = _page_path(out_dir, number)
            Path(produced).replace(path)
            written.append((number, path))
    return written


def _render_image(source: Path, out_dir: Path, max_pages: int | None, check: Callable[[], None]) -> list[_Written]:
    written = []
    try:
        with Image.open(source) as image:
            _check_page_limit(getattr(image, "n_frames", 1), max_pages)
            for number, frame in enumerate(ImageSequence.Iterator(image), start=1):
                check()
                path = _page_path(out_dir, number)
                _flatten(ImageOps.exif_transpose(frame)).save(path, format="PNG", compress_level=PNG_LEVEL)
                written.append((number, path))
    except RenderError:
        raise
    except Image.DecompressionBombError as exc:
        raise RenderError("the image is too large to process safely") from exc
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, EOFError) as exc:
        raise RenderError("the image cannot be read (damaged file or unsupported format)") from exc
    if not written:
        raise RenderError("the image has no frames")
    return written


def _flatten(image: Image.Image) -> Image.Image:
    """RGB or greyscale, with transparency composited on white (transparent black would hide text)."""
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        background = Image.new("RGB", rgba.size, "white")
        background.paste(rgba, mask=rgba.getchannel("A"))
        return background
    if image.mode in ("1", "L"):
        return image.convert("L")
    if image.mode in ("I;16", "I;16B", "I;16L", "I"):
        # 16/32-bit greyscale scans: scale to 8 bits instead of clipping everything to white.
        return image.convert("I").point(lambda value: value * (1 / 256)).convert("L")
    return image.convert("RGB")


def _with_preview(number: int, path: Path, preview_width: int) -> RenderedPage:
    preview_path = path.with_name(f"{path.stem}-preview.jpg")
    with Image.open(path) as image:
        width, height = image.size
        preview = image.convert("RGB")
        preview.thumbnail((preview_width, max(1, round(height * preview_width / width))))
        preview.save(preview_path, format="JPEG", quality=80)
    return RenderedPage(number=number, path=path, width=width, height=height, preview_path=preview_path)
