"""OCR engines configured from settings, built once per worker process (model loading is slow)."""

from __future__ import annotations

from functools import cache
from typing import Any

from django.conf import settings

from extraction.ocr.blocks import OcrEngine


@cache
def engine_for(name: str) -> OcrEngine:
    from extraction.ocr.registry import get_engine

    if name == "textract":
        return get_engine(name, region=settings.AWS_REGION, bucket=settings.TEXTRACT_BUCKET or None)
    if name in ("rapidocr", "auto"):
        return get_engine(name, **rapidocr_options())
    return get_engine(name)


def rapidocr_options() -> dict[str, Any]:
    """RapidOCR's speed settings (settings.OCR_*, read from the env and checked at start-up)."""
    return {"runtime": settings.OCR_RUNTIME, "east_asian": settings.OCR_EAST_ASIAN,
            "threads": settings.OCR_THREADS or None, "det_limit": settings.OCR_DET_LIMIT or None,
            "rec_batch": settings.OCR_REC_BATCH, "rec_width": settings.OCR_REC_WIDTH, "rec_workers": settings.OCR_REC_WORKERS,
            "page_workers": settings.OCR_PAGE_WORKERS, "page_limit": settings.OCR_PAGE_LIMIT or None}
