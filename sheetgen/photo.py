"""A phone's photo of a printed sheet lying on a table (pure): the forms family's photo scans.

What happens to the page, in order (every amount from `FormScan`, sheetgen/forms.py; where it happens from
the seed):

| step | what it does |
| --- | --- |
| faded, uneven print | the ink lightened by up to `fade`, more in some places than others (a smooth random |
|                     | field), and `streaks` thin lines along the paper where it is lighter still (worn dots of a |
|                     | thermal head); thermal paper's cast and a grey-black ink |
| curl | the paper bends: a bow across its width, waves along its length (lines squeezed where it tilts, |
|      | drifting sideways), shaded where it turns from the light |
| placement | rotated by `rotation` degrees, corners moved by up to `perspective` (a camera not square to the |
|           | table), on a darker table (`background`: wood, grey, dark cloth, green) with a `margin` around it |
|           | and the paper's soft shadow on it |
| light | a soft shadow over part of the picture (`shadow`: a side, a corner, a hand or the phone), a warm |
|       | cast, a little vignetting |
| camera | blur, grain, JPEG at `jpeg_quality` |

Deterministic: the same page, conventions and seed give the same bytes.
"""

from __future__ import annotations

import io
import math
import random

import cv2
import numpy as np
from PIL import Image

from sheetgen.forms import FormScan

__all__ = ["photograph"]

_TABLES = {"wood": ((88, 122), (58, 82), (34, 52)), "grey": ((66, 98), (66, 98), (66, 98)),
           "dark": ((26, 46), (28, 50), (36, 64)), "green": ((32, 52), (66, 92), (46, 66))}


def _smooth(rng: random.Random, h: int, w: int, cells: int) -> np.ndarray:
    """A smooth random field in [0, 1] of shape (h, w): a coarse grid of random values, upsampled."""
    gw = max(2, cells)
    gh = max(2, round(cells * h / max(w, 1)))
    gh = min(gh, 400)
    grid = np.array([[rng.random() for _ in range(gw)] for _ in range(gh)], dtype=np.float32)
    field = cv2.resize(grid, (w, h), interpolation=cv2.INTER_CUBIC)
    lo, hi = float(field.min()), float(field.max())
    return (field - lo) / ((hi - lo) or 1.0)


def _faded(page: Image.Image, scan: FormScan, rng: random.Random) -> np.ndarray:
    """The page as RGB float32 (0-255) with its print faded unevenly, streaked, on thermal paper's cast."""
    grey = np.asarray(page.convert("L"), dtype=np.float32) / 255.0
    h, w = grey.shape
    ink = 1.0 - grey
    strength = 1.0 - scan.fade * _smooth(rng, h, w, rng.randint(3, 7))
    for _ in range(scan.streaks):
        x, width = rng.randrange(w), rng.randint(1, 3)
        strength[:, x:x + width] *= rng.uniform(0.3, 0.65)
    ink *= strength
    paper = np.array([rng.uniform(236, 250), rng.uniform(237, 250), rng.uniform(238, 252)], dtype=np.float32)
    dark = rng.uniform(18, 55)
    tone = np.array([dark + rng.uniform(-4, 4), dark + rng.uniform(-4, 4), dark + rng.uniform(0, 12)], dtype=np.float32)
    return paper * (1.0 - ink[..., None]) + tone * ink[..., None]


def _table(rng: random.Random, scan: FormScan, h: int, w: int) -> np.ndarray:
    base = np.array([rng.uniform(*span) for span in _TABLES[scan.background]], dtype=np.float32)
    shade = 0.9 + 0.2 * _smooth(rng, h, w, 4)
    if scan.background == "wood":  # grain along the boards
        angle = rng.uniform(0, math.pi)
        ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
        along = xs * math.cos(angle) + ys * math.sin(angle)
        warp = 60.0 * _smooth(rng, h, w, 6)
        shade *= 1.0 + rng.uniform(0.02, 0.05) * np.sin((along + warp) * (2 * math.pi / rng.uniform(20, 50)))
    return base * shade[..., None]


