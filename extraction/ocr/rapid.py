"""RapidOCR (PaddleOCR models, run by OpenVINO or onnxruntime): the default offline engine for scanned pages.

The models ship inside the rapidocr wheel, so nothing is downloaded at run time. RapidOCR gives
text lines with quadrilaterals and, with return_word_box, per-word (or, for some scripts, per-character)
boxes; both are regrouped here into the words of the line text, and lines are rebuilt from those
words like every engine's. No tables.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from extraction.ocr.blocks import BBox, OcrBlock, OcrError, OcrPage, PageImage, SourceDocument
from extraction.ocr.geometry import PageSize
from extraction.ocr.leaders import erase_leaders
from extraction.ocr.lines import EngineLine, EngineWord, build_page_lines
from extraction.ocr.rapid_openvino import use_openvino
from extraction.ocr.rapid_tuning import (
    NO_LONG_SIDE_LIMIT,
    PAGE_SHORT_SIDE,
    lean_sessions,
    limit_detection_size,
    limit_page_size,
    page_size_limited,
    split_recognition,
)

Box = tuple[float, float, float, float]  # x0, y0, x1, y1 in pixels
logger = logging.getLogger(__name__)

_LOADED: dict[str, Any] = {}  # RapidOCR objects by settings: a worker process loads the models once

# The defaults were chosen on bench/ocr_engines.py (figures in docs/BENCHMARKS.md): RapidOCR's own networks
# on OpenVINO (extraction/ocr/rapid_openvino.py: the page detected at full size in tiles, the recogniser
# without East Asian script) on every core read a scan several times faster than RapidOCR's own reading on
# onnxruntime without losing a digit it reads. Pages are detected at full size: a detector limit of 1152 px
# lost clean scans on the unseen-layout bench (bench/unseen_layouts.py).
DEFAULT_THREADS = None  # every core
DEFAULT_DET_LIMIT = None
DEFAULT_REC_BATCH = 6
DEFAULT_REC_WIDTH = 96
DEFAULT_REC_WORKERS = 1
DEFAULT_RUNTIME = "openvino"
DEFAULT_REC_PIXELS = 4096
DEFAULT_EAST_ASIAN = False
# RapidOCR shrinks any image whose long side exceeds 2000 px, so a thermal strip (8 cm wide, a metre long) was
# read at a third of its size. A page is shrunk only while its short side exceeds 1414 px too
# (rapid_tuning.limit_page_size): an A4 page as before, a strip at full size. Figures in docs/BENCHMARKS.md
# ("Faded thermal strips and the page size").
DEFAULT_PAGE_LIMIT = PAGE_SHORT_SIDE
RUNTIMES = ("onnxruntime", "openvino")


def _check_at_least(minimum: int, **values: int | None) -> None:
    """A wrong setting fails when the engine is built, with its name, not as an odd reading later."""
    for name, value in values.items():
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < minimum):
            raise OcrError(f"{name} must be a whole number of at least {minimum}, got {value!r}")


class RapidOcrEngine:
    name = "rapidocr"

    def __init__(self, *, threads: int | None = DEFAULT_THREADS, det_limit: int | None = DEFAULT_DET_LIMIT,
                 rec_batch: int = DEFAULT_REC_BATCH, rec_width: int = DEFAULT_REC_WIDTH,
                 rec_workers: int = DEFAULT_REC_WORKERS,
                 page_workers: int = 1, lean: bool = True, text_score: float = 0.5,
                 runtime: str = DEFAULT_RUNTIME, rec_pixels: int = DEFAULT_REC_PIXELS,
                 east_asian: bool = DEFAULT_EAST_ASIAN, page_limit: int | None = DEFAULT_PAGE_LIMIT,
                 leaders: bool = False, params: dict[str, Any] | None = None) -> None:
        """`threads`: threads that run the networks for a page (None: all cores); `det_limit`: the longest side, in
        pixels, the text detector sees (larger pages are scaled down for detection only: recognition
        reads the lines at full size; None: RapidOCR's own rule, which never scales a page down);
        `rec_batch`: text lines per recogniser run; `rec_width`: the narrowest width (px, at the recogniser's
        48 px height) a batch of lines is padded to (RapidOCR pads to 320, so a short number cost as much as
        a line of 320 px); `rec_workers`: threads that recognise one page's lines at once (each running
        `threads` threads); `page_workers`: pages of one document read at once; `lean`:
        onnxruntime sessions without memory patterns or spinning threads (extraction/ocr/rapid_tuning.py);
        `runtime`: what runs the networks, "openvino" (extraction/ocr/rapid_openvino.py; onnxruntime when
        OpenVINO cannot load) or "onnxruntime"; with OpenVINO, `rec_pixels`: the widest batch of lines (px,
        summed) run at once, and `east_asian`: whether the recogniser may read Chinese, Japanese and Korean
        characters (off, it reads Latin, Greek and Cyrillic script, digits and symbols, faster);
        `page_limit`: a page whose short side is longer than this (px) and whose long side is longer than 2000 px
        is shrunk until one of them is not, for detection and recognition alike (rapid_tuning.limit_page_size;
        None: RapidOCR's own rule, which shrinks any page whose long side exceeds 2000 px, and so a long strip to a
        fraction of its width); `leaders`: whether the networks see leaders (runs of dots or dashes) as printed
        (off, they are painted over first: extraction/ocr/leaders.py); `params`: raw RapidOCR settings, applied
        last.

        The defaults were measured (see DEFAULT_THREADS' comment).
        """
        _check_at_least(1, threads=threads, rec_batch=rec_batch, rec_workers=rec_workers, page_workers=page_workers)
        _check_at_least(16, rec_width=rec_width)
        _check_at_least(32, det_limit=det_limit, page_limit=page_limit)  # the detector halves the image five times
        _check_at_least(48, rec_pixels=rec_pixels)
        if runtime not in RUNTIMES:
            raise OcrError(f"runtime must be one of {', '.join(RUNTIMES)}, got {runtime!r}")
        settings: dict[str, Any] = {
            "Global.use_cls": False,  # pages are rendered upright; the angle classifier only costs time
            "Global.return_word_box": True,
            "Global.text_score": text_score,
            "Global.log_level": "warning",
            "Rec.rec_batch_num": rec_batch,
            "Rec.rec_img_shape": [3, 48, rec_width],
        }
        if threads:
            settings["EngineConfig.onnxruntime.intra_op_num_threads"] = threads
        if page_limit:
            settings["Global.max_side_len"] = NO_LONG_SIDE_LIMIT  # limit_page_size shrinks pages instead
        settings.update(params or {})
        self._settings = settings
        self.det_limit = det_limit
        self.lean_sessions = lean
        self.runtime = runtime
        self.rec_pixels = rec_pixels
        self.east_asian = east_asian
        self.page_limit = page_limit
        self.leaders = leaders
        self.rec_workers = rec_workers
        self.page_workers = page_workers
        self.timings: dict[int, dict[str, float]] = {}  # page number -> seconds per step, for the bench
        self._ocr: Any = None

    def _engine(self) -> Any:
        if self._ocr is None:  # model loading is slow: once per engine, shared by equal settings
            key = repr((sorted(self._settings.items()), self.det_limit, self.rec_workers, self.lean_sessions,
                        self.runtime, self.rec_pixels, self.east_asian, self.page_limit))
            if key not in _LOADED:
                from rapidocr import RapidOCR

                ocr = RapidOCR(params=dict(self._settings))
                threads = self._settings.get("EngineConfig.onnxruntime.intra_op_num_threads")
                if self.det_limit:
                    limit_detection_size(ocr, limit=self.det_limit)
                on_openvino = self.runtime == "openvino" and _moved_to_openvino(
                    ocr, threads=threads, rec_pixels=self.rec_pixels, east_asian=self.east_asian)
                if not on_openvino and self.lean_sessions:
                    lean_sessions(ocr, threads=threads)
                if self.page_limit:
                    limit_page_size(ocr, short_side=self.page_limit)
                if self.rec_workers > 1:
                    split_recognition(ocr, workers=self.rec_workers)
                _LOADED[key] = ocr
            self._ocr = _LOADED[key]
        return self._ocr

    def read(self, document: SourceDocument) -> list[OcrPage]:
        if not document.pages:
            raise OcrError("the document has no rendered pages to read")
        return read_pages(self, document.pages)

    def read_image(self, page: PageImage) -> OcrPage:
        engine = self._engine()  # loaded before the clock starts: loading is timed apart
        started = time.perf_counter()
        try:
            result = engine(self._image(page))
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
        ocr_done = time.perf_counter()
        blocks = build_blocks(lines, page.number, width, height)
        detect, _, recognise = (float(x or 0.0) for x in (getattr(result, "elapse_list", None) or (0, 0, 0)))
        self.timings[page.number] = {"detect": detect, "recognise": recognise,
                                     "other": max(ocr_done - started - detect - recognise, 0.0),
                                     "blocks": time.perf_counter() - ocr_done}
        return OcrPage(number=page.number, blocks=blocks, engine=self.name)


    def _image(self, page: PageImage) -> Any:
        """What the networks read: the page's file, or its image without leaders."""
        if self.leaders:
            return str(page.path)
        import cv2

        image = cv2.imread(str(page.path), cv2.IMREAD_COLOR)
        if image is None:
            raise OcrError(f"page {page.number}'s image cannot be decoded")
        size = page_size_limited(*image.shape[:2], short_side=self.page_limit) if self.page_limit else None
        if size is not None:  # shrunk first as limit_page_size would, so the painting costs no more memory than that
            image = cv2.resize(image, size)
        return erase_leaders(image)[0]


def _moved_to_openvino(ocr: Any, **options: Any) -> bool:
    """Run `ocr`'s networks on OpenVINO (after the detector's resizing hook, which it keeps); False, with a
    warning, where OpenVINO cannot load them (not installed, a processor it does not support): onnxruntime
    reads the same networks, only slower."""
    try:
        use_openvino(ocr, **options)
    except Exception as exc:  # noqa: BLE001 - any failure here leaves onnxruntime's sessions in place
        logger.warning("OpenVINO could not load RapidOCR's networks (%s): reading with onnxruntime", exc)
        return False
    return True


def read_pages(engine: Any, pages: list[PageImage]) -> list[OcrPage]:
    """`engine.read_image` on each page, `engine.page_workers` pages at a time, results in page order.

    onnxruntime and OpenCV release the GIL, so threads read pages truly in parallel; the RapidOCR object
    is shared (its sessions are thread-safe, and each call sets the same parameters).
    """
    workers = min(getattr(engine, "page_workers", 1), len(pages))
    if workers <= 1:
        return [engine.read_image(page) for page in pages]
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ocr-page") as pool:
        return list(pool.map(engine.read_image, pages))


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
    return build_page_lines(number, words, size=PageSize(width, height), engine_lines=engine_lines).blocks


def _clamp(value: float) -> float:
    return min(max(value, 0.0), 1.0)
