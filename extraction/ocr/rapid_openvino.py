"""RapidOCR's own networks run by OpenVINO instead of onnxruntime (hooks into a loaded RapidOCR object).

The same ONNX files from the rapidocr wheel, so the reading is the same network; OpenVINO's CPU plugin runs
it in the precision the processor does best (bfloat16 where it has AMX or AVX-512 BF16, as this machine
does; float32 elsewhere). Figures in docs/BENCHMARKS.md. What keeps its time and memory down:
- The page is detected in tiles of one fixed size (DetectorSession): one compiled network, and the working
  memory of one tile whatever the page's size. OpenVINO keeps buffers for every input shape it has met,
  so a network for any shape keeps growing a worker's memory (docs/BENCHMARKS.md, Memory).
- Lines are padded to a few widths (steps of a quarter), so a worker soon holds every shape it meets; the
  outputs are cut back to the unpadded width, so the reading does not see the padding.
- A batch of lines wider in total than `rec_pixels` runs in parts, so a line as wide as the page does not
  multiply the recogniser's buffers by the batch size.
- Each network gives its buffers back before the other runs, so a worker holds one network's working
  memory at a time.
- The recogniser returns only the best character and its probability per position, computed inside the
  network, instead of a probability for each of its 18,710 characters that RapidOCR then scanned in
  Python; and without East Asian script (`east_asian=False`) its last layer has 2,558 characters, not
  18,710, which spares much of the recogniser's time on a page.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

DET_TILE_H = 768  # the fixed size, in px, pages are detected in
DET_TILE_W = 1280
DET_MARGIN = 128  # px of context around the part of a tile's map that is kept
INK_CONTRAST = 48  # grey levels from the page's typical grey that make a pixel print, not noise, at most
MIN_INK_CONTRAST = 6  # and at least (on a faint page)
INK_PIXELS = 16  # pixels of print that make a tile worth reading (a full stop at 150 dpi has about 9)


def rec_width_bucket(width: int, *, minimum: int) -> int:
    """The width (a multiple of 32, at least `minimum`) a batch of lines `width` px wide is padded to: steps of a
    quarter, so a page's few dozen batch widths fall on about a dozen shapes and no batch pads by more than 25%."""
    bucket = max(math.ceil(minimum / 32) * 32, 32)
    while bucket < width:
        bucket = math.ceil(bucket * 1.25 / 32) * 32
    return bucket


