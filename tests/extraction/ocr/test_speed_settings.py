"""RapidOCR's speed settings: the detection size, lines recognised in parallel threads, pages read in parallel,
and settings checked loudly (the figures that chose the defaults are in docs/BENCHMARKS.md)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from extraction.ocr.blocks import BlockType, OcrError, OcrPage, PageImage, SourceDocument
from extraction.ocr.rapid import RapidOcrEngine, read_pages
from extraction.ocr.rapid_tuning import chunks_by_width, detection_ratio, detection_size, split_recognition
from extraction.ocr.registry import AutoEngine, get_engine
from tests.support.paths import ROOT


def test_a_page_larger_than_the_limit_is_detected_at_the_limit():
    assert detection_ratio(1754, 1240, limit=1280) == pytest.approx(1280 / 1754)
    assert detection_ratio(1240, 2100, limit=1280) == pytest.approx(1280 / 2100)


def test_a_small_image_is_still_scaled_up_for_detection_as_rapidocr_does():
    # a letterhead cut from a PDF: its short side goes to 736 px, so small print stays readable
    assert detection_ratio(120, 400, limit=1280) == pytest.approx(736 / 120)
    assert detection_ratio(900, 1000, limit=1280) == 1.0


def test_detection_sizes_are_multiples_of_32_and_never_zero():
    assert detection_size(1754, 1240, 1280 / 1754) == (896, 1280)
    assert detection_size(3, 5, 1.0) == (32, 32)


def test_lines_are_dealt_into_chunks_of_alike_widths_each_line_once():
    widths = [9.0, 1.0, 5.0, 3.0, 7.0, 2.0, 8.0]
    chunks = chunks_by_width(widths, 2)
    assert sorted(i for chunk in chunks for i in chunk) == list(range(len(widths)))
    assert [[widths[i] for i in chunk] for chunk in chunks] == [[1.0, 3.0, 7.0, 9.0], [2.0, 5.0, 8.0]]
    assert chunks_by_width([4.0], 3) == [[0]]  # no empty chunk for a page of one line


class _FakeRecogniser:
    """Reads an image's text from its first pixel (the line's number), and remembers its threads."""

    def __init__(self):
        self.threads: set[str] = set()
        self.barrier = threading.Barrier(2, timeout=5)

    def __call__(self, rec_input):
        from rapidocr.ch_ppocr_rec.typings import TextRecOutput

        self.threads.add(threading.current_thread().name)
        self.barrier.wait()  # both chunks must be in flight at once
        numbers = [int(img[0, 0, 0]) for img in rec_input.img]
        return TextRecOutput(rec_input.img, tuple(f"line {n}" for n in numbers), [n / 100 for n in numbers],
                             tuple(((f"line {n}",), (n / 100,), None) for n in numbers), 0.01)


def test_recognition_split_across_threads_gives_each_line_its_own_text_in_page_order():
    recogniser = _FakeRecogniser()

    class FakeOcr:
        return_word_box = True

        def _load_rec_model(self):
            return recogniser

    ocr = FakeOcr()
    split_recognition(ocr, workers=2)
    images = [np.full((10, 10 * (1 + (n * 7) % 5), 3), n, dtype=np.uint8) for n in range(9)]
    result = ocr.recognize_txt(images)
    assert list(result.txts) == [f"line {n}" for n in range(9)]
    assert list(result.scores) == [n / 100 for n in range(9)]
    assert [w[0] for w in result.word_results] == [(f"line {n}",) for n in range(9)]
    assert len(recogniser.threads) == 2


class _SlowEngine:
    """Records how many pages are read at once."""

    name = "slow"

    def __init__(self, workers: int):
        self.page_workers = workers
        self.active = 0
        self.most = 0
        self.lock = threading.Lock()

    def read_image(self, page: PageImage) -> OcrPage:
        with self.lock:
            self.active += 1
            self.most = max(self.most, self.active)
        time.sleep(0.05)
        with self.lock:
            self.active -= 1
        return OcrPage(number=page.number, engine=self.name)

    def read(self, document: SourceDocument) -> list[OcrPage]:
        return [self.read_image(p) for p in document.pages]


def test_pages_of_one_document_are_read_two_at_a_time_and_returned_in_page_order(tmp_path):
    pages = [PageImage(n, tmp_path / f"p{n}.png", 10, 10) for n in range(1, 6)]
    engine = _SlowEngine(workers=2)
    assert [p.number for p in read_pages(engine, pages)] == [1, 2, 3, 4, 5]
    assert engine.most == 2


def test_the_auto_engine_scans_pages_in_parallel_when_its_scan_engine_allows_it(tmp_path):
    pages = [PageImage(n, tmp_path / f"p{n}.png", 10, 10) for n in range(1, 5)]
    engine = _SlowEngine(workers=2)
    read = AutoEngine(scan_engine=engine).read(SourceDocument(tmp_path / "a.tif", "image", pages))
    assert [(p.number, p.engine) for p in read] == [(1, "slow"), (2, "slow"), (3, "slow"), (4, "slow")]
    assert engine.most == 2


@pytest.mark.parametrize("options", [{"threads": 0}, {"det_limit": 16}, {"rec_batch": "6"}, {"rec_workers": -1},
                                     {"page_workers": True}, {"rec_width": 8}, {"rec_pixels": 10},
                                     {"runtime": "tensorflow"}])
def test_a_wrong_speed_setting_fails_when_the_engine_is_built_and_names_itself(options):
    (name,) = options
    with pytest.raises(OcrError, match=name):
        RapidOcrEngine(**options)


def test_the_registry_passes_the_speed_settings_to_the_scan_engine():
    auto = get_engine("auto", threads=2, det_limit=960, rec_batch=3, rec_width=128, rec_workers=2, page_workers=2)
    scan = auto.scan_engine
    assert (scan.det_limit, scan.rec_workers, scan.page_workers) == (960, 2, 2)
    assert scan._settings["Rec.rec_batch_num"] == 3
    assert scan._settings["Rec.rec_img_shape"] == [3, 48, 128]
    assert scan._settings["EngineConfig.onnxruntime.intra_op_num_threads"] == 2


def test_the_worker_builds_its_engine_from_the_ocr_settings(settings):
    from extraction.pipeline.engines import rapidocr_options

    settings.OCR_DET_LIMIT, settings.OCR_PAGE_WORKERS = 1600, 2
    settings.OCR_RUNTIME, settings.OCR_EAST_ASIAN, settings.OCR_THREADS = "onnxruntime", True, 0
    options = rapidocr_options()
    assert (options["det_limit"], options["page_workers"]) == (1600, 2)
    assert (options["runtime"], options["east_asian"], options["threads"]) == ("onnxruntime", True, None)  # 0: all cores
    engine = get_engine("rapidocr", **options)
    assert (engine.det_limit, engine.runtime, engine.east_asian) == (1600, "onnxruntime", True)


@pytest.mark.parametrize(("variable", "value", "message"), [("OCR_THREADS", "-1", "OCR_THREADS=-1 is below"),
                                                            ("OCR_DET_LIMIT", "big", "OCR_DET_LIMIT='big' is not")])
def test_a_bad_ocr_setting_in_the_environment_stops_start_up_with_its_name(variable, value, message):
    env = {**os.environ, variable: value, "DJANGO_SETTINGS_MODULE": "reviewer.settings"}
    done = subprocess.run([sys.executable, "-c", "import django; django.setup()"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode != 0
    assert message in done.stderr


def _page_with_small_print(path: Path) -> PageImage:
    """An A4 page at 300 dpi (larger than the detection limit) with a 7 pt line at its foot."""
    image = Image.new("RGB", (2480, 3508), "white")
    draw = ImageDraw.Draw(image)
    draw.text((200, 300), "TOTAL VOTOS 0417", fill="black", font=ImageFont.load_default(size=60))
    draw.text((200, 3300), "MESA 0056 CERO CERO CINCO SEIS", fill="black", font=ImageFont.load_default(size=29))
    image.save(path)
    return PageImage(1, path, image.width, image.height)


def test_a_page_detected_at_the_limit_keeps_its_small_print_and_its_boxes(tmp_path):
    page = _page_with_small_print(tmp_path / "page.png")
    [read] = RapidOcrEngine(det_limit=1280).read(SourceDocument(page.path, "image", [page]))
    words = {b.text: b.bbox for b in read.blocks if b.type is BlockType.WORD}
    assert {"0417", "0056", "CINCO", "SEIS"} <= set(words)
    small = words["0056"]  # boxes are in fractions of the full page, not of the detector's smaller image
    assert 0.93 < small.top < small.bottom < 0.96
    assert 0.05 < small.left < 0.2


def test_recognition_in_two_threads_reads_what_one_thread_reads(tmp_path):
    page = _page_with_small_print(tmp_path / "page.png")
    document = SourceDocument(page.path, "image", [page])

    def words(engine):
        return [b for p in engine.read(document) for b in p.blocks if b.type is BlockType.WORD]

    split, single = words(RapidOcrEngine(rec_workers=2)), words(RapidOcrEngine(rec_workers=1))
    assert [w.text for w in split] == [w.text for w in single]
    # a line's batch mates set its padding, which moves a word's edge by a fraction of a character
    for a, b in zip(split, single, strict=True):
        assert abs(a.bbox.left - b.bbox.left) < 0.005 and abs(a.bbox.right - b.bbox.right) < 0.005



def test_lean_sessions_plan_no_memory_patterns_and_keep_the_thread_count():
    ocr = RapidOcrEngine(threads=1, lean=True, runtime="onnxruntime")._engine()
    for model in (ocr.text_det, ocr.text_rec):
        options = model.session.session.get_session_options()
        assert options.enable_mem_pattern is False and options.enable_cpu_mem_arena is False
        assert options.intra_op_num_threads == 1
    plain = RapidOcrEngine(threads=1, lean=False, runtime="onnxruntime")._engine()
    detector = plain.text_det or plain._load_det_model()  # noqa: SLF001 - loaded lazily without a detector limit
    assert detector.session.session.get_session_options().enable_mem_pattern is True
