"""A number is read from the words that show it on one page row, whatever separates its digits; digits in
separate columns stay separate numbers (extraction/ocr/page_rows.py)."""

from __future__ import annotations

import math

import pytest

from extraction.ocr.blocks import BBox, BlockType, OcrBlock
from extraction.ocr.page_rows import PageRows, numeric_runs, token_kind
from tests.support.pages import SQUARE

H = 0.012  # a word's height, as a fraction of the page
DIGIT = 0.55 * H  # a digit's advance


def word(text: str, left: float, *, top: float = 0.3, width: float | None = None, wid: str | None = None) -> OcrBlock:
    width = width if width is not None else DIGIT * len(text) if text.isdigit() else 0.7 * H * len(text)
    return OcrBlock(page_size=SQUARE, id=wid or f"{text}@{left:.4f},{top:.4f}", type=BlockType.WORD, page=1, text=text,
                    bbox=BBox(left, top, width, H))


def comb(digits: str, left: float, pitch: float, *, top: float = 0.3) -> list[OcrBlock]:
    """One digit per box of a comb: each digit centred in its box, `pitch` apart."""
    return [word(d, left + k * pitch + (pitch - DIGIT) / 2, top=top) for k, d in enumerate(digits)]


def texts(row: list[OcrBlock]) -> list[str]:
    return [run.text for run in numeric_runs(row)]


@pytest.mark.parametrize("pitch", [1.1 * H, 1.5 * H, 2.0 * H])
def test_a_count_printed_one_digit_per_box_reads_as_one_number(pitch):
    assert texts(comb("055", 0.4, pitch)) == ["055"]
    assert texts(comb("0267", 0.4, pitch)) == ["0267"]


def test_digits_the_ocr_joined_across_two_boxes_still_read_with_the_box_beside_them():
    pitch = 1.6 * H
    first = word("01", 0.4 + (pitch - DIGIT) / 2, width=pitch + DIGIT)  # the boxes of 0 and 1 read as one word
    last = word("4", 0.4 + 2 * pitch + (pitch - DIGIT) / 2)
    assert texts([first, last]) == ["014"]


def test_box_rules_read_as_pipes_neither_end_a_number_nor_belong_to_it():
    pitch = 1.6 * H
    digits = comb("055", 0.4, pitch)
    rules = [word("|", 0.4 + k * pitch, width=0.2 * H) for k in range(4)]
    row = sorted(digits + rules, key=lambda w: w.bbox.left)
    assert token_kind("|") == "rule" and texts(row) == ["055"]
    assert token_kind("0|5") == "digits"


def test_letter_spaced_digits_read_as_one_number():
    assert texts(comb("0056", 0.4, DIGIT + 0.35 * H)) == ["0056"]


def test_digits_in_two_columns_far_apart_stay_two_numbers():
    assert texts([word("5", 0.40), word("3", 0.40 + 4 * H)]) == ["5", "3"]


def test_digits_spaced_unevenly_stay_separate_numbers():
    # '10' and '15' in neighbouring columns: the gap between them is not the pitch of their own digits
    assert texts([word("10", 0.40), word("15", 0.40 + 2 * DIGIT + 1.2 * H)]) == ["10", "15"]
    # a comb's digits then a digit a column away: the comb stays whole, the stray digit apart
    row = comb("055", 0.4, 1.5 * H) + [word("7", 0.4 + 3 * 1.5 * H + 1.3 * H)]
    assert texts(row) == ["055", "7"]


def test_a_thousands_group_after_a_word_space_joins_its_number():
    assert texts([word("1", 0.40), word("234,56", 0.40 + DIGIT + 0.3 * H)]) == ["1234,56"]


def test_digit_words_join_across_word_spaces_and_end_at_a_column_gutter():
    row, left = [], 0.3
    for token in ["CERO", "CINCO", "SEIS"]:
        row.append(word(token, left))
        left += row[-1].bbox.width + 0.3 * H
    row.append(word("CERO", left + 4 * H))  # the next column's words
    assert texts(row) == ["CERO CINCO SEIS", "CERO"]


