"""The OCR bench's accuracy scorer (bench/ocr_truth.py): each printed row is matched at most once."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from ocr_truth import acta_rows_right, characters_right  # noqa: E402


def _printed(*rows: tuple[str, str]) -> dict:
    return {"rows": [{"votes_text": digits, "votes_words": words} for digits, words in rows]}


def test_a_number_read_once_counts_for_one_of_two_rows_that_print_it():
    printed = _printed(("0056", "CERO CERO CINCO SEIS"), ("0056", "CERO CERO CINCO SEIS"))
    score = acta_rows_right(words=["0056", "CERO"], lines=["PSUV 0056 CERO CERO CINCO SEIS"], printed=printed)
    assert (score.rows, score.digits, score.words) == (2, 1, 1)


def test_a_short_spelled_number_cannot_use_up_part_of_a_longer_one():
    printed = _printed(("0105", "CERO UNO CERO CINCO"), ("05", "CERO CINCO"))
    lines = ["AD CERO UNO CERO CINCO", "MUD CERO CINCO"]
    score = acta_rows_right(words=["0105", "05,"], lines=lines, printed=printed)
    assert (score.digits, score.words) == (2, 2)


def test_words_must_be_whole_words_of_a_line_not_parts_of_longer_ones():
    printed = _printed(("0001", "CERO CERO CERO UNO"))
    score = acta_rows_right(words=["00012"], lines=["CERO CERO CERO UNOS"], printed=printed)
    assert (score.digits, score.words) == (0, 0)


def test_invoice_characters_count_truth_words_read_whole_and_ignore_edge_punctuation():
    right, total = characters_right(truth_words=["Total:", "4.11", "USD", "USD"], words=["TOTAL", "4.11", "USD"])
    assert (right, total) == (5 + 4 + 3, 5 + 4 + 3 + 3)
