"""Leaders erased from a page image before a text detector reads it.

A leader is a run of dots or dashes printed between a name and its figures (`PSUV ........ 056`). A detector
finds text by its ink: rows of leaders a line apart join into one region several lines tall, which it reads as
one line or drops, and a recogniser that does read a leader loses the characters next to it in the dots. A
leader carries no text, so it is painted over in the paper's colour: every run of at least LEADER_MARKS small
marks (no taller than SMALL_HEIGHT text heights, no wider than SMALL_WIDTH), each within RUN_GAP text heights
of the next, with no ink within CLEAR text heights above or below it (the dot of an `i`, a colon, an accent, a
halftone's field of dots have ink there; a leader has paper), and with a letter or digit (a mark from
LETTER_HEIGHT to 1 / LETTER_HEIGHT text heights tall) on its line within BESIDE text heights of one of its
ends (a leader leads from a name to its figures; a rule of dashes with paper at both ends is a separator, which
stays). The text height is the page's own: the median height of its marks as tall as TALL_SHARE of its taller
ones. All in the image's pixels, the same on both axes. A full stop, a decimal point, a hyphen or an ellipsis
of three stays.
"""

from __future__ import annotations

import numpy as np

LEADER_MARKS = 5
SMALL_HEIGHT = 0.35
SMALL_WIDTH = 0.8
RUN_GAP = 2.0
CLEAR = 0.45
BESIDE = 1.0
LETTER_HEIGHT = 0.5
TALL_SHARE = 0.5  # of the 90th percentile of marks' heights: the marks that are letters, when judging the text height
MIN_MARK_PX = 4  # marks smaller than this in both directions are noise, not letters, when judging the text height
INK_BLOCK = 31  # px: the neighbourhood the ink threshold adapts over
INK_OFFSET = 15  # grey levels below the neighbourhood's mean that make a pixel ink


def leader_mask(grey: np.ndarray) -> tuple[np.ndarray, float]:
    """The pixels of `grey` (a page, one channel of bytes, dark print on light paper) that belong to leaders, and
    the page's text height (px; 0 where it has no marks)."""
    import cv2

    ink = cv2.adaptiveThreshold(grey, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY_INV, INK_BLOCK, INK_OFFSET)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    empty = np.zeros(grey.shape, dtype=bool)
    if count <= 1:
        return empty, 0.0
    heights, widths = stats[1:, cv2.CC_STAT_HEIGHT], stats[1:, cv2.CC_STAT_WIDTH]
    marks = heights[(heights >= MIN_MARK_PX) | (widths >= MIN_MARK_PX)]
    if not len(marks):
        return empty, 0.0
    # letters and digits, not the dots: a leader may have more marks than the text beside it
    text = float(np.median(marks[marks >= TALL_SHARE * np.percentile(marks, 90)]))
    small = np.zeros(count, dtype=bool)
    small[1:] = (heights <= SMALL_HEIGHT * text) & (widths <= SMALL_WIDTH * text)
    if small.sum() < LEADER_MARKS:
        return empty, text
    # a small mark with any ink just above or below it is part of a letter or a sign, or of a halftone's field of
    # dots; a leader's marks have paper there
    reach = max(1, round(CLEAR * text))
    total = cv2.integral((ink > 0).astype(np.uint8))
    x0, y0 = stats[:, cv2.CC_STAT_LEFT], stats[:, cv2.CC_STAT_TOP]
    x1, y1 = x0 + stats[:, cv2.CC_STAT_WIDTH], y0 + stats[:, cv2.CC_STAT_HEIGHT]
    height = grey.shape[0]

    def ink_between(top: np.ndarray, bottom: np.ndarray) -> np.ndarray:
        top, bottom = top.clip(0, height), bottom.clip(0, height)
        return total[bottom, x1] - total[top, x1] - total[bottom, x0] + total[top, x0]

    crowded = (ink_between(y0 - reach, y0) > 0) | (ink_between(y1, y1 + reach) > 0)
    free = small & ~crowded
    free[0] = False
    free_px = free[labels]
    gap = max(1, round(RUN_GAP * text))
    runs = cv2.dilate(free_px.astype(np.uint8), np.ones((1, gap), np.uint8))
    run_count, run_labels, run_stats, _ = cv2.connectedComponentsWithStats(runs, connectivity=8)
    # marks per run: each free mark counted once, at its first pixel
    ys, xs = np.nonzero(free_px)
    _, first = np.unique(labels[ys, xs], return_index=True)
    per_run = np.bincount(run_labels[ys[first], xs[first]], minlength=run_count)
    # a leader leads from a word to a word: a letter or a digit beside one of its ends, on its line (a rule of
    # dashes across a receipt, with paper at both ends, is a separator and stays)
    letters = np.zeros(count, dtype=bool)
    letters[1:] = (heights >= LETTER_HEIGHT * text) & (heights <= 1 / LETTER_HEIGHT * text)  # not a frame's edge
    other = cv2.integral(letters[labels].astype(np.uint8))
    width = grey.shape[1]
    rx0, ry0 = run_stats[:, cv2.CC_STAT_LEFT], run_stats[:, cv2.CC_STAT_TOP]
    rx1, ry1 = rx0 + run_stats[:, cv2.CC_STAT_WIDTH], ry0 + run_stats[:, cv2.CC_STAT_HEIGHT]
    top, bottom = (ry0 - round(text / 2)).clip(0, height), (ry1 + round(text / 4)).clip(0, height)
    beside_px = round(BESIDE * text)

    def other_between(left: np.ndarray, right: np.ndarray) -> np.ndarray:
        left, right = left.clip(0, width), right.clip(0, width)
        return other[bottom, right] - other[top, right] - other[bottom, left] + other[top, left]

    led = (other_between(rx0 - beside_px, rx0) > 0) | (other_between(rx1, rx1 + beside_px) > 0)
    leader_runs = (per_run >= LEADER_MARKS) & led
    leader_runs[0] = False
    # every small mark in a leader's run, those with a speck of grain above or below it too
    return small[labels] & leader_runs[run_labels], text


def erase_leaders(image: np.ndarray) -> tuple[np.ndarray, int]:
    """`image` (H x W or H x W x C bytes) with its leaders painted in the paper's colour around them, and how many
    pixels were painted. The image is returned as it is where it has none."""
    import cv2

    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
    mask, text = leader_mask(grey)
    painted = int(mask.sum())
    if not painted:
        return image, 0
    grown = cv2.dilate(mask.astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool)  # the marks' soft edges too
    # the paper beside each mark: the lightest pixel of a window wider than any mark of a leader
    side = 2 * round(SMALL_WIDTH * text) + 5
    paper = cv2.dilate(image, np.ones((side, side), np.uint8))
    out = image.copy()
    out[grown] = paper[grown]
    return out, painted
