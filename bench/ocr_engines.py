"""OCR and rendering speed on the shared invoices, plus the process's peak memory.

Run from the project root:  .venv/bin/python bench/ocr_engines.py [--limit N]
Prints a markdown table. Timings exclude model loading, which is reported on its own row.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from PIL import Image, ImageDraw, ImageFont  # noqa: E402

from extraction.ocr.blocks import PageImage, SourceDocument  # noqa: E402
from extraction.ocr.pdf_text import PdfTextEngine  # noqa: E402
from extraction.ocr.rapid import RapidOcrEngine  # noqa: E402
from extraction.ocr.tesseract import TesseractEngine, tesseract_available  # noqa: E402
from extraction.render import pdf_page_count, render_document  # noqa: E402

INVOICES = ROOT.parent / "shared" / "data" / "invoices"
DPI = 150


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB


def cpu_seconds() -> float:
    """CPU time of this process and its finished children (tesseract, pdftoppm), all threads."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed(rows: list[list[str]], what: str, source: str, pages: int, work: Callable[[], object]) -> None:
    started, cpu_started = time.perf_counter(), cpu_seconds()
    work()
    seconds, cpu = time.perf_counter() - started, cpu_seconds() - cpu_started
    rate = f"{pages / seconds:.2f}" if pages else "-"
    cpu_per_page = f"{cpu / pages:.2f}" if pages else "-"
    rss = f"{peak_rss_mb():.0f}"
    rows.append([what, source, str(pages or "-"), f"{seconds:.2f}", rate, cpu_per_page, rss])
    print(f"  {what} on {source}: {seconds:.2f} s", file=sys.stderr, flush=True)


def image_page(path: Path, number: int = 1) -> PageImage:
    with Image.open(path) as image:
        return PageImage(number=number, path=path, width=image.width, height=image.height)


def warmup_page(path: Path) -> PageImage:
    """A one-line image: the first read loads the models, so it is timed apart from the pages."""
    image = Image.new("RGB", (1240, 400), "white")  # small images are upscaled for detection
    ImageDraw.Draw(image).text((60, 150), "Invoice 12345", fill="black", font=ImageFont.load_default(size=36))
    image.save(path)
    return image_page(path)


def read_all(engine, documents: list[SourceDocument]) -> None:
    for document in documents:
        engine.read(document)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--limit", type=int, default=None, help="use at most N files of each kind")
    args = parser.parse_args()
    if not INVOICES.is_dir():
        sys.exit(f"no invoices at {INVOICES}")
    pdfs = sorted(INVOICES.glob("*.pdf"))[: args.limit]
    pngs = sorted(INVOICES.glob("*.png"))[: args.limit]
    rows: list[list[str]] = []

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        # Rendering: each PDF page to PNG at DPI.
        rendered: list[SourceDocument] = []

        def render_pymupdf() -> None:
            for pdf in pdfs:
                pages = render_document(source=pdf, kind="pdf", out_dir=work / "mupdf" / pdf.stem, dpi=DPI)
                rendered.append(SourceDocument(pdf, "pdf", [p.as_page_image() for p in pages]))

        pdf_page_total = sum(pdf_page_count(pdf) for pdf in pdfs)
        timed(rows, f"render pymupdf {DPI} dpi", "invoice PDFs", pdf_page_total, render_pymupdf)
        if shutil.which("pdftoppm"):
            timed(rows, f"render pdf2image {DPI} dpi", "invoice PDFs", pdf_page_total, lambda: [
                render_document(source=pdf, kind="pdf", out_dir=work / "poppler" / pdf.stem, dpi=DPI,
                                renderer="pdf2image") for pdf in pdfs])
        else:
            rows.append(["render pdf2image", "poppler not installed", "-", "-", "-", "-", "-"])

        scans = [SourceDocument(png, "image", [image_page(png)]) for png in pngs]
        scan_pages = len(scans)

        pdf_text, no_tables = PdfTextEngine(), PdfTextEngine(tables=False)
        n = pdf_page_total
        timed(rows, "pdf-text (with tables)", "invoice PDFs", n, lambda: read_all(pdf_text, rendered))
        timed(rows, "pdf-text (no tables)", "invoice PDFs", n, lambda: read_all(no_tables, rendered))
        as_images = [SourceDocument(d.path, "image", d.pages) for d in rendered]
        warmup = SourceDocument(work / "warmup.png", "image", [warmup_page(work / "warmup.png")])

        for threads in (1, None):
            label = "rapidocr" + (f" threads={threads}" if threads else " threads=all cores")
            engine = RapidOcrEngine(threads=threads)
            timed(rows, f"{label}: load models", "one line", 1, lambda engine=engine: engine.read(warmup))
            timed(rows, label, "invoice PNG scans", scan_pages, lambda engine=engine: read_all(engine, scans))
            timed(rows, label, f"invoice PDFs at {DPI} dpi", pdf_page_total,
                  lambda engine=engine: read_all(engine, as_images))

        if tesseract_available():
            tess = TesseractEngine()
            timed(rows, "tesseract (eng)", "invoice PNG scans", scan_pages, lambda: read_all(tess, scans))
            timed(rows, "tesseract (eng)", f"invoice PDFs at {DPI} dpi", pdf_page_total,
                  lambda: read_all(tess, as_images))
        else:
            rows.append(["tesseract", "not installed", "-", "-", "-", "-", "-"])

    print(f"\n{len(pdfs)} PDFs ({pdf_page_total} pages), {scan_pages} PNG scans, {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f} at the end. CPU s/page counts every thread (and child "
          f"process), so it is steadier than wall time on a busy machine; peak RSS is the process's "
          f"high-water mark after each row.\n")
    header = ["step", "input", "pages", "wall s", "pages/s", "CPU s/page", "peak RSS MB"]
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
