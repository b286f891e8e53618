"""Dates in a cited text: printed without separators, or run into a number where an OCR engine lost a space."""

from datetime import date

import pytest

from extraction.proofs.grounding import supports
from extraction.values.dates import dates_in_text


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


# --- a date run into the time printed after it (the OCR lost the space between them) ----------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("15 Jun1808:34:31 PM", date(2018, 6, 15)),  # a month name, a two-digit year, then hh:mm:ss PM
        ("15 Jun 1808:34", date(2018, 6, 15)),  # 1808 is no year: the year is 18, the time 08:34
        ("15JUN1808:34:31PM", date(2018, 6, 15)),
        ("24 MAR 1809:12:41 PM", date(2018, 3, 24)),
        ("15/APR/1704:56:46", date(2017, 4, 15)),
        ("Jun 15, 1808:34", date(2018, 6, 15)),  # the month first
        ("15/06/1808:34", date(2018, 6, 15)),  # numeric, a two-digit year, then hh:mm
        ("Date:15/06/188:34 AM", date(2018, 6, 15)),  # a one-digit hour
        ("5/3/201822:52:33", date(2018, 3, 5)),  # a four-digit year, then hh:mm:ss
        ("5/3/20188:52", date(2018, 3, 5)),  # a four-digit year, then h:mm
    ],
)
def test_it_finds_a_date_run_into_a_time(text, expected):
    assert expected in dates_in_text(text)
    assert supports(expected.isoformat(), text)


def test_a_date_run_into_a_time_supports_that_date_and_no_other():
    assert dates_in_text("15 Jun1808:34:31 PM") == {date(2018, 6, 15)}
    assert not supports("2018-06-16", "15 Jun1808:34:31 PM")
    # the split leaves '2008' + ':34', which is no time: the year is 20 and the time 08:34, never 2008
    assert dates_in_text("15/06/2008:34") == {date(2020, 6, 15)}
    assert not supports("2008-06-15", "15/06/2008:34")


def test_where_both_splits_give_a_valid_time_both_dates_are_read():
    # '2017:10:30': a year 2017 then 10:30, or a year 20 then 17:10:30; the rules must not fire on a doubt
    # about where the OCR lost a space, so either date is shown
    assert dates_in_text("27/07/2017:10:30") == {date(2017, 7, 27), date(2020, 7, 27)}
    assert dates_in_text("27/07/17:10:30") == {date(2017, 7, 27)}  # a colon between the year and the time
    # a year parted from the month by a space is not read across a colon: '09' is the hour of 09:12:41
    assert dates_in_text("24 MAR 18 09:12:41 PM") == {date(2018, 3, 24)}


@pytest.mark.parametrize(
    "text",
    [
        "08:34:31 PM",  # a time alone
        "08:34",
        "1808:34",  # a number run into a time, no day or month before it
        "No.12345608:34",
        "Qty 15 1808:34",  # two numbers, no month
        "15 Foo1808:34",  # no month name
        "15 Jun1899:34",  # the split gives 99:34: no time, so no date
        "15 Jun1825:10",  # 25:10
        "15 Jun1808:61",  # 08:61
        "15 Jun1808:34:75",  # 08:34:75
        "15 Jun1813:34 PM",  # 13:34 PM
        "15/06/1899:34",  # numeric, 99:34
        "15/06/1825:10",
        "15/06/1808:345",  # a minute in three digits: no time
        "15 Jun 1808:34:31:22",  # a fourth part: no time
        "15 Jun12345608:34",  # seven digits before the colon: neither a year and an hour nor a year
        "15 Jun 09:12:41 PM",  # a date without its year, then a time: 09 after a space is the hour, no year
    ],
)
def test_a_time_or_a_number_run_into_a_time_is_no_date(text):
    assert dates_in_text(text) == set()