@pytest.mark.parametrize("degrees", [-3.0, 0.0, 3.0])
def test_page_rows_keep_a_label_and_its_comb_on_one_row_on_a_turned_page(degrees):
    slope = math.tan(math.radians(degrees))
    rows = []
    for r, (party, digits) in enumerate([("PSUV", "055"), ("PCV", "267"), ("TUPAMARO", "014")]):
        top = 0.2 + r * 2.2 * H
        label = word(party, 0.1, top=top)
        boxes = comb(digits, 0.45, 1.6 * H, top=top)
        rows += [label, *boxes]
    turned = [OcrBlock(page_size=SQUARE, id=w.id, type=w.type, page=1, text=w.text,
                       bbox=BBox(w.bbox.left, w.bbox.top + slope * (w.bbox.left - 0.1), w.bbox.width, H)) for w in rows]
    page = PageRows(turned, skew=slope)
    by_label = {page.labels(p)[0][0]: p for p in ("PSUV", "PCV", "TUPAMARO")}
    read = {by_label[run.row]: run.text for run in page.runs}
    assert read == {"PSUV": "055", "PCV": "267", "TUPAMARO": "014"}


def test_lone_digits_a_letter_space_apart_are_one_number_however_unevenly_an_engine_boxed_them():
    # an OCR engine's boxes of '4 0 8' spaced by hand: pitches of 0.8 and 1.25 heights, a third apart
    row = [word("4", 0.40), word("0", 0.40 + 0.8 * H), word("8", 0.40 + 2.05 * H)]
    assert texts(row) == ["408"]


def test_digits_an_engine_boxed_by_their_share_of_the_line_still_read_at_their_pitch():
    # '0', '43', '1' cut from one spaced line: each character a share of its word's box, the boxes touching
    pitch = 1.15 * H
    row = [word("0", 0.40, width=pitch), word("43", 0.40 + pitch, width=2 * pitch),
           word("1", 0.40 + 3 * pitch, width=0.9 * pitch)]
    assert texts(row) == ["0431"]


def test_a_letter_an_engine_read_for_a_look_alike_digit_inside_a_number_reads_as_that_digit():
    assert [token_kind(t) for t in ("00S", "0SS2", "1O", "SOS", "CERO", "DOS")] == [
        "digits", "digits", "digits", "", "word", "word"]
    assert texts([word("0SS2", 0.40)]) == ["0552"]


def test_a_word_printed_over_another_never_joins_it_as_a_thousands_group():
    # a stamp's '6' read inside a printed '167'
    assert texts([word("6", 0.401, width=DIGIT), word("167", 0.40)]) == ["6", "167"]


def test_a_pages_skew_ignores_the_turned_boxes_of_a_stamp_the_ocr_read_on_a_level_page():
    from extraction.ocr.page_rows import page_skew

    level = [OcrBlock(page_size=SQUARE,
                      id=f"l{k}", type=BlockType.LINE, page=1, text="PSUV 0056", bbox=BBox(0.1, 0.1 + k * 0.02, 0.5, H))
             for k in range(10)]
    stamp = OcrBlock(page_size=SQUARE,
                     id="stamp", type=BlockType.LINE, page=1, text="MESA CERRADA", bbox=BBox(0.6, 0.5, 0.2, 0.1),
                     polygon=[(0.6, 0.55), (0.8, 0.5), (0.8, 0.52), (0.6, 0.57)])  # turned by about 14 degrees
    words = [word("PSUV", 0.1, top=0.1 + k * 0.02) for k in range(10)] + [
        word("0056", 0.4, top=0.1 + k * 0.02) for k in range(10)]
    assert page_skew([*level, stamp], words) == pytest.approx(0.0, abs=1e-6)
    turned = [OcrBlock(page_size=SQUARE, id=b.id, type=b.type, page=1, text=b.text, bbox=b.bbox,
                       polygon=[(0.1, 0.1), (0.6, 0.11), (0.6, 0.122), (0.1, 0.112)]) for b in level]
    assert page_skew(turned, words) == pytest.approx(0.02, abs=1e-3)  # most lines turned: the engine knows
