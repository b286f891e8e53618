"""RapidOCR (PaddleOCR models on onnxruntime): the default offline engine for scanned pages.

The models ship inside the rapidocr wheel, so nothing is downloaded at run time. RapidOCR gives
text lines with quadrilaterals and, with return_word_box, per-word (or, for some scripts, per-character)
boxes; both are regrouped here into the words of the line text, and lines are rebuilt from those
words like every engine's. No tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from extraction.ocr.blocks import BBox, OcrBlock, OcrError, OcrPage, PageImage, SourceDocument
from extraction.ocr.lines import EngineLine, EngineWord, build_page_lines

Box = tuple[float, float, float, float]  # x0, y0, x1, y1 in pixels

_LOADED: dict[str, Any] = {}  # RapidOCR objects by settings: a worker process loads the models once


class RapidOcrEngine:
    name = "rapidocr"

    def __init__(self, *, threads: int | None = 1, text_score: float = 0.5,
                 params: dict[str, Any] | None = None) -> None:
        """`threads`: onnxruntime threads per page (None: all cores); `params`: raw RapidOCR settings.

        One thread is the default: on the 2-core bench machine it read more pages per second than two
        (less CPU per page, no spinning threads), and Celery already runs one worker per core.
        """
        settings: dict[str, Any] = {
            "Global.use_cls": False,  # pages are rendered upright; the angle classifier only costs time
            "Global.return_word_box": True,
            "Global.text_score": text_score,
            "Global.log_level": "warning",
        }
        if threads:
            settings["EngineConfig.onnxruntime.intra_op_num_threads"] = threads
        settings.update(params or {})
        self._settings = settings
        self._ocr: Any = None

    def _engine(self) -> Any:
        if self._ocr is None:  # model loading is slow: once per engine, shared by equal settings
            key = repr(sorted(self._settings.items()))
            if key not in _LOADED:
                from rapidocr import RapidOCR

                _LOADED[key] = RapidOCR(params=dict(self._settings))
            self._ocr = _LOADED[key]
        return self._ocr

    def read(self, document: SourceDocument) -> list[OcrPage]:
        if not document.pages:
            raise OcrError("the document has no rendered pages to read")
        return [self.read_image(page) for page in document.pages]

    def read_image(self, page: PageImage) -> OcrPage:
        try:
            result = self._engine()(str(page.path))
        except Exception as exc:  # an engine fault must reach the document as a readable error
            raise OcrError(f"rapidocr failed on page {page.number}: {exc}") from exc
        image = getattr(result, "img", None)
        if image is not None:
            height, width = image.shape[:2]
        else:  # nothing recognised: RapidOCR returns an empty result without the image
            width, height = page.width, page.height
        lines = [
            _RawLine(text=text, score=float(score), quad=[(float(x), float(y)) for x, y in quad], items=items)
            for text, score, quad, items in _zip_lines(result)
        ]
        return OcrPage(number=page.number, blocks=build_blocks(lines, page.number, width, height),
                       engine=self.name)


@dataclass
class _RawLine:
    text: str
    score: float
    quad: list[tuple[float, float]]
    items: list[tuple[str, float, Box]]  # recogniser pieces: words, characters or nothing

    @property
    def box(self) -> Box:
        xs, ys = zip(*self.quad, strict=True)
        return min(xs), min(ys), max(xs), max(ys)


def _zip_lines(result: Any) -> list[tuple[str, float, Any, list[tuple[str, float, Box]]]]:
    # A result without recognised text may be a bare detection or an empty output: read defensively.
    txts = getattr(result, "txts", None) or ()
    boxes = getattr(result, "boxes", None)
    boxes = boxes if boxes is not None else ()
    scores = getattr(result, "scores", None) or ()
    words = getattr(result, "word_results", None) or ()
    # RapidOCR drops lines without word boxes from word_results, which shifts the rest: trust the
    # pieces only when they line up with the lines; otherwise every line gets proportional word boxes.
    aligned = len(words) == len(txts)
    lines = []
    for index, (text, quad, score) in enumerate(zip(txts, boxes, scores, strict=False)):
        items = []
        if aligned:
            for piece in words[index]:
                if len(piece) == 3 and piece[2] is not None:
                    xs = [float(p[0]) for p in piece[2]]
                    ys = [float(p[1]) for p in piece[2]]
                    items.append((str(piece[0]), float(piece[1]), (min(xs), min(ys), max(xs), max(ys))))
        lines.append((str(text), float(score), quad, items))
    return lines


def split_words(text: str, items: list[tuple[str, float, Box]], line_box: Box,
                line_score: float) -> list[tuple[str, float, Box]]:
    """Words of `text` (split on whitespace) with boxes taken from the recogniser's pieces.

    Pieces may be whole words, parts of words or single characters; a word's box encloses its
    characters, and a piece shared by several words is divided in proportion to its characters.
    Without usable pieces the line box itself is divided that way.
    """
    compact = "".join(text.split())
    if not items or "".join("".join(t.split()) for t, _, _ in items) != compact:
        items = [(compact, line_score, line_box)]
    lengths = [len("".join(piece.split())) for piece, _, _ in items]
    owners = [(index, position) for index, length in enumerate(lengths) for position in range(length)]

    words = []
    cursor = 0
    for token in text.split():
        spans: dict[int, list[int]] = {}  # piece index -> positions of this token's characters in it
        for index, position in owners[cursor:cursor + len(token)]:
            spans.setdefault(index, []).append(position)
        cursor += len(token)
        boxes, scores = [], []
        for index, positions in spans.items():
            _, score, (x0, y0, x1, y1) = items[index]
            step = (x1 - x0) / lengths[index]
            boxes.append((x0 + step * min(positions), y0, x0 + step * (max(positions) + 1), y1))
            scores.append(score)
        box = (min(b[0] for b in boxes), min(b[1] for b in boxes),
               max(b[2] for b in boxes), max(b[3] for b in boxes))
        words.append((token, min(scores), box))
    return words


def build_blocks(lines: list[_RawLine], number: int, width: int, height: int) -> list[OcrBlock]:
    """PAGE > LINE > WORD blocks with boxes as fractions of the image, in reading order.

    The detector's lines are not kept as they are: on a skewed scan it may join text of two rows, and it
    joins cells far apart on one row; lines are rebuilt from the words (extraction/ocr/lines.py).
    """

    def normalize(box: Box) -> BBox:
        left, top = _clamp(box[0] / width), _clamp(box[1] / height)
        right, bottom = _clamp(box[2] / width), _clamp(box[3] / height)
        return BBox(left, top, max(right - left, 0.0), max(bottom - top, 0.0))

    words: list[EngineWord] = []
    engine_lines: list[EngineLine] = []
    for index, line in enumerate(lines):
        polygon = [(_clamp(x / width), _clamp(y / height)) for x, y in line.quad]
        engine_lines.append(EngineLine(confidence=line.score, polygon=polygon))
        words += [EngineWord(text=text, bbox=normalize(box), confidence=score, line=index)
                  for text, score, box in split_words(line.text, line.items, line.box, line.score)]
    return build_page_lines(number, words, engine_lines=engine_lines).blocks


def _clamp(value: float) -> float:
    return min(max(value, 0.0), 1.0)