def tilt_depth(h: int, w: int) -> float:
    """The length (px) a page's corners move up and down in, as a fraction: its height, but on a long strip only
    a part of it as long as one and a half widths (a camera or a scanner lid tilts the paper along a part of its
    length; measured over the whole of a strip a metre long, a move of a few hundredths sheared its lines by ten
    degrees and more)."""
    return min(h, 1.5 * w)


def _placement(rng: random.Random, scan: FormScan, h: int, w: int) -> tuple[np.ndarray, int, int]:
    """The homography from the page to the canvas, and the canvas size: rotation, perspective, margins."""
    depth = tilt_depth(h, w)
    src = np.array([(0, 0), (w, 0), (w, h), (0, h)], dtype=np.float32)
    inward = [(1, 1), (-1, 1), (-1, -1), (1, -1)]
    moved = np.array([(x + dx * rng.uniform(0, scan.perspective) * w, y + dy * rng.uniform(0, scan.perspective) * depth)
                      for (x, y), (dx, dy) in zip(src, inward, strict=True)], dtype=np.float32)
    theta = math.radians(scan.rotation)
    cos, sin = math.cos(theta), math.sin(theta)
    cx, cy = w / 2, h / 2
    turned = np.array([(cx + (x - cx) * cos - (y - cy) * sin, cy + (x - cx) * sin + (y - cy) * cos)
                       for x, y in moved], dtype=np.float32)
    side = min(w, h)  # the table around the paper, in proportion to its narrow side (a strip's width)
    mx, my = scan.margin * side, scan.margin * side * rng.uniform(0.5, 1.0)
    turned -= turned.min(axis=0) - np.array([mx, my], dtype=np.float32)
    width_px = int(math.ceil(turned[:, 0].max() + mx))
    height_px = int(math.ceil(turned[:, 1].max() + my))
    return cv2.getPerspectiveTransform(src, turned), height_px, width_px


