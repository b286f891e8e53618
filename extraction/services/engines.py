"""OCR engines configured from settings, built once per worker process (model loading is slow)."""

from __future__ import annotations

from functools import cache

from django.conf import settings

from extraction.ocr.blocks import OcrEngine


@cache
def engine_for(name: str) -> OcrEngine:
    from extraction.ocr.registry import get_engine

    if name == "textract":
        return get_engine(name, region=settings.AWS_REGION, bucket=settings.TEXTRACT_BUCKET or None)
    return get_engine(name)
