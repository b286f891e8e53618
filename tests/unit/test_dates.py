"""Dates in a cited text: printed without separators, or run into a number where an OCR engine lost a space."""

from datetime import date

import pytest

from extraction.dates import dates_in_text
from extraction.grounding import supports


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("27032018", date(2018, 3, 27)),  # DDMMYYYY
        ("20180327", date(2018, 3, 27)),  # YYYYMMDD, ISO 8601's basic form
        ("Date: 27032018", date(2018, 3, 27)),
        ("Date:27032018", date(2018, 3, 27)),
        ("(27032018)", date(2018, 3, 27)),
    ],
)
def test_it_finds_a_date_printed_as_eight_digits(text, expected):
    assert dates_in_text(text) == {expected}


def test_an_eight_digit_date_supports_that_date_and_no_other():
    assert supports("2018-03-27", "27032018")
    assert not supports("2018-03-28", "27032018")
    assert not supports("2018-27-03", "27032018")


@pytest.mark.parametrize(
    "text",
    [
        "12345678",  # neither 12/34/5678 nor 1234-56-78 is a calendar date
        "31022018",  # 31 February
        "20181332",  # month 13
        "01010018",  # '0018' is no four-digit year
        "270320181",  # nine digits
        "1227032018",  # ten digits: a phone number or an id, not a date
        "INV20180327",  # in a word: an invoice number
        "0.27032018",  # a decimal
        "27032018.50",  # an amount
    ],
)
def test_eight_digits_that_are_not_a_calendar_date_or_stand_in_a_longer_run_are_not_a_date(text):
    assert dates_in_text(text) == set()


def test_it_finds_a_date_glued_to_the_number_printed_before_it():
    assert date(2018, 6, 1) in dates_in_text("#19536001/06/2018")
    assert supports("2018-06-01", "#19536001/06/2018")
    assert dates_in_text("No.12018-06-01") == {date(2018, 6, 1)}


def test_it_finds_a_date_glued_to_the_number_printed_after_it():
    assert date(2018, 6, 1) in dates_in_text("01/06/2018123456")
    assert dates_in_text("2018-06-01123") == {date(2018, 6, 1)}


def test_a_glued_date_is_read_only_in_its_fixed_width_form():
    assert dates_in_text("#1953601/6/2018") == set()  # an unpadded day: where does it start?
    assert dates_in_text("12301/06/18") == set()  # a two-digit year: '301/06/18' or '01/06/18'?
    assert dates_in_text("#1201/06/0018") == set()  # no four-digit year
    assert dates_in_text("1201/06/20181") == set()  # glued on both sides: neither end is known


def test_a_glued_date_does_not_support_another_date():
    assert not supports("2018-06-02", "#19536001/06/2018")
    assert not supports("2016-01-01", "#19536001/06/2018")
