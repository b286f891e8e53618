"""Faster RapidOCR: the size at which its detector sees an image, one page's lines recognised in several
threads, and leaner onnxruntime sessions (hooks into a loaded RapidOCR object; the rules themselves are pure);
and the size at which it reads a page at all (`limit_page_size`).

RapidOCR's own rule ("min", 736) scales every image up until its short side is 736 px and never scales a
page down, so a 150 dpi A4 scan is detected at its full 1240 x 1754 px, the dearest step of a page in CPU
time and peak memory (docs/BENCHMARKS.md). Detection only has to find where lines are; recognition reads each
line cut from the full-size image whatever size the detector saw. So a page whose long side exceeds
`limit` is detected at `limit`; a smaller image (a letterhead cut from a PDF, a receipt) keeps
RapidOCR's rule, which upscales it for small print.
"""

from __future__ import annotations

from typing import Any

RAPIDOCR_MIN_SIDE = 736  # RapidOCR's default Det.limit_side_len for limit_type "min"
# Before anything else RapidOCR shrinks an image whose long side exceeds its Global.max_side_len (2000 px), for
# detection and recognition alike. That bounds the work on a large scan (an A4 page at 600 dpi), but it shrinks a
# thermal strip by its length: a 58 mm strip 80 cm long, photographed at 190 dpi (890 x 6000 px with the table
# around it), was read at 300 x 2000, its 25 px print at 8 px, too small to read its figures. So a page is shrunk
# only as far as needed to bring its long side to RAPIDOCR_LONG_SIDE or its short side to PAGE_SHORT_SIDE, whichever
# shrinks it less. PAGE_SHORT_SIDE is 2000 / sqrt(2): an A4 page reaches both at once, so it is read as RapidOCR
# read it (1414 x 2000). No page is read smaller than RapidOCR read it; a page longer for its width than A4 is read
# larger, a strip at its full size whatever its length (the detector reads it in tiles, rapid_openvino.py).
# Figures in docs/BENCHMARKS.md ("Faded thermal strips and the page size").
RAPIDOCR_LONG_SIDE = 2000  # RapidOCR's default Global.max_side_len
PAGE_SHORT_SIDE = 1414
NO_LONG_SIDE_LIMIT = 1_000_000  # RapidOCR's Global.max_side_len when limit_page_size shrinks pages instead


def page_size_limited(height: int, width: int, *, short_side: int,
                      long_side: int = RAPIDOCR_LONG_SIDE) -> tuple[int, int] | None:
    """(width, height) a page of `height` x `width` px is read at: shrunk until its short side is `short_side` or its
    long side is `long_side`, whichever comes first, both sides rounded to multiples of 32 as RapidOCR rounds them;
    None when either is within its limit already (the page is read as it is)."""
    ratio = max(short_side / min(height, width), long_side / max(height, width))
    if ratio >= 1:
        return None
    return max(32, round(width * ratio / 32) * 32), max(32, round(height * ratio / 32) * 32)


def limit_page_size(ocr: Any, *, short_side: int) -> None:
    """Make the RapidOCR object `ocr` shrink a page only where both its short side exceeds `short_side` px and its
    long side RAPIDOCR_LONG_SIDE (`page_size_limited`), instead of wherever its long side does (set
    Global.max_side_len out of reach). RapidOCR maps the boxes back to the page as it does for its own shrinking.
    Stateless: threads may share it."""
    import cv2

    own = ocr.preprocess_img  # RapidOCR's: what it does to a page small enough (enlarges a tiny one)

    def preprocess_img(img: Any) -> tuple[Any, dict[str, Any]]:
        height, width = img.shape[:2]
        size = page_size_limited(height, width, short_side=short_side)
        if size is None:
            return own(img)
        return cv2.resize(img, size), {"preprocess": {"ratio_h": height / size[1], "ratio_w": width / size[0]}}

    ocr.preprocess_img = preprocess_img


def detection_ratio(height: int, width: int, *, limit: int, min_side: int = RAPIDOCR_MIN_SIDE) -> float:
    """The factor an image of `height` x `width` pixels is scaled by before detection."""
    if max(height, width) > limit:
        return limit / max(height, width)
    if min(height, width) < min_side:
        return min_side / min(height, width)
    return 1.0


