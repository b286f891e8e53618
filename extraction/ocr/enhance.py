"""What the recogniser sees of faded print: each text line's contrast stretched before it is read (pure).

Thermal receipts fade: the ink of a scanned till receipt is often a mid grey on a grey paper, and its smallest
marks (a decimal point, the stroke that tells an M from an H) lighter still. RapidOCR's recogniser reads each
line the detector found, scaled to its input height; here every such line is first stretched so that its ink
is black and its paper white, with its greys darkened (a gamma above 1), so faint strokes weigh as strokes.
The line is measured on its own (its own ink and paper), so an uneven page, light at one end and dark at
the other, is evened out line by line; a line that already prints black on white is left nearly as it is.

What was measured (bench/receipts_ocr.py, figures in docs/BENCHMARKS.md): stretching lines read more of the
real receipts than reading them as they are; stretching the whole page before detection (globally, by
CLAHE, or dividing by its blurred background) read fewer, as did enlarging the page for small print.
"""

from __future__ import annotations

from typing import Any

import numpy as np

# The line's ink is the grey at this percentile of its pixels (its darkest, past a few specks of noise)...
INK_PERCENTILE = 2.0
# ...and its paper the grey at this one: a line crop is mostly paper, but print takes up to a tenth of it.
PAPER_PERCENTILE = 90.0
# Greys between them are darkened by this power (1: a linear stretch): faint strokes are the ones lost.
GAMMA = 1.5
# A line whose ink and paper lie closer than this (grey levels) holds no print to stretch: left as it is.
MIN_SPREAD = 8.0


def grey_of(image: np.ndarray) -> np.ndarray:
    """The grey levels (float32, 0-255) of an image of bytes: one channel, or three in OpenCV's BGR order."""
    if image.ndim == 2:
        return image.astype(np.float32)
    if image.ndim == 3 and image.shape[2] == 1:
        return image[:, :, 0].astype(np.float32)
    if image.ndim == 3 and image.shape[2] == 3:
        import cv2  # RapidOCR's own dependency: only where RapidOCR reads

        return cv2.cvtColor(np.ascontiguousarray(image, dtype=np.uint8), cv2.COLOR_BGR2GRAY).astype(np.float32)
    raise ValueError(f"not an image of one or three channels: shape {image.shape}")


def stretch_line(image: np.ndarray, *, ink: float = INK_PERCENTILE, paper: float = PAPER_PERCENTILE,
                 gamma: float = GAMMA) -> np.ndarray:
    """A line cut from a page (H x W, or H x W x 3 in BGR, bytes) as grey bytes of the same shape, stretched from
    its ink (black) to its paper (white), the greys between darkened by `gamma`. Light print on a dark ground
    comes out the same way round (its "ink", the darkest grey, is then the ground). An empty or uniform line is
    returned as it is."""
    if image.size == 0:
        return image
    grey = grey_of(image)
    low, high = np.percentile(grey, [ink, paper])
    if high - low < MIN_SPREAD:
        return image
    scaled = np.clip((grey - low) / (high - low), 0.0, 1.0)
    if gamma != 1.0:
        scaled **= gamma
    out = (scaled * 255.0 + 0.5).astype(np.uint8)
    if image.ndim == 3:
        out = np.repeat(out[:, :, np.newaxis], image.shape[2], axis=2)
    return out


def stretch_lines_before_reading(recogniser: Any) -> None:
    """Make RapidOCR's recogniser (a loaded `TextRecognizer`) stretch each line (`stretch_line`) before it scales
    the line to its input height. Only the pixels the network reads change: the lines' sizes, and so the word
    boxes RapidOCR computes from them, stay as they were."""
    resize = recogniser.resize_norm_img

    def resize_norm_img(img: np.ndarray, max_wh_ratio: float) -> np.ndarray:
        return resize(stretch_line(img), max_wh_ratio)

    recogniser.resize_norm_img = resize_norm_img
