"""The receipts OCR bench's metrics (bench/receipts_ocr.py): lines matched by geometry, CER over all characters."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from receipts_ocr import Box, Line, ocr_lines, parse_truth, read_at, score_page  # noqa: E402

from extraction.ocr.blocks import BBox, BlockType, OcrBlock, OcrPage  # noqa: E402
from tests.support.pages import SQUARE


def _line(text: str, left: float, top: float, right: float, bottom: float) -> Line:
    return Line(Box(left, top, right, bottom), text)


def test_a_line_the_engine_split_in_two_is_read_whole():
    truth = _line("TOTAL RM 9.00", 100, 10, 400, 30)
    read = [_line("RM 9.00", 300, 11, 400, 31), _line("TOTAL", 100, 9, 180, 29)]  # right piece first
    assert read_at(truth, read) == "TOTAL RM 9.00"
    score = score_page([truth], read)
    assert (score.distance, score.exact, score.close) == (0, 1, 1)


def test_an_ocr_line_overlapping_less_than_half_the_smaller_height_is_another_row():
    truth = _line("CASH", 100, 100, 200, 120)
    assert read_at(truth, [_line("CASH", 100, 111, 200, 131)]) == ""  # 9 px of 20 overlap
    assert read_at(truth, [_line("CASH", 100, 110, 200, 130)]) == "CASH"  # exactly half


def test_half_of_the_smaller_height_lets_a_short_line_sit_inside_a_tall_one():
    truth = _line("*S", 500, 100, 530, 140)  # a tall transcribed box around a short print
    assert read_at(truth, [_line("*S", 505, 110, 525, 124)]) == "*S"


def test_an_ocr_line_in_another_column_of_the_same_row_does_not_count():
    truth = _line("2", 90, 540, 110, 570)
    assert read_at(truth, [_line("008", 150, 540, 200, 570), _line("X", 110, 540, 120, 570)]) == ""


def test_cer_sums_distances_over_all_characters_and_a_line_not_read_counts_whole():
    truth = [_line("ABCDEFGHIJ", 0, 0, 100, 20), _line("12345", 0, 50, 100, 70)]
    score = score_page(truth, [_line("ABCDEFGHIX", 0, 0, 100, 20)])
    assert (score.lines, score.distance, score.chars) == (2, 1 + 5, 15)
    assert score.cer == pytest.approx(6 / 15)
    assert (score.close, score.exact) == (1, 0)


def test_a_line_a_fifth_wrong_is_recalled_and_one_more_error_is_not():
    truth = [_line("ABCDEFGHIJ", 0, 0, 100, 20)]
    assert score_page(truth, [_line("ABCDEFGHXX", 0, 0, 100, 20)]).close == 1
    assert score_page(truth, [_line("ABCDEFGXXX", 0, 0, 100, 20)]).close == 0


def test_whitespace_is_collapsed_but_case_counts_unless_folded():
    truth = [_line("TOTAL  INCL. GST", 0, 0, 100, 20)]
    assert score_page(truth, [_line(" TOTAL INCL.  GST ", 0, 0, 100, 20)]).distance == 0
    assert score_page(truth, [_line("Total Incl. GST", 0, 0, 100, 20)]).distance == 4 + 3  # "otal", "ncl"
    assert score_page(truth, [_line("Total Incl. GST", 0, 0, 100, 20)], fold=True).distance == 0


def test_an_ocr_line_joining_two_transcribed_lines_is_compared_whole_with_each():
    truth = [_line("FRIDAY,", 100, 0, 170, 20), _line("29-12-2017", 180, 0, 300, 20)]
    score = score_page(truth, [_line("FRIDAY, 29-12-2017", 100, 0, 300, 20)])
    assert (score.distance, score.joined, score.exact) == (11 + 8, 2, 0)


def test_only_line_blocks_count_and_their_boxes_become_pixels():
    def block(kind: BlockType, text: str) -> OcrBlock:
        return OcrBlock(page_size=SQUARE, id=text, type=kind, page=1, text=text, bbox=BBox(0.1, 0.5, 0.4, 0.02))

    page = OcrPage(1, [block(BlockType.PAGE, ""), block(BlockType.LINE, "CASH 5.00"), block(BlockType.WORD, "CASH")])
    [line] = ocr_lines(page, width=500, height=1000)
    assert line.text == "CASH 5.00"
    assert (line.box.left, line.box.top, line.box.right, line.box.bottom) == pytest.approx((50, 500, 250, 520))


def test_a_transcription_keeps_its_commas_and_its_box_encloses_the_corners():
    [line] = parse_truth("158,150,641,152,640,189,157,190,67,JLN MEWAH 25/63 TMN SRI MUDA,\n\n")
    assert line.text == "67,JLN MEWAH 25/63 TMN SRI MUDA,"
    assert line.box == Box(157, 150, 641, 190)
