"""Draw proof boxes on a page image (pure, Pillow): the desk's download for sharing outside the desk."""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping

from PIL import Image, ImageDraw

HIGHLIGHT = (250, 204, 21)  # the desk's highlight colour
OUTLINE = (220, 38, 38)


def box_pixels(bbox: Mapping[str, float], width: int, height: int, pad: int = 2
               ) -> tuple[int, int, int, int] | None:
    """A normalized {left, top, width, height} box as pixel corners (x0, y0, x1, y1), clamped to the image; None
    for a box wholly outside it (an engine or a model may place one past the page's edge)."""
    x0 = int(round(float(bbox["left"]) * width)) - pad
    y0 = int(round(float(bbox["top"]) * height)) - pad
    x1 = int(round((float(bbox["left"]) + float(bbox["width"])) * width)) + pad
    y1 = int(round((float(bbox["top"]) + float(bbox["height"])) * height)) + pad
    if x0 > width - 1 or y0 > height - 1 or x1 < 0 or y1 < 0:
        return None
    return max(0, x0), max(0, y0), min(width - 1, x1), min(height - 1, y1)


def draw_boxes(
    image: Image.Image, boxes: Iterable[Mapping[str, float]], *, line_width: int | None = None
) -> Image.Image:
    """A copy of the image with each box filled translucently and outlined."""
    base = image.convert("RGBA")
    overlay = Image.new("RGBA", base.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(overlay)
    stroke = line_width or max(2, base.width // 400)
    for bbox in boxes:
        corners = box_pixels(bbox, base.width, base.height)
        if corners is None:
            continue
        draw.rectangle(corners, fill=(*HIGHLIGHT, 90), outline=(*OUTLINE, 255), width=stroke)
    return Image.alpha_composite(base, overlay).convert("RGB")


def annotate_png(image_bytes: bytes, boxes: Iterable[Mapping[str, float]]) -> bytes:
    """PNG bytes of the page image with the boxes drawn on it."""
    with Image.open(io.BytesIO(image_bytes)) as img:
        out = draw_boxes(img, boxes)
    buf = io.BytesIO()
    out.save(buf, format="PNG", optimize=False)
    return buf.getvalue()
