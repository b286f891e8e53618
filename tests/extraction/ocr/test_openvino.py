"""RapidOCR's networks on OpenVINO (extraction/ocr/rapid_openvino.py): pages detected in tiles, lines padded to a
few widths, the recogniser narrowed to the scripts wanted; the same reading as onnxruntime's, and onnxruntime
again where OpenVINO cannot load. The speed and memory it was chosen for are in docs/BENCHMARKS.md."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from extraction.ocr import rapid
from extraction.ocr.blocks import BlockType, PageImage, SourceDocument
from extraction.ocr.rapid import RapidOcrEngine
from extraction.ocr.rapid_openvino import (
    DET_MARGIN,
    DET_TILE_H,
    DET_TILE_W,
    BestCharactersDecode,
    DetectorSession,
    Network,
    RecogniserSession,
    batch_parts,
    has_print,
    print_contrast,
    rec_width_bucket,
    tiles,
)


@pytest.mark.parametrize("size", [1, 300, DET_TILE_H - 1, DET_TILE_H, DET_TILE_H + 1, 1755, 2339, 5000])
def test_tiles_cover_each_pixel_once_and_keep_only_what_has_context_on_both_sides(size):
    covered = []
    for start, stop, keep_from, keep_to in tiles(size, tile=DET_TILE_H, margin=DET_MARGIN):
        assert 0 <= start <= keep_from < keep_to <= stop <= size
        assert stop - start <= DET_TILE_H
        assert keep_from == 0 or keep_from - start >= DET_MARGIN  # context above, except at the page's top
        assert keep_to == size or stop - keep_to >= DET_MARGIN  # and below, except at its foot
        covered += range(keep_from, keep_to)
    assert covered == list(range(size))


def test_a_page_of_150_dpi_is_detected_in_three_tiles_none_reaching_past_it_and_a_short_one_in_one():
    assert tiles(1755, tile=DET_TILE_H, margin=DET_MARGIN) == [(0, 768, 0, 640), (512, 1280, 640, 1152),
                                                               (987, 1755, 1152, 1755)]
    assert tiles(1240, tile=DET_TILE_W, margin=DET_MARGIN) == [(0, 1240, 0, 1240)]


def test_line_batches_are_padded_to_a_few_widths_by_at_most_a_quarter_and_never_below_the_engine_width():
    buckets = {rec_width_bucket(width, minimum=96) for width in range(1, 3001)}
    assert len(buckets) <= 16 and all(b % 32 == 0 for b in buckets)
    for width in range(1, 3001):
        padded = rec_width_bucket(width, minimum=96)
        assert padded >= max(width, 96)
        assert width <= 96 or padded < 1.25 * width + 32  # a quarter, rounded up to the network's stride
    assert rec_width_bucket(10, minimum=100) == 128  # a minimum off the stride is rounded up to it


@pytest.mark.parametrize(("count", "width", "budget"), [(1, 5000, 4096), (6, 96, 4096), (6, 1024, 4096), (7, 700, 2048)])
def test_a_batch_runs_in_parts_within_the_pixel_budget_with_every_line_once(count, width, budget):
    parts = batch_parts(count, width, budget=budget)
    assert [i for start, stop in parts for i in range(start, stop)] == list(range(count))
    assert all(stop - start == 1 or (stop - start) * width <= budget for start, stop in parts)
    assert all(stop > start for start, stop in parts)


def _noisy(grey: int, size=(400, 600), seed=0) -> np.ndarray:
    plane = np.random.default_rng(seed).normal(grey, 6, size)
    return np.clip(plane, 0, 255).astype(np.uint8)[np.newaxis].repeat(3, axis=0)[np.newaxis]


def _reads_as_print(part: np.ndarray, page: np.ndarray) -> bool:
    typical, contrast = print_contrast(page)
    return has_print(part, typical=typical, contrast=contrast)


def test_blank_paper_with_scanner_noise_holds_no_print_and_a_full_stop_or_light_print_on_dark_does():
    page = _noisy(245)
    page[..., 10:30, 10:200] = 30  # the page's own print sets how dark print is
    assert not _reads_as_print(_noisy(245, seed=1), page)
    dot = _noisy(245, seed=2)
    dot[..., 200:204, 300:304] = 30  # 16 pixels of ink
    assert _reads_as_print(dot, page)
    dark = _noisy(60)
    dark[..., 10:30, 10:200] = 220
    assert not _reads_as_print(_noisy(60, seed=3), dark)  # a dark photographed ground
    light = _noisy(60, seed=4)
    light[..., 100:110, 100:200] = 220
    assert _reads_as_print(light, dark)


def test_on_a_faint_page_faint_print_counts():
    faint = np.full((1, 3, 300, 400), 0, dtype=np.uint8)  # how RapidOCR loads a palette PNG: indices 0-25
    faint[..., 50:60, 50:150] = 25
    blank = np.zeros((1, 3, 300, 400), dtype=np.uint8)
    assert _reads_as_print(faint, faint)
    assert not _reads_as_print(blank, faint)


def _engine(**options) -> RapidOcrEngine:
    return RapidOcrEngine(threads=2, rec_width=96, **options)


def _page(path: Path, lines: list[tuple[int, int, str, int]], size: tuple[int, int]) -> PageImage:
    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    for x, y, text, points in lines:
        draw.text((x, y), text, fill="black", font=ImageFont.load_default(size=points))
    image.save(path)
    return PageImage(1, path, image.width, image.height)


def _words(engine: RapidOcrEngine, page: PageImage) -> list:
    [read] = engine.read(SourceDocument(page.path, "image", [page]))
    return [b for b in read.blocks if b.type is BlockType.WORD]


@pytest.fixture(scope="module")
def seam_page(tmp_path_factory) -> PageImage:
    """A page taller and wider than a tile, with a line on each seam between kept parts (the tiles of a
    1755 x 1800 px page keep rows 0-640 | 640-1152 | 1152-1755 and columns 0-1152 | 1152-1800)."""
    path = tmp_path_factory.mktemp("ov") / "seams.png"
    return _page(path, [(150, 120, "TOTAL VOTOS 0417", 40),
                        (150, 628, "MESA 0056 ACROSS THE FIRST SEAM", 32),
                        (900, 1140, "CODE 8812 ACROSS TWO SEAMS", 32),
                        (300, 1600, "NINE HUNDRED 0900", 28)], (1800, 1755))


def test_openvino_reads_the_words_onnxruntime_reads_lines_across_tile_seams_included(seam_page):
    on_openvino = _words(_engine(runtime="openvino"), seam_page)
    on_onnxruntime = _words(_engine(runtime="onnxruntime"), seam_page)
    texts = [w.text for w in on_openvino]
    assert texts == [w.text for w in on_onnxruntime]
    assert {"0417", "0056", "SEAM", "8812", "SEAMS", "0900"} <= set(texts)
    for a, b in zip(on_openvino, on_onnxruntime, strict=True):  # the same boxes, to a fraction of a character
        assert abs(a.bbox.left - b.bbox.left) < 0.004 and abs(a.bbox.top - b.bbox.top) < 0.004
        assert abs(a.bbox.right - b.bbox.right) < 0.004 and abs(a.bbox.bottom - b.bbox.bottom) < 0.004


@pytest.fixture(scope="module")
def half_blank_page(tmp_path_factory) -> PageImage:
    """Print in the top third, then blank paper with scanner noise: tiles of that paper alone hold nothing."""
    path = tmp_path_factory.mktemp("ov") / "half-blank.png"
    page = _page(path, [(150, 100 + 60 * k, f"LINE {k} AMOUNT {1000 + 37 * k}", 36) for k in range(8)], (1240, 1755))
    grey = np.asarray(Image.open(path).convert("L")).astype(np.float32)
    grey = grey * 0.94 + 4 + np.random.default_rng(3).normal(0, 6, grey.shape)
    Image.fromarray(np.clip(grey, 0, 255).astype(np.uint8)).convert("RGB").save(path)
    return page


def test_blank_paper_below_the_print_gives_no_lines_and_takes_none_away(half_blank_page):
    on_openvino = _words(_engine(runtime="openvino"), half_blank_page)
    on_onnxruntime = _words(_engine(runtime="onnxruntime"), half_blank_page)
    assert [w.text for w in on_openvino] == [w.text for w in on_onnxruntime]
    assert {f"{1000 + 37 * k}" for k in range(8)} <= {w.text for w in on_openvino}
    assert max(w.bbox.bottom for w in on_openvino) < 0.4


def test_the_narrowed_recogniser_reads_latin_print_as_the_whole_one_does(seam_page):
    narrowed = _words(_engine(runtime="openvino", east_asian=False), seam_page)
    whole = _words(_engine(runtime="openvino", east_asian=True), seam_page)
    assert [(w.text, round(w.confidence, 2)) for w in narrowed] == [(w.text, round(w.confidence, 2)) for w in whole]


def test_the_default_engine_runs_on_openvino_without_east_asian_script():
    ocr = RapidOcrEngine()._engine()
    assert isinstance(ocr.text_det.session, DetectorSession)
    assert isinstance(ocr.text_rec.session, RecogniserSession)
    assert isinstance(ocr.text_rec.postprocess_op, BestCharactersDecode)
    assert ocr.text_rec.session.classes is not None and 18_710 > len(ocr.text_rec.session.classes) > 2_000


def test_where_openvino_cannot_load_the_engine_reads_with_onnxruntime_and_says_so(monkeypatch, caplog, seam_page):
    def broken(ocr, **options):
        raise RuntimeError("no CPU plugin for this processor")

    monkeypatch.setattr(rapid, "use_openvino", broken)
    monkeypatch.setattr(rapid, "_LOADED", {})
    with caplog.at_level(logging.WARNING, logger="extraction.ocr.rapid"):
        words = _words(_engine(runtime="openvino"), seam_page)
    assert "0417" in {w.text for w in words}
    assert "no CPU plugin for this processor" in caplog.text and "onnxruntime" in caplog.text


def test_a_network_gives_its_buffers_back_only_when_it_has_run_since_and_nobody_is_running_it():
    released = []

    class Request:
        def infer(self, inputs):
            network.release()  # another thread asking while this one runs: refused

    class Compiled:
        outputs = ()

        def create_infer_request(self):
            return Request()

        def release_memory(self):
            released.append(True)

    network = Network(Compiled())
    network.release()
    assert released == []  # nothing held yet
    network.run(None)
    assert released == []  # asked while it ran
    network.release()
    network.release()
    assert released == [True]  # once, after the run
