"""The receipts bench's pure logic (bench/receipts.py): where a value is printed, whether a proof lands there, and
injected errors that stay plausible."""

from __future__ import annotations

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from receipts import Truth, company_swapped, date_shifted, digit_changed, holds, lands, right_answer, value_lines  # noqa: E402
from receipts_ocr import Box, Line  # noqa: E402

LINES = [
    Line(Box(80, 100, 400, 130), "LOT 12, JALAN MAWAR,"),
    Line(Box(80, 135, 400, 165), "47000 SUNGAI BULOH"),
    Line(Box(80, 300, 300, 330), "ITEM A 19.00"),
    Line(Box(80, 340, 400, 370), "TOTAL RM 9.00"),
]


def test_a_total_is_printed_where_a_line_shows_it_as_a_whole_number():
    assert [line.text for line in value_lines(LINES, "total", "9.00")] == ["TOTAL RM 9.00"]


def test_an_address_is_printed_on_each_of_its_lines_even_where_the_transcriptions_differ_slightly():
    shown = value_lines(LINES, "address", "LOT 12, JALAN MAWAR, 47000 SUNGEI BULOH")  # SUNGEI, not SUNGAI
    assert [line.text for line in shown] == ["LOT 12, JALAN MAWAR,", "47000 SUNGAI BULOH"]


def test_a_proof_lands_only_when_every_box_is_centred_on_a_line_showing_the_value():
    showing = value_lines(LINES, "total", "9.00")
    on_value = Box(300, 342, 390, 368)  # the words "9.00" of the TOTAL line
    on_item = Box(250, 302, 300, 328)
    assert lands([on_value], showing)
    assert not lands([on_value, on_item], showing)
    assert not lands([], showing)


def test_a_fragment_of_a_name_does_not_hold_the_whole_name_but_an_ocr_slip_does():
    assert not holds("BHD", "company", "MR. D.I.Y. (M) SDN BHD")
    assert holds("MR. D.I.Y.(M) SDN BHO", "company", "MR. D.I.Y. (M) SDN BHD")


def test_the_right_model_cites_the_total_on_its_total_line_never_inside_a_registration_number():
    truth = Truth("receipt-x", Path("x.jpg"), {"company": "CORNER SHOP", "date": "02/03/2019", "address": "",
                                               "total": "RM 8.60"}, [], (460, 1000))
    text = "L1 CORNER SHOP\nL2 CO-REG:860671-D\nL3 TEA 8.60\nL4 TOTAL RM 8.60\nL5 02/03/2019"
    answer = right_answer({"messages": [{"role": "user", "content": f"<document>\n{text}\n</document>"}]}, truth)
    assert answer["total"] == {"value": 8.6, "proof": [{"type": "LINE", "id": 4}]}
    assert answer["date"] == {"value": "2019-03-02", "proof": [{"type": "LINE", "id": 5}]}


def test_injected_errors_differ_from_the_printed_value_and_stay_plausible():
    for seed in range(200):
        rng = random.Random(seed)
        changed = digit_changed("14.10", rng)
        assert len(changed) == 5 and sum(a != b for a, b in zip(changed, "14.10", strict=True)) == 1
        assert date_shifted("2018-03-01", rng) != "2018-03-01"  # an injected error is another date
        assert company_swapped("MR. D.I.Y. (M) SDN BHD", ["MR.D.I.Y(M)SDN BHD", "AEON CO. (M) BHD"],
                               rng) == "AEON CO. (M) BHD"
