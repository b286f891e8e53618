"""The engine-neutral Block tree every OCR adapter produces (pure: no ORM, no Celery).

Shapes follow AWS Textract: PAGE > LINE > WORD and PAGE > TABLE > CELL > WORD, boxes as
fractions (0..1) of the page. Ids are strings local to one document run; the database assigns
its own keys when the blocks are stored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Protocol

from extraction.ocr.geometry import PageSize


class BlockType(StrEnum):
    PAGE = "PAGE"
    LINE = "LINE"
    WORD = "WORD"
    TABLE = "TABLE"
    CELL = "CELL"


@dataclass(frozen=True)
class BBox:
    """left, top, width, height as fractions of the page (0..1)."""

    left: float
    top: float
    width: float
    height: float

    @property
    def right(self) -> float:
        return self.left + self.width

    @property
    def bottom(self) -> float:
        return self.top + self.height

    @classmethod
    def enclosing(cls, boxes: list[BBox]) -> BBox:
        left = min(b.left for b in boxes)
        top = min(b.top for b in boxes)
        right = max(b.right for b in boxes)
        bottom = max(b.bottom for b in boxes)
        return cls(left, top, right - left, bottom - top)


@dataclass
class OcrBlock:
    id: str
    type: BlockType
    page: int  # 1-based page number
    text: str
    bbox: BBox
    confidence: float | None = None  # 0..1
    parent: str | None = None  # id of the enclosing block (LINE for a WORD, TABLE for a CELL, ...)
    order: int = 0  # reading order within the page
    polygon: list[tuple[float, float]] | None = None
    row: int | None = None  # CELL only, 1-based
    column: int | None = None
    row_span: int = 1
    column_span: int = 1
    # The page's size in one unit on both axes (geometry.PageSize): what every distance is measured in.
    page_size: PageSize | None = None


@dataclass
class OcrPage:
    number: int  # 1-based
    blocks: list[OcrBlock] = field(default_factory=list)
    engine: str = ""


@dataclass(frozen=True)
class PageImage:
    """A rendered page on local disk."""

    number: int  # 1-based
    path: Path
    width: int  # pixels
    height: int


@dataclass(frozen=True)
class SourceDocument:
    """What an engine reads: the original file plus its rendered pages."""

    path: Path
    kind: str  # "pdf" or "image"
    pages: list[PageImage]

    def page_sizes(self) -> dict[int, PageSize]:
        """Page number -> the size of its rendered image, in pixels."""
        return {p.number: PageSize(p.width, p.height) for p in self.pages}


class OcrError(Exception):
    """An engine could not read a document; the message is shown on the document."""


class OcrEngine(Protocol):
    name: str

    def read(self, document: SourceDocument) -> list[OcrPage]:
        """Return one OcrPage per page of the document, in page order."""
        ...