def detection_size(height: int, width: int, ratio: float) -> tuple[int, int]:
    """(width, height) scaled by `ratio` and rounded to multiples of 32, as the network needs."""
    return max(32, round(width * ratio / 32) * 32), max(32, round(height * ratio / 32) * 32)


def limit_detection_size(ocr: Any, *, limit: int) -> None:
    """Make the RapidOCR object `ocr` detect with `detection_ratio` (loads its detector if needed).

    The hook is one stateless preprocessing object, so threads reading pages of any size can share it.
    """
    import cv2
    from rapidocr.ch_ppocr_det.utils import DetPreProcess

    detector = ocr._load_det_model()  # noqa: SLF001 - RapidOCR exposes no setting for this rule

    class _PagePreProcess(DetPreProcess):
        def resize(self, img: Any) -> Any:
            h, w = img.shape[:2]
            ratio = detection_ratio(h, w, limit=limit, min_side=self.limit_side_len)
            return cv2.resize(img, detection_size(h, w, ratio))

    pre = _PagePreProcess(detector.limit_side_len, "min", detector.mean, detector.std)
    detector.get_preprocess = lambda: pre


def chunks_by_width(widths: list[float], parts: int) -> list[list[int]]:
    """Indices of `widths` dealt into `parts` chunks of alike widths (sorted, then dealt in turn), so that each
    chunk's batches pad little and every chunk costs about the same."""
    order = sorted(range(len(widths)), key=lambda i: widths[i])
    return [chunk for chunk in (order[k::parts] for k in range(parts)) if chunk]


def split_recognition(ocr: Any, *, workers: int) -> None:
    """Make the RapidOCR object `ocr` recognise a page's lines in `workers` threads at once.

    One onnxruntime session run is cheap per line; splitting the lines across threads that each run
    single-threaded uses the cores with less waiting than intra-op threads on small batches.
    """
    from concurrent.futures import ThreadPoolExecutor

    from rapidocr.ch_ppocr_rec.typings import TextRecInput, TextRecOutput

    model = ocr._load_rec_model()  # noqa: SLF001 - RapidOCR exposes no setting for this
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ocr-rec")

    def recognise(images: list[Any]) -> Any:
        chunks = chunks_by_width([img.shape[1] / max(img.shape[0], 1) for img in images], workers)
        if len(chunks) <= 1:
            return model(TextRecInput(img=images, return_word_box=ocr.return_word_box))
        parts = list(pool.map(lambda chunk: model(TextRecInput(img=[images[i] for i in chunk],
                                                               return_word_box=ocr.return_word_box)), chunks))
        txts: list[Any] = [""] * len(images)
        scores: list[float] = [0.0] * len(images)
        words: list[Any] = [None] * len(images)
        for chunk, part in zip(chunks, parts, strict=True):
            for position, index in enumerate(chunk):
                txts[index] = part.txts[position]
                scores[index] = part.scores[position]
                words[index] = part.word_results[position]
        return TextRecOutput(images, tuple(txts), scores, tuple(words), max(p.elapse or 0.0 for p in parts),
                             viser=parts[0].viser)

    ocr.recognize_txt = recognise


def lean_sessions(ocr: Any, *, threads: int | None) -> None:
    """Rebuild the detector's and recogniser's onnxruntime sessions with options RapidOCR does not expose.

    No memory-pattern planning: it keeps a buffer per input shape, and every page and line batch has a new
    shape, so it only adds to the peak (docs/BENCHMARKS.md, Memory). No busy-waiting threads: on a
    machine shared with other workers a spinning thread burns a core that another worker needed.
    """
    import onnxruntime as ort

    for model in (ocr._load_det_model(), ocr._load_rec_model()):  # noqa: SLF001
        wrapper = model.session
        path = getattr(getattr(wrapper, "session", None), "_model_path", None)
        if not path:  # another inference engine, or an onnxruntime without the attribute: keep RapidOCR's
            continue
        options = ort.SessionOptions()
        options.log_severity_level = 4
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.enable_cpu_mem_arena = False
        options.enable_mem_pattern = False
        options.inter_op_num_threads = 1
        if threads:
            options.intra_op_num_threads = threads
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        wrapper.session = ort.InferenceSession(path, sess_options=options, providers=["CPUExecutionProvider"])