def _soft_shadow(rng: random.Random, scan: FormScan, h: int, w: int) -> np.ndarray:
    """How much light each pixel keeps under the drawn shadow (1 = all)."""
    if scan.shadow == "none":
        return np.ones((h, w), dtype=np.float32)
    sh, sw = max(8, h // 8), max(8, w // 8)
    ys, xs = np.mgrid[0:sh, 0:sw].astype(np.float32)
    depth = rng.uniform(0.18, 0.4)
    if scan.shadow == "side":
        angle = rng.uniform(0, 2 * math.pi)
        ramp = math.cos(angle) * xs / sw + math.sin(angle) * ys / sh
        ramp = (ramp - ramp.min()) / (float(np.ptp(ramp)) or 1.0)
        dark = np.clip((ramp - rng.uniform(0.3, 0.6)) * 3.0, 0, 1)
    elif scan.shadow == "corner":
        cx, cy = rng.choice([(0, 0), (sw, 0), (0, sh), (sw, sh)])
        dist = np.hypot((xs - cx) / sw, (ys - cy) / sh)
        dark = np.clip(1.0 - dist / rng.uniform(0.5, 0.9), 0, 1)
    else:  # a hand or the phone between the light and the paper: a soft blob
        cx, cy = rng.uniform(0.1, 0.9) * sw, rng.uniform(0.1, 0.9) * sh
        rx, ry = rng.uniform(0.3, 0.8) * sw, rng.uniform(0.08, 0.25) * sh if sh > 2 * sw else rng.uniform(0.2, 0.45) * sh
        dark = (((xs - cx) / rx) ** 2 + ((ys - cy) / ry) ** 2 <= 1.0).astype(np.float32)
    dark = cv2.GaussianBlur(dark.astype(np.float32), (0, 0), sigmaX=max(1.0, sw * 0.06), sigmaY=max(1.0, sw * 0.06))
    return cv2.resize(1.0 - depth * dark, (w, h), interpolation=cv2.INTER_LINEAR)


def photograph(page: Image.Image, scan: FormScan, *, seed: int) -> bytes:
    """JPEG bytes of a photo of `page` (a clean render at the scan's dpi) on a table, as `scan` says."""
    rng = random.Random(f"photo-{seed}")
    sheet = _faded(page, scan, rng)
    h, w = sheet.shape[:2]
    homography, ch, cw = _placement(rng, scan, h, w)
    inverse = np.linalg.inv(homography).astype(np.float64)
    ys, xs = np.mgrid[0:ch, 0:cw].astype(np.float32)
    den = inverse[2, 0] * xs + inverse[2, 1] * ys + inverse[2, 2]
    u = (inverse[0, 0] * xs + inverse[0, 1] * ys + inverse[0, 2]) / den
    v = (inverse[1, 0] * xs + inverse[1, 1] * ys + inverse[1, 2]) / den
    del xs, ys, den
    # curl: a bow across the width, waves along the length (squeezing the lines), a sideways drift
    curl, side = scan.curl, min(w, h)  # sizes in proportion to the paper's narrow side
    across = (2.0 * u / w - 1.0) ** 2
    wave_len, drift_len, bow_len = (rng.uniform(1.5, 4.0) * side, rng.uniform(3.0, 8.0) * side,
                                    rng.uniform(2.0, 6.0) * side)
    phases = [rng.uniform(0, 2 * math.pi) for _ in range(3)]
    wave = np.sin(v * (2 * math.pi / wave_len) + phases[0])
    bow = curl * 0.025 * side * across * (0.6 + 0.4 * np.sin(v * (2 * math.pi / bow_len) + phases[1]))
    squeeze = curl * 0.1 * wave_len / (2 * math.pi) * wave
    drift = curl * 0.03 * side * np.sin(v * (2 * math.pi / drift_len) + phases[2])
    map_x = (u - drift).astype(np.float32)
    map_y = (v - bow - squeeze).astype(np.float32)
    turned = 1.0 - curl * (0.07 * across + 0.05 * (0.5 + 0.5 * np.cos(v * (2 * math.pi / wave_len) + phases[0])))
    del u, v, across, wave, bow, squeeze, drift
    warped = cv2.remap(sheet, map_x, map_y, interpolation=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT,
                       borderValue=(0, 0, 0))
    mask = cv2.remap(np.ones((h, w), dtype=np.float32), map_x, map_y, interpolation=cv2.INTER_LINEAR,
                     borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    del map_x, map_y, sheet
    table = _table(rng, scan, ch, cw)
    # the paper's own shadow on the table, down and to one side
    side = min(w, h)
    shift = np.float32([[1, 0, rng.uniform(-1, 1) * 0.01 * side], [0, 1, rng.uniform(0.004, 0.012) * side]])
    under = cv2.warpAffine(mask, shift, (cw, ch))
    under = cv2.GaussianBlur(under, (0, 0), sigmaX=max(1.0, 0.012 * side))
    table *= (1.0 - 0.45 * under)[..., None]
    image = table * (1.0 - mask[..., None]) + warped * (turned * mask)[..., None]
    del table, warped, under, turned, mask
    light = _soft_shadow(rng, scan, ch, cw)
    vignette = 1.0 - rng.uniform(0.0, 0.15) * _smooth(rng, ch, cw, 2)
    tint = np.array([1.0, rng.uniform(0.96, 1.0), rng.uniform(0.88, 0.97)], dtype=np.float32)
    image *= (light * vignette)[..., None]
    image *= tint
    image = cv2.GaussianBlur(image, (0, 0), sigmaX=scan.blur)
    grain = np.random.default_rng(seed).normal(0.0, scan.grain, (ch, cw)).astype(np.float32)
    image += grain[..., None]
    out = Image.fromarray(np.clip(image, 0, 255).astype(np.uint8))
    buf = io.BytesIO()
    out.save(buf, format="JPEG", quality=scan.jpeg_quality)
    return buf.getvalue()
