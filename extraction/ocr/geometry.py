"""The unit of page geometry (pure): the one place where a box in fractions of its page becomes a box in a
length that is the same on both axes.

Boxes are stored and drawn in fractions of their page (0..1 on each axis). A fraction of the width and a
fraction of the height are different lengths, though: on portrait A4 they differ by 1.4, on a thermal-paper
strip 8 cm wide and a metre long by more than 10. Every distance, gap, height and tolerance that code compares
(a word space against a word's height, a slope, a column gutter) is therefore measured on boxes made here, in
the page's own unit: the pixels of its image (or, while a PDF's text layer is read, its points, one scale
away). Code that computes with geometry takes `Box`es, never fractions; `extraction/ocr/layout.py` refuses
anything else, and the invariance tests (tests/extraction/ocr/test_geometry_invariance.py) fail on any tolerance
taken in a page fraction.

Every OcrBlock carries the size of its page (`OcrBlock.page_size`), set by the engine that read it or by
the code that loads stored blocks; a block without it cannot be measured, and says so.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol

__all__ = ["Box", "NoPageSize", "PageSize", "block_box", "block_polygon", "box_of", "point_of", "points_of"]


class NoPageSize(ValueError):
    """A block's page size is unknown, so no distance on it can be measured."""


@dataclass(frozen=True, slots=True)
class PageSize:
    """A page's width and height in one unit, the same on both axes (pixels of its image, or points)."""

    width: float
    height: float

    def __post_init__(self) -> None:
        for name in ("width", "height"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
                raise ValueError(f"a page's {name} must be a positive number, not {value!r}")


class Fractions(Protocol):
    """A box in fractions of its page (blocks.BBox)."""

    left: float
    top: float
    width: float
    height: float


class Block(Protocol):
    """What is measured of an OCR block (blocks.OcrBlock)."""

    id: str
    page: int
    bbox: Fractions
    polygon: list[tuple[float, float]] | None
    page_size: PageSize | None


class Box(NamedTuple):
    """x0, y0, x1, y1 in the page's unit (the same on both axes), y growing downwards."""

    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def width(self) -> float:
        return self.x1 - self.x0

    @property
    def height(self) -> float:
        return self.y1 - self.y0

    @property
    def cx(self) -> float:
        return (self.x0 + self.x1) / 2

    @property
    def cy(self) -> float:
        return (self.y0 + self.y1) / 2

    @classmethod
    def enclosing(cls, boxes: Iterable[Box]) -> Box:
        boxes = list(boxes)
        return cls(min(b.x0 for b in boxes), min(b.y0 for b in boxes), max(b.x1 for b in boxes),
                   max(b.y1 for b in boxes))


def box_of(bbox: Fractions, size: PageSize) -> Box:
    """A box in fractions of its page, in the page's unit."""
    return Box(bbox.left * size.width, bbox.top * size.height, (bbox.left + bbox.width) * size.width,
               (bbox.top + bbox.height) * size.height)


def block_box(block: Block) -> Box:
    """A block's box in its page's unit."""
    if block.page_size is None:
        raise NoPageSize(f"block {block.id} on page {block.page} carries no page size, so it cannot be measured")
    return box_of(block.bbox, block.page_size)


def block_polygon(block: Block) -> list[tuple[float, float]] | None:
    """A block's polygon (an engine's turned line box) in its page's unit; None when it has none."""
    if not block.polygon:
        return None
    if block.page_size is None:
        raise NoPageSize(f"block {block.id} on page {block.page} carries no page size, so it cannot be measured")
    return points_of(block.polygon, block.page_size)


def point_of(x: float, y: float, size: PageSize) -> tuple[float, float]:
    """A point in fractions of the page, in the page's unit."""
    return x * size.width, y * size.height


def points_of(polygon: Sequence[tuple[float, float]] | None, size: PageSize) -> list[tuple[float, float]] | None:
    """A polygon in fractions of the page (an engine's turned line box), in the page's unit."""
    return [point_of(x, y, size) for x, y in polygon] if polygon else None
