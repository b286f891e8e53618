"""Page images for a vision model (pure): downscaled data: URLs of pages or regions, and requests with their
images replaced by placeholders for the record."""

from __future__ import annotations

import base64
import copy
import io
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from PIL import Image, ImageOps

ImageSource = str | Path | bytes | Image.Image
_DATA_URL = re.compile(r"^data:image/[\w.+-]+;base64,(.*)$", re.DOTALL)


def _open_image(source: ImageSource) -> Image.Image:
    if isinstance(source, Image.Image):
        return source.copy()
    raw = io.BytesIO(source) if isinstance(source, bytes) else Path(source)
    with Image.open(raw) as img:
        img.load()
        return ImageOps.exif_transpose(img)  # phone photos carry their rotation in EXIF


def _encode(img: Image.Image, *, max_side: int, fmt: Literal["JPEG", "PNG"], quality: int) -> str:
    if max(img.size) > max_side:
        img = img.copy()
        img.thumbnail((max_side, max_side), Image.Resampling.LANCZOS)
    buffer = io.BytesIO()
    if fmt == "JPEG":
        if img.mode not in ("RGB", "L"):
            img = img.convert("RGB")
        img.save(buffer, format="JPEG", quality=quality, optimize=True)
    else:
        if img.mode not in ("RGB", "RGBA", "L", "LA", "P", "1"):
            img = img.convert("RGB")
        img.save(buffer, format="PNG", optimize=True)
    return f"data:image/{fmt.lower()};base64,{base64.b64encode(buffer.getvalue()).decode('ascii')}"


def image_to_data_url(
    source: ImageSource, *, max_side: int, fmt: Literal["JPEG", "PNG"] = "JPEG", quality: int = 90
) -> str:
    """A data: URL of the image, downscaled so its longest side is at most max_side (never upscaled).

    JPEG by default: a page scan is several times smaller than as PNG, and vision models bill by pixels.
    """
    return _encode(_open_image(source), max_side=max_side, fmt=fmt, quality=quality)


def crop_to_data_url(
    source: ImageSource,
    bbox_fractions: Sequence[float] | Any,
    max_side: int,
    *,
    fmt: Literal["JPEG", "PNG"] = "JPEG",
    quality: int = 90,
) -> str:
    """A data: URL of one region of a page. bbox_fractions: (left, top, width, height) in 0..1 or a BBox."""
    if hasattr(bbox_fractions, "left"):
        left, top, width, height = (
            bbox_fractions.left,
            bbox_fractions.top,
            bbox_fractions.width,
            bbox_fractions.height,
        )
    else:
        left, top, width, height = (float(v) for v in bbox_fractions)
    if width <= 0 or height <= 0:
        raise ValueError(f"crop box must have a positive size, got width={width} height={height}")
    img = _open_image(source)
    w, h = img.size
    box = (
        max(0, math.floor(left * w)),
        max(0, math.floor(top * h)),
        min(w, math.ceil((left + width) * w)),
        min(h, math.ceil((top + height) * h)),
    )
    if box[2] <= box[0] or box[3] <= box[1]:
        raise ValueError(
            f"crop box (left={left}, top={top}, width={width}, height={height}) lies outside the page"
        )
    return _encode(img.crop(box), max_side=max_side, fmt=fmt, quality=quality)


def redact_images(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A copy of the messages with every data: image URL replaced by "<image N WxH>" (N counts from 1)."""
    redacted = copy.deepcopy(messages)
    counter = 0
    for message in redacted:
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for part in content:
            if not isinstance(part, dict) or part.get("type") != "image_url":
                continue
            image_url = part.get("image_url")
            url = image_url.get("url") if isinstance(image_url, dict) else image_url
            if not isinstance(url, str) or not url.startswith("data:"):
                continue
            counter += 1
            placeholder = f"<image {counter} {_data_url_size(url)}>"
            if isinstance(image_url, dict):
                image_url["url"] = placeholder
            else:
                part["image_url"] = placeholder
    return redacted


def _data_url_size(url: str) -> str:
    match = _DATA_URL.match(url)
    if not match:
        return "?x?"
    try:
        with Image.open(io.BytesIO(base64.b64decode(match.group(1)))) as img:  # reads the header only
            return f"{img.width}x{img.height}"
    except (ValueError, OSError):
        return "?x?"

