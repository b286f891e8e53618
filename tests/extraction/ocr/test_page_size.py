"""The size RapidOCR reads a page at (extraction/ocr/rapid_tuning.limit_page_size): shrunk only while both its short
side is past PAGE_SHORT_SIDE and its long side past RapidOCR's 2000 px, so a long thermal strip keeps its full size,
an A4 page is read as RapidOCR's own rule read it, and no page smaller than that rule read it.
Figures in docs/BENCHMARKS.md ("Faded thermal strips and the page size")."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from extraction.ocr.blocks import BlockType, OcrError, PageImage, SourceDocument
from extraction.ocr.rapid import RapidOcrEngine
from extraction.ocr.rapid_tuning import PAGE_SHORT_SIDE, page_size_limited

FADED = (150, 150, 146)  # grey print on thermal paper's off-white: a faded receipt
PAPER = (236, 234, 226)
LINES = ["TOTAL RM 14.10", "CASH 20.00", "CHANGE 5.90", "GST 6% 0.80"]


def _strip(path: Path, *, width: int = 460, height: int = 6400, size: int = 24) -> tuple[PageImage, list[int]]:
    """A till receipt's strip, 58 mm wide at 200 dpi and 80 cm long, its last lines printed faint near its foot;
    (the page, the top of each line in px)."""
    image = Image.new("RGB", (width, height), PAPER)
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=size)
    tops = [height - 900 + k * 3 * size for k in range(len(LINES))]
    for text, top in zip(LINES, tops, strict=True):
        draw.text((30, top), text, fill=FADED, font=font)
    image.save(path)
    return PageImage(1, path, width, height), tops


def _read(engine: RapidOcrEngine, page: PageImage):
    [read] = engine.read(SourceDocument(page.path, "image", [page]))
    return read


@pytest.fixture(scope="module")
def strip(tmp_path_factory) -> tuple[PageImage, list[int]]:
    return _strip(tmp_path_factory.mktemp("strip") / "strip.png")


def test_a_page_is_shrunk_only_while_both_its_short_side_and_its_long_side_are_past_their_limits():
    assert page_size_limited(1754, 1240, short_side=PAGE_SHORT_SIDE) is None  # A4 at 150 dpi: as it is
    assert page_size_limited(6400, 460, short_side=PAGE_SHORT_SIDE) is None  # a strip, however long
    assert page_size_limited(2100, 1275, short_side=PAGE_SHORT_SIDE) is None  # long side past, short side not
    assert page_size_limited(1509, 1911, short_side=PAGE_SHORT_SIDE) is None  # short side past, long side not
    # shrunk until the first of them reaches its limit: here the short side, then the long side; sides of 32 px steps
    assert page_size_limited(4000, 1000, short_side=800, long_side=3000) == (800, 3200)
    assert page_size_limited(1000, 4000, short_side=800, long_side=3000) == (3200, 800)
    assert page_size_limited(3000, 2000, short_side=1000, long_side=2000) == (1344, 1984)


def test_no_page_is_read_smaller_than_rapidocrs_own_rule_read_it():
    from rapidocr.utils.process_img import reduce_max_side

    rng = np.random.default_rng(7)
    for height, width in rng.integers(200, 9000, size=(300, 2)):
        own, _, _ = reduce_max_side(np.zeros((height, width, 1), dtype=np.uint8), 2000)  # long side to 2000
        mine = page_size_limited(int(height), int(width), short_side=PAGE_SHORT_SIDE) or (width, height)
        assert mine[0] >= own.shape[1] - 32 and mine[1] >= own.shape[0] - 32  # within the rounding to 32 px


@pytest.mark.parametrize(("height", "width"), [(7016, 4961), (2339, 1654), (3508, 2480), (4200, 3000)])
def test_an_a4_page_scanned_finer_is_read_at_the_size_rapidocr_itself_read_it_within_a_step(height, width):
    from rapidocr.utils.process_img import reduce_max_side

    own, _, _ = reduce_max_side(np.zeros((height, width, 1), dtype=np.uint8), 2000)  # RapidOCR's rule: long side 2000
    mine = page_size_limited(height, width, short_side=PAGE_SHORT_SIDE)
    assert abs(mine[0] - own.shape[1]) <= 32 and abs(mine[1] - own.shape[0]) <= 32  # a step of the network's 32


def test_the_faint_lines_of_a_long_strip_are_read_at_its_full_size_and_were_lost_shrunk_by_its_length(strip):
    page, _ = strip
    text = " ".join(b.text for b in _read(RapidOcrEngine(), page).blocks if b.type is BlockType.LINE)
    for line in LINES:
        assert line in text
    before = " ".join(b.text for b in _read(RapidOcrEngine(page_limit=None), page).blocks
                      if b.type is BlockType.LINE)  # RapidOCR's own rule: the strip shrunk to 2000 px long
    assert sum(line in before for line in LINES) <= 1


def test_the_lines_of_a_strip_read_at_full_size_sit_where_they_are_printed(strip):
    page, tops = strip
    read = _read(RapidOcrEngine(), page)
    lines = {b.text: b for b in read.blocks if b.type is BlockType.LINE}
    for text, top in zip(LINES, tops, strict=True):
        box = lines[text].bbox
        assert box.top * page.height == pytest.approx(top, abs=12)
        assert box.left * page.width == pytest.approx(30, abs=12)


def test_a_page_shrunk_for_reading_keeps_its_boxes_in_fractions_of_the_page_itself(tmp_path):
    path = tmp_path / "a4-300dpi.png"
    image = Image.new("RGB", (2480, 3508), "white")  # A4 at 300 dpi: short side past the limit, read shrunk
    ImageDraw.Draw(image).text((620, 1754), "INVOICE 2024-0417", fill="black", font=ImageFont.load_default(size=64))
    image.save(path)
    page = PageImage(1, path, image.width, image.height)
    [line] = [b for b in _read(RapidOcrEngine(), page).blocks if b.type is BlockType.LINE]
    assert line.text == "INVOICE 2024-0417"
    assert (line.bbox.left, line.bbox.top) == pytest.approx((0.25, 0.5), abs=0.01)


@pytest.mark.parametrize("limit", [0, 16, 1414.0, True])
def test_a_wrong_page_limit_fails_when_the_engine_is_built_and_names_itself(limit):
    with pytest.raises(OcrError, match="page_limit"):
        RapidOcrEngine(page_limit=limit)


def test_the_worker_reads_pages_at_the_page_limit_of_its_settings(settings):
    from extraction.ocr.registry import get_engine
    from extraction.pipeline.engines import rapidocr_options

    assert get_engine("rapidocr", **rapidocr_options()).page_limit == PAGE_SHORT_SIDE  # the default
    settings.OCR_PAGE_LIMIT = 2000
    assert get_engine("rapidocr", **rapidocr_options()).page_limit == 2000
    settings.OCR_PAGE_LIMIT = 0  # RapidOCR's own rule
    assert get_engine("rapidocr", **rapidocr_options()).page_limit is None
