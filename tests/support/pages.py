"""Page sizes for tests that build OCR blocks by hand (extraction/ocr/geometry.py: every block carries its page's
size, and distances are measured in it)."""

from __future__ import annotations

import json
from pathlib import Path

from PIL import Image

from extraction.ocr.geometry import PageSize

# A square page of side 1: blocks written in fractions of it measure the same across and down, as the
# hand-built pages of the older tests were drawn.
SQUARE = PageSize(1.0, 1.0)
# US Letter in points: the page of the recorded Textract responses that come without their image.
LETTER = PageSize(612.0, 792.0)


def textract_sizes(response: Path) -> dict[int, PageSize]:
    """The page sizes of a recorded Textract response (`<name>.textract.json`): its page image's pixels where
    the image lies beside it (`<name>.png` or `.jpg`), else US Letter for every page it holds."""
    stem = response.name.removesuffix(".textract.json")
    for suffix in (".png", ".jpg"):
        image = response.with_name(stem + suffix)
        if image.exists():
            with Image.open(image) as opened:
                return {1: PageSize(*opened.size)}
    blocks = json.loads(response.read_text()).get("Blocks", [])
    return {int(b.get("Page") or 1): LETTER for b in blocks} or {1: LETTER}
