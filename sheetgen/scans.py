"""Degraded scans and photos of generated sheets (pure): each style's parameters are drawn from the seed.

| style | what happens to the page |
| --- | --- |
| scanner | `render_scan`: 150 dpi, slight rotation (±1.2°), light blur, grey noise, JPEG 35-65 |
| rotated | rotated 1.8-4° either way |
| skewed | sheared (the feeder pulled one side: 1.5-3.5 % of the height) plus a slight rotation |
| blurred | out of focus: Gaussian blur 1.1-1.6 px |
| jpeg | heavy JPEG compression, quality 12-22 |
| low-res | 100-120 dpi |
| photo | a phone's picture: perspective (corners moved 1-3.5 %), uneven light (a gradient, a dark |
|       | corner), the desk around the page, colour, light blur |
"""

from __future__ import annotations

import io
import random

import numpy as np
from PIL import Image, ImageFilter

from sheetgen.layouts import SCAN_STYLES

__all__ = ["SCAN_STYLES", "scan_image"]


def _grain(image: Image.Image, sigma: float, seed: int) -> Image.Image:
    grain = np.random.default_rng(seed).normal(0.0, sigma, (image.height, image.width))
    return Image.fromarray(np.clip(np.asarray(image, dtype=np.float64) + grain, 0, 255).astype(np.uint8))


def _jpeg(image: Image.Image, quality: int) -> bytes:
    buf = io.BytesIO()
    image.save(buf, format="JPEG", quality=quality)
    return buf.getvalue()


def _perspective_coeffs(src: list[tuple[float, float]], dst: list[tuple[float, float]]) -> list[float]:
    """Coefficients for PIL's PERSPECTIVE transform mapping output points `dst` back to input points `src`."""
    rows = []
    for (x, y), (u, v) in zip(dst, src, strict=True):
        rows.append([x, y, 1, 0, 0, 0, -u * x, -u * y])
        rows.append([0, 0, 0, x, y, 1, -v * x, -v * y])
    a = np.array(rows, dtype=np.float64)
    b = np.array([c for point in src for c in point], dtype=np.float64)
    return list(np.linalg.solve(a, b))


def _photo(page: Image.Image, rng: random.Random, seed: int) -> Image.Image:
    w, h = page.size
    border = int(0.04 * max(w, h))
    canvas_w, canvas_h = w + 2 * border, h + 2 * border
    shift = [(rng.uniform(0.01, 0.035) * w, rng.uniform(0.01, 0.035) * h) for _ in range(4)]
    corners = [(border + shift[0][0], border + shift[0][1]), (border + w - shift[1][0], border + shift[1][1]),
               (border + w - shift[2][0], border + h - shift[2][1]), (border + shift[3][0], border + h - shift[3][1])]
    coeffs = _perspective_coeffs([(0, 0), (w, 0), (w, h), (0, h)], corners)
    table = (rng.randint(70, 110), rng.randint(60, 95), rng.randint(45, 80))  # a wooden or grey desk
    warped = page.convert("RGB").transform((canvas_w, canvas_h), Image.Transform.PERSPECTIVE, coeffs,
                                           resample=Image.Resampling.BICUBIC, fillcolor=table)
    # Uneven light: brighter on one side, a dark corner, a warm cast.
    ys, xs = np.mgrid[0:canvas_h, 0:canvas_w].astype(np.float64)
    angle = rng.uniform(0, 2 * np.pi)
    ramp = (np.cos(angle) * xs / canvas_w + np.sin(angle) * ys / canvas_h)
    ramp = (ramp - ramp.min()) / (np.ptp(ramp) or 1.0)
    light = 1.0 - rng.uniform(0.2, 0.4) * ramp
    cx, cy = rng.choice([(0, 0), (canvas_w, 0), (0, canvas_h), (canvas_w, canvas_h)])
    dist = np.hypot(xs - cx, ys - cy) / np.hypot(canvas_w, canvas_h)
    light *= 1.0 - rng.uniform(0.1, 0.25) * np.clip(1.0 - dist * 2.2, 0, 1)
    tint = np.array([1.0, rng.uniform(0.95, 0.99), rng.uniform(0.86, 0.94)])
    pixels = np.asarray(warped, dtype=np.float64) * light[..., None] * tint
    noise = np.random.default_rng(seed).normal(0.0, rng.uniform(2.0, 5.0), pixels.shape)
    image = Image.fromarray(np.clip(pixels + noise, 0, 255).astype(np.uint8))
    return image.filter(ImageFilter.GaussianBlur(rng.uniform(0.5, 0.9)))