def batch_parts(count: int, width: int, *, budget: int) -> list[tuple[int, int]]:
    """[start, stop) ranges of a batch of `count` lines `width` px wide, each part at most `budget` px
    wide in total (at least one line a part)."""
    per = max(1, budget // max(width, 1))
    return [(start, min(start + per, count)) for start in range(0, count, per)]


class BestCharacters:
    """What the recogniser returns: per line and position, the best character's index and probability."""

    def __init__(self, index: np.ndarray, prob: np.ndarray) -> None:
        self.index, self.prob = index, prob


class Network:
    """One compiled network; an inference request per thread (a request runs one inference at a time)."""

    def __init__(self, compiled: Any) -> None:
        self.compiled = compiled
        self._local = threading.local()
        self._lock = threading.Lock()
        self._running = 0
        self._holding = False  # buffers kept from a run since the last release

    @classmethod
    def compile(cls, model: Any, *, threads: int | None) -> Network:
        import openvino as ov

        config: dict[str, Any] = {"PERFORMANCE_HINT": "LATENCY"}
        if threads:
            config["INFERENCE_NUM_THREADS"] = threads
        return cls(ov.Core().compile_model(model, "CPU", config))

    def run(self, inputs: np.ndarray) -> list[np.ndarray]:
        request = getattr(self._local, "request", None)
        if request is None:
            request = self._local.request = self.compiled.create_infer_request()
        with self._lock:
            self._running += 1
            self._holding = True
        try:
            request.infer({0: inputs})
            return [np.array(request.get_output_tensor(k).data) for k in range(len(self.compiled.outputs))]
        finally:
            with self._lock:
                self._running -= 1

    def release(self) -> None:
        """Free the working buffers (kept otherwise for the next run), unless another thread is running."""
        with self._lock:
            if self._running == 0 and self._holding:
                self.compiled.release_memory()
                self._holding = False
                _trim_heap()


def tiles(size: int, *, tile: int, margin: int) -> list[tuple[int, int, int, int]]:
    """Along one side of `size` px: (start, stop) of each tile's input and (keep_from, keep_to) of the part of
    its output kept. Every input is `tile` px, or the whole side when it is shorter, so no tile but a small
    page's reaches past the page; every kept part lies `margin` px or more inside its tile, except at the
    page's own edges; the kept parts cover the side once, in as few tiles as that allows."""
    out = []
    keep_from = 0
    while keep_from < size:
        start = max(keep_from - margin, 0)
        stop = min(start + tile, size)
        keep_to = size if stop == size else stop - margin
        start = max(min(start, stop - tile), 0)  # the last tile reaches back rather than past the page
        out.append((start, stop, keep_from, keep_to))
        keep_from = keep_to
    return out


def _page_bytes_input(model: Any, *, mean: np.ndarray, std: np.ndarray) -> Any:
    """`model` taking the page as bytes and scaling it itself as RapidOCR does ((x / 255 - mean) / std), on
    every core (RapidOCR made several float copies of the page to do it)."""
    import openvino as ov
    from openvino.preprocess import PrePostProcessor

    steps = PrePostProcessor(model)
    steps.input().tensor().set_element_type(ov.Type.u8)
    steps.input().model().set_layout(ov.Layout("NCHW"))
    steps.input().preprocess().convert_element_type(ov.Type.f32).mean(list(255.0 * mean)).scale(list(255.0 * std))
    return steps.build()


def print_contrast(page: np.ndarray) -> tuple[int, int]:
    """(typical grey, contrast) of a page (channels first, bytes): the median of its darkest channel, and how far
    from it a pixel must lie to be print, not noise: half the spread of its most distant thousandth of pixels
    (its print), at most INK_CONTRAST and at least MIN_INK_CONTRAST (a faint page has faint print)."""
    grey = page.reshape(page.shape[-3], -1).min(axis=0)[::7].astype(np.int16)
    typical = int(np.median(grey))
    spread = float(np.percentile(np.abs(grey - typical), 99.9))
    return typical, int(min(INK_CONTRAST, max(MIN_INK_CONTRAST, spread / 2)))


def has_print(part: np.ndarray, *, typical: int, contrast: int, least: int = INK_PIXELS) -> bool:
    """Whether part of a page (channels first, bytes) holds anything printed: `least` pixels or more whose grey
    differs from the page's `typical` by `contrast` or more, darker or lighter (light print on a dark ground)."""
    grey = part.reshape(part.shape[-3], -1).min(axis=0)
    return int(np.count_nonzero(grey <= typical - contrast)) + int(np.count_nonzero(grey >= typical + contrast)) >= least


class DetectorSession:
    """Stands in for RapidOCR's detector session: (1, 3, H, W) page of bytes in (PageBytes), (1, 1, H, W) map out.

    The page is read in tiles of one fixed size, each with `margin` px of the page around the part of its map
    that is kept, so that text across a tile's edge is seen whole. One size for every page means one network
    compiled for it (a network that takes any shape keeps memory for each shape it has met), and a page of any
    size needs no more working memory than one tile. No tile reaches past the page unless the page is smaller
    than a tile; that page is mirrored into the rest (white there would draw an edge on a dark photograph).

    The detector is not only convolutions: it weighs its channels by averages over the whole image it sees
    (channel attention). On a tile of blank paper those averages make it find text everywhere in the tile (a
    real invoice lost every line so), while a tile with any print in it reads as the whole page does (the
    test: tests/extraction/ocr/test_openvino.py; figures: docs/BENCHMARKS.md). So a tile with nothing printed is not read.
    """

    def __init__(self, path: str, *, threads: int | None, mean: np.ndarray, std: np.ndarray,
                 height: int = DET_TILE_H, width: int = DET_TILE_W, margin: int = DET_MARGIN) -> None:
        import openvino as ov

        self.height, self.width, self.margin = height, width, margin
        model = ov.Core().read_model(path)
        model.reshape([1, 3, height, width])
        self.network = Network.compile(_page_bytes_input(model, mean=mean, std=std), threads=threads)
        self.release_other: Callable[[], None] = lambda: None

    def release(self) -> None:
        self.network.release()

    def __call__(self, page: np.ndarray) -> np.ndarray:
        self.release_other()
        _, _, height, width = page.shape
        out = np.zeros((1, 1, height, width), dtype=np.float32)
        typical, contrast = print_contrast(page)
        for y0, y1, keep_y0, keep_y1 in tiles(height, tile=self.height, margin=self.margin):
            for x0, x1, keep_x0, keep_x1 in tiles(width, tile=self.width, margin=self.margin):
                part = page[:, :, y0:y1, x0:x1]
                if not has_print(part, typical=typical, contrast=contrast):
                    continue
                canvas = np.pad(part, ((0, 0), (0, 0), (0, self.height - (y1 - y0)), (0, self.width - (x1 - x0))),
                                mode="symmetric")
                [prob_map] = self.network.run(canvas)
                out[:, :, keep_y0:keep_y1, keep_x0:keep_x1] = \
                    prob_map[:, :, keep_y0 - y0:keep_y1 - y0, keep_x0 - x0:keep_x1 - x0]
        return out


class RecogniserSession:
    """Stands in for RapidOCR's recogniser session: (n, 3, 48, W) lines in, BestCharacters out."""

    def __init__(self, path: str, *, threads: int | None, pixels: int, min_width: int,
                 classes: np.ndarray | None = None) -> None:
        import openvino as ov
        import openvino.opset13 as ops

        model = ov.Core().read_model(path)
        [probabilities] = model.get_results()
        scores = probabilities.input_value(0)
        self.classes = None
        if classes is not None:
            scores = _only_classes(scores, classes)
            self.classes = np.asarray(classes, dtype=np.int64)
        best = ops.topk(scores, k=1, axis=2, mode="max", sort="none")
        model.remove_result(probabilities)
        model.add_results([ops.result(best.output(0)), ops.result(best.output(1))])
        self.network = Network.compile(model, threads=threads)
        self.pixels, self.min_width = pixels, min_width
        self.release_other: Callable[[], None] = lambda: None

    def __call__(self, lines: np.ndarray) -> BestCharacters:
        self.release_other()
        count, channels, height, width = lines.shape
        padded = rec_width_bucket(width, minimum=self.min_width)
        probs, indexes = [], []
        for start, stop in batch_parts(count, padded, budget=self.pixels):
            part = np.zeros((stop - start, channels, height, padded), dtype=np.float32)
            part[:, :, :, :width] = lines[start:stop]
            prob, index = self.network.run(part)
            probs.append(prob[:, :, 0])
            indexes.append(index[:, :, 0])
        prob, index = np.concatenate(probs), np.concatenate(indexes).astype(np.int64)
        if self.classes is not None:
            index = self.classes[index]
        steps = round(prob.shape[1] * width / padded)  # the positions of the unpadded width
        return BestCharacters(index[:, :steps], prob[:, :steps])


def _only_classes(softmax: Any, classes: np.ndarray) -> Any:
    """The recogniser's softmax rebuilt over `classes` only: its last layer (MatMul + Add before the Softmax)
    with those columns of its weights, so characters never wanted cost nothing."""
    import openvino.opset13 as ops

    node = softmax.get_node()
    while node.get_type_name() in ("Identity", "Softmax"):
        node = node.input_value(0).get_node()
    add = node
    matmul, bias = (add.input_value(0).get_node(), add.input_value(1).get_node())
    weight = matmul.input_value(1).get_node()
    kinds = tuple(n.get_type_name() for n in (add, matmul, weight, bias))
    if kinds != ("Add", "MatMul", "Constant", "Constant"):
        raise RuntimeError("the recogniser's last layer is not MatMul + Add of constants: cannot narrow it")
    w = weight.get_data()[:, classes]
    b = bias.get_data()[..., classes]
    logits = ops.add(ops.matmul(matmul.input_value(0), ops.constant(np.ascontiguousarray(w)), False, False),
                     ops.constant(np.ascontiguousarray(b)))
    return ops.softmax(logits, axis=-1).output(0)


class BestCharactersDecode:
    """RapidOCR's CTC decoding, fed the recogniser's best characters instead of every probability."""

    def __init__(self, decoder: Any) -> None:
        self.decoder = decoder

    def __call__(self, preds: Any, return_word_box: bool = False, **kwargs: Any) -> Any:
        if not isinstance(preds, BestCharacters):
            return self.decoder(preds, return_word_box, **kwargs)
        return self.decoder.decode(preds.index, preds.prob, return_word_box, kwargs.get("wh_ratio_list", (1.0,)),
                                   kwargs.get("max_wh_ratio", 1.0), remove_duplicate=True)


def _trim_heap() -> None:
    """Hand the freed buffers back to the system (glibc keeps them in its heap otherwise)."""
    global _MALLOC_TRIM
    if _MALLOC_TRIM is None:
        import ctypes
        import ctypes.util

        try:
            _MALLOC_TRIM = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
        except (OSError, AttributeError):  # not glibc: nothing to trim
            _MALLOC_TRIM = False
    if _MALLOC_TRIM:
        _MALLOC_TRIM(0)


_MALLOC_TRIM: Any = None


def use_openvino(ocr: Any, *, threads: int | None, rec_pixels: int, east_asian: bool) -> None:
    """Run the RapidOCR object `ocr`'s detector and recogniser on OpenVINO (it loads them if needed). Call it
    after any other hook on the detector's preprocessing: it keeps that one's resizing."""
    detector, recogniser = ocr._load_det_model(), ocr._load_rec_model()  # noqa: SLF001
    det_path, rec_path = _model_path(detector), _model_path(recogniser)
    classes = None if east_asian else not_east_asian(recogniser.postprocess_op.character)
    # RapidOCR pads every batch of lines to its configured width at least: the narrowest shape there is.
    rec_session = RecogniserSession(rec_path, threads=threads, pixels=rec_pixels,
                                    min_width=int(recogniser.rec_image_shape[2]), classes=classes)
    det_session = DetectorSession(det_path, threads=threads, mean=np.asarray(detector.mean, dtype=np.float32),
                                  std=np.asarray(detector.std, dtype=np.float32))
    det_session.release_other, rec_session.release_other = rec_session.network.release, det_session.release
    detector.session, recogniser.session = det_session, rec_session
    recogniser.postprocess_op = BestCharactersDecode(recogniser.postprocess_op)
    resizing = detector.get_preprocess
    detector.get_preprocess = lambda: PageBytes(resizing())


class PageBytes:
    """RapidOCR's detector preprocessing without its scaling: the resized page as bytes, (1, 3, H, W); the
    network scales it (a page as float32 is four times the bytes, and RapidOCR made several such copies)."""

    def __init__(self, resizing: Any) -> None:
        self.resizing = resizing

    def __call__(self, img: np.ndarray) -> np.ndarray | None:
        resized = self.resizing.resize(img)
        if resized is None:
            return None
        return np.ascontiguousarray(resized.transpose(2, 0, 1)[np.newaxis])


EAST_ASIAN = ("CJK", "HIRAGANA", "KATAKANA", "HANGUL", "BOPOMOFO", "YI ", "HALFWIDTH KATAKANA", "HALFWIDTH HANGUL",
              "KANGXI", "IDEOGRAPHIC")


def not_east_asian(characters: list[str]) -> np.ndarray:
    """Indices of the recogniser's classes that are not East Asian script (by Unicode character name):
    Latin, Greek, Cyrillic, digits, punctuation, symbols, and the CTC blank."""
    import unicodedata

    keep = []
    for index, character in enumerate(characters):
        name = unicodedata.name(character, "") if len(character) == 1 else ""
        if not name.startswith(EAST_ASIAN):
            keep.append(index)
    return np.asarray(keep, dtype=np.int64)


def _model_path(model: Any) -> str:
    path = getattr(getattr(model.session, "session", None), "_model_path", None)
    if not path:
        raise RuntimeError("RapidOCR's model is not an onnxruntime session with a file: cannot move it to OpenVINO")
    return str(path)
