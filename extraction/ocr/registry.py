"""Pick an OCR engine by name, and the "auto" engine that chooses per page.

Engines are built on demand; heavy or optional dependencies (RapidOCR models, the tesseract
binary, boto3 for Textract) are touched only when an engine actually reads.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from extraction.ocr.blocks import OcrEngine, OcrError, OcrPage, PageImage, SourceDocument
from extraction.ocr.embedded import add_embedded_text
from extraction.ocr.pdf_text import PdfTextEngine, open_pdf, page_has_usable_text, read_pdf_page
from extraction.ocr.rapid import RapidOcrEngine
from extraction.ocr.tesseract import TesseractEngine

DEFAULT_SCAN_ENGINE = "rapidocr"

ENGINE_CHOICES: list[tuple[str, str]] = [
    ("auto", "Automatic: the PDF text layer where there is one, RapidOCR elsewhere"),
    ("pdf-text", "PDF text layer only (born-digital PDFs)"),
    ("rapidocr", "RapidOCR (offline, for scans and photos)"),
    ("tesseract", "Tesseract (offline, if installed on the server)"),
    ("textract", "AWS Textract (cloud, reads tables)"),
]
ENGINE_NAMES = [value for value, _ in ENGINE_CHOICES]


def get_engine(name: str, **options: Any) -> OcrEngine:
    """An engine by its ENGINE_CHOICES value; `options` go to its constructor.

    For "auto", `scan_engine` (a name, default "rapidocr") reads pages without a usable text layer,
    `tables` is passed to pdf-text, and the remaining options go to the scan engine.
    """
    try:
        if name == "pdf-text":
            return PdfTextEngine(**options)
        if name == "rapidocr":
            return RapidOcrEngine(**options)
        if name == "tesseract":
            return TesseractEngine(**options)
        if name == "auto":
            scan_name = options.pop("scan_engine", DEFAULT_SCAN_ENGINE)
            tables = options.pop("tables", True)
            images = options.pop("images", True)
            if scan_name in ("auto", "pdf-text"):
                raise OcrError(f"the auto engine needs an OCR engine for scans, not {scan_name!r}")
            return AutoEngine(scan_engine=get_engine(scan_name, **options), tables=tables, images=images)
        if name == "textract":
            from extraction.ocr.textract import TextractEngine  # boto3 only when Textract is chosen

            return TextractEngine(**options)
    except TypeError as exc:  # a misspelt or missing option in the configuration
        raise OcrError(f"bad options for the {name} OCR engine: {exc}") from exc
    raise OcrError(f"unknown OCR engine {name!r}; choose one of: {', '.join(ENGINE_NAMES)}")


class AutoEngine:
    """Per page: the PDF's own text where it is usable (plus what the scan engine reads in its images), the
    scan engine everywhere else.

    Each returned OcrPage.engine names the engine that read it.
    """

    name = "auto"

    def __init__(self, *, scan_engine: OcrEngine | None = None, tables: bool = True, images: bool = True) -> None:
        self.scan_engine = scan_engine or RapidOcrEngine()
        self.tables = tables
        self.images = images

    def read(self, document: SourceDocument) -> list[OcrPage]:
        if not document.pages:
            raise OcrError("the document has no rendered pages to read")
        pages: list[OcrPage] = []
        to_scan: list[PageImage] = list(document.pages)
        if document.kind == "pdf":
            to_scan = []
            with open_pdf(document.path) as doc:
                for image in document.pages:
                    if not 1 <= image.number <= doc.page_count:
                        raise OcrError(f"the PDF has no page {image.number}")
                    page = doc.load_page(image.number - 1)
                    if page_has_usable_text(page):
                        text_page = read_pdf_page(page, image.number, tables=self.tables)
                        # text inside the page's images (a letterhead, company data as a picture) is OCR'd
                        pages.append(add_embedded_text(page, text_page, self.scan_engine) if self.images else text_page)
                    else:
                        to_scan.append(image)
        # One page per call so any engine keeps the true page number; an engine with page_workers reads
        # that many pages at once (onnxruntime releases the GIL).
        workers = min(getattr(self.scan_engine, "page_workers", 1), len(to_scan))
        if workers > 1:
            with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ocr-page") as pool:
                pages += pool.map(self._scan, to_scan)
        else:
            pages += [self._scan(image) for image in to_scan]
        return sorted(pages, key=lambda p: p.number)

    def _scan(self, image: PageImage) -> OcrPage:
        single = SourceDocument(path=image.path, kind="image", pages=[image])
        result = self.scan_engine.read(single)
        if len(result) != 1:
            raise OcrError(f"{self.scan_engine.name} returned {len(result)} pages for page {image.number}")
        page = result[0]
        if page.number != image.number:  # an engine that numbers a one-page document from 1
            page.number = image.number
            for block in page.blocks:
                block.page = image.number
        page.engine = page.engine or self.scan_engine.name
        return page