def scan_image(pdf_bytes: bytes, *, seed: int, style: str) -> bytes:
    """JPEG bytes of page 1 degraded in `style` (one of SCAN_STYLES), deterministic for a seed."""
    from sheetgen.generate import render_page, render_scan

    if style not in SCAN_STYLES:
        raise ValueError(f"unknown scan style {style!r}; known: {list(SCAN_STYLES)}")
    if style == "scanner":
        return render_scan(pdf_bytes, seed=seed)
    rng = random.Random(f"{style}-{seed}")
    if style == "photo":
        page = render_page(pdf_bytes, dpi=rng.randint(150, 170))
        return _jpeg(_photo(page, rng, seed), rng.randint(60, 80))
    dpi = rng.randint(100, 120) if style == "low-res" else 150
    rotation = {"rotated": rng.choice([-1, 1]) * rng.uniform(1.8, 4.0), "skewed": rng.uniform(-0.5, 0.5)}.get(
        style, rng.uniform(-0.8, 0.8))
    blur = rng.uniform(1.1, 1.6) if style == "blurred" else rng.uniform(0.3, 0.7)
    quality = rng.randint(12, 22) if style == "jpeg" else rng.randint(45, 70)
    image = render_page(pdf_bytes, dpi=dpi).convert("L").point(lambda v: int(v * 0.94) + 4)
    if style == "skewed":
        shear = rng.choice([-1, 1]) * rng.uniform(0.015, 0.035)
        image = image.transform(image.size, Image.Transform.AFFINE, (1, shear, -shear * image.height / 2, 0, 1, 0),
                                resample=Image.Resampling.BICUBIC, fillcolor=244)
    image = image.rotate(rotation, resample=Image.Resampling.BICUBIC, expand=False, fillcolor=244)
    image = image.filter(ImageFilter.GaussianBlur(blur))
    return _jpeg(_grain(image, rng.uniform(3.0, 7.0), seed), quality)


def degrade_scan(page: Image.Image, *, seed: int, perspective: float, rotation: float, lighting: str, blur: float,
                 grain: float, jpeg_quality: int, depth: float | None = None) -> bytes:
    """JPEG bytes of `page` scanned with the given parameters (the sampled sheets' scans).

    `perspective` is the largest corner move (a fraction of the side; each corner moves inward by up to it; up
    and down, a fraction of `depth` px where given, else of the page's height),
    `lighting` one of even | gradient | dark-corner | gradient+corner. Which corner moves how far and where
    the light falls come from `seed`, so the same arguments give the same bytes.
    """
    rng = random.Random(f"degrade-{seed}")
    image = page.convert("L").point(lambda v: int(v * 0.94) + 4)
    w, h = image.size
    if perspective > 0:
        down = h if depth is None else depth
        shift = [(rng.uniform(0, perspective) * w, rng.uniform(0, perspective) * down) for _ in range(4)]
        corners = [(shift[0][0], shift[0][1]), (w - shift[1][0], shift[1][1]), (w - shift[2][0], h - shift[2][1]),
                   (shift[3][0], h - shift[3][1])]
        coeffs = _perspective_coeffs([(0, 0), (w, 0), (w, h), (0, h)], corners)
        image = image.transform((w, h), Image.Transform.PERSPECTIVE, coeffs, resample=Image.Resampling.BICUBIC,
                                fillcolor=236)
    image = image.rotate(rotation, resample=Image.Resampling.BICUBIC, expand=False, fillcolor=236)
    if lighting != "even":
        ys, xs = np.mgrid[0:h, 0:w].astype(np.float64)
        light = np.ones((h, w))
        if "gradient" in lighting:
            angle = rng.uniform(0, 2 * np.pi)
            ramp = np.cos(angle) * xs / w + np.sin(angle) * ys / h
            light -= rng.uniform(0.12, 0.3) * (ramp - ramp.min()) / (np.ptp(ramp) or 1.0)
        if "corner" in lighting:
            cx, cy = rng.choice([(0, 0), (w, 0), (0, h), (w, h)])
            dist = np.hypot(xs - cx, ys - cy) / np.hypot(w, h)
            light *= 1.0 - rng.uniform(0.15, 0.3) * np.clip(1.0 - dist * 2.2, 0, 1)
        image = Image.fromarray(np.clip(np.asarray(image, dtype=np.float64) * light, 0, 255).astype(np.uint8))
    image = image.filter(ImageFilter.GaussianBlur(blur))
    return _jpeg(_grain(image, grain, seed), jpeg_quality)
