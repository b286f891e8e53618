"""Tesseract through its command line (`tesseract page.png - tsv`): an optional offline engine.

Used only when the `tesseract` binary is installed (apt: tesseract-ocr plus tesseract-ocr-<lang>).
Gives lines (rebuilt from its words) and words, no tables; Tesseract's own block/paragraph/line order
is the reading order.
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess

from extraction.ocr.blocks import BBox, OcrError, OcrPage, PageImage, SourceDocument
from extraction.ocr.geometry import PageSize
from extraction.ocr.lines import EngineWord, build_page_lines

WORD_LEVEL = "5"


def tesseract_available() -> bool:
    return shutil.which("tesseract") is not None


class TesseractEngine:
    name = "tesseract"

    def __init__(self, *, languages: str = "eng", psm: int | None = None, timeout: float = 300.0) -> None:
        """`languages` as Tesseract spells them ("eng+deu"); `psm` is its page segmentation mode."""
        self.languages = languages
        self.psm = psm
        self.timeout = timeout

    def read(self, document: SourceDocument) -> list[OcrPage]:
        if not document.pages:
            raise OcrError("the document has no rendered pages to read")
        return [self.read_image(page) for page in document.pages]

    def read_image(self, page: PageImage) -> OcrPage:
        binary = shutil.which("tesseract")
        if binary is None:
            raise OcrError("tesseract is not installed: install tesseract-ocr or pick another OCR engine")
        command = [binary, str(page.path), "-", "-l", self.languages]
        if self.psm is not None:
            command += ["--psm", str(self.psm)]
        command.append("tsv")
        # One thread per process: Tesseract's OpenMP threads slow it down when workers run in parallel.
        env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
        try:
            done = subprocess.run(command, capture_output=True, env=env, timeout=self.timeout, check=False)
        except subprocess.TimeoutExpired as exc:
            raise OcrError(f"tesseract took longer than {self.timeout:.0f} s on page {page.number}") from exc
        if done.returncode != 0:
            detail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no message"]
            raise OcrError(f"tesseract failed on page {page.number}: {detail[0]}")
        return parse_tsv(done.stdout.decode("utf-8", "replace"), number=page.number,
                         width=page.width, height=page.height)


def parse_tsv(tsv: str, *, number: int, width: int, height: int) -> OcrPage:
    """LINE and WORD blocks from Tesseract's TSV (boxes in pixels of a width x height image)."""

    def normalize(left: float, top: float, right: float, bottom: float) -> BBox:
        x0, y0 = _clamp(left / width), _clamp(top / height)
        return BBox(x0, y0, _clamp(right / width) - x0, _clamp(bottom / height) - y0)

    # Tesseract's own lines may join two rows of a skewed scan or cells far apart: lines are rebuilt
    # from its words (extraction/ocr/lines.py), in Tesseract's block/paragraph/line reading order.
    words: list[EngineWord] = []
    lines: dict[tuple[str, str, str], int] = {}  # Tesseract's (block, paragraph, line) -> its index
    for row in csv.DictReader(io.StringIO(tsv), delimiter="\t", quoting=csv.QUOTE_NONE):
        text = (row.get("text") or "").strip()
        if row.get("level") != WORD_LEVEL or not text:
            continue
        left, top, w, h = (int(row[key]) for key in ("left", "top", "width", "height"))
        confidence = max(0.0, min(float(row["conf"]) / 100, 1.0))
        key = lines.setdefault((row["block_num"], row["par_num"], row["line_num"]), len(lines))
        words.append(EngineWord(text=text, bbox=normalize(left, top, left + w, top + h), confidence=confidence,
                                line=key))
    blocks = build_page_lines(number, words, size=PageSize(width, height), keep_engine_order=True).blocks
    return OcrPage(number=number, blocks=blocks, engine=TesseractEngine.name)


def _clamp(value: float) -> float:
    return min(max(value, 0.0), 1.0)
