"""Faster RapidOCR: the size at which its detector sees an image, one page's lines recognised in several
threads, and leaner onnxruntime sessions (hooks into a loaded RapidOCR object; the rules themselves are pure).

RapidOCR's own rule ("min", 736) scales every image up until its short side is 736 px and never scales a
page down, so a 150 dpi A4 scan is detected at its full 1240 x 1754 px: about half of the CPU time of a
page and most of its peak memory. Detection only has to find where lines are; recognition reads each
line cut from the full-size image whatever size the detector saw. So a page whose long side exceeds
`limit` is detected at `limit`; a smaller image (a letterhead cut from a PDF, a receipt) keeps
RapidOCR's rule, which upscales it for small print.
"""

from __future__ import annotations

from typing import Any

RAPIDOCR_MIN_SIDE = 736  # RapidOCR's default Det.limit_side_len for limit_type "min"


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
    shape, so it only adds to the peak (about 50 MB a worker on the bench). No busy-waiting threads: on a
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
