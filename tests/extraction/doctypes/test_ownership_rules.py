"""Rules of the `ownership` type: shares read exactly and add up to exactly 1."""

from __future__ import annotations

from fractions import Fraction

import pytest

from extraction.doctypes.ownership import DOCTYPE
from extraction.reading.validation import make_validator, run_rules
from extraction.rules.violations import RuleContext
from extraction.values.numbers import parse_fraction


def p(value):
    return {"value": value, "proof": []}


def ownership(*shares) -> dict:
    return {
        "property": {"id": p("12-345-678"), "description": p("Calle Mayor 5, Madrid")},
        "owners": [{"name": p(f"Owner {i}"), "fraction": p(s)} for i, s in enumerate(shares, 1)],
    }


def check(answer: dict):
    return run_rules(answer, RuleContext(), DOCTYPE.rules)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1/3", Fraction(1, 3)),
        ("33.33%", Fraction(3333, 10000)),
        ("33,33 %", Fraction(3333, 10000)),
        (0.5, Fraction(1, 2)),
        ("0.5", Fraction(1, 2)),
        (1, Fraction(1)),
        ("100%", Fraction(1)),
    ],
)
def test_it_reads_shares_exactly(value, expected):
    assert parse_fraction(value) == expected


@pytest.mark.parametrize("shares", [("1/3", "1/3", "1/3"), (0.5, "50%"), ("1/2", "1/4", "25%"), ("100%",)])
def test_shares_that_add_up_to_exactly_one_pass(shares):
    assert check(ownership(*shares)) == []


def test_three_rounded_thirds_do_not_add_up_to_exactly_one_and_the_message_says_why():
    found = [v for v in check(ownership("33.33%", "33.33%", "33.33%")) if v.code == "fractions_sum"]
    assert len(found) == 1
    assert found[0].message.startswith(
        "Owner shares add up to 9999/10000 (99.99%), not exactly 1: 33.33% + 33.33% + 33.33%"
    )
    assert "Rounded shares such as 33.33% do not add up to exactly 100%" in found[0].message
    assert found[0].expected == 1 and found[0].found == "9999/10000"
    assert found[0].fields == ("owners[0].fraction", "owners[1].fraction", "owners[2].fraction")


def test_shares_far_from_one_are_flagged_without_the_rounding_hint():
    found = [v for v in check(ownership("1/2", "1/4")) if v.code == "fractions_sum"]
    assert found[0].message == "Owner shares add up to 3/4 (75%), not exactly 1: 1/2 + 1/4"


def test_it_flags_a_share_that_is_not_a_fraction():
    found = [v for v in check(ownership("half", "1/2")) if v.code == "fraction_parse"]
    assert found[0].fields == ("owners[0].fraction",) and "'half' is not a fraction" in found[0].message
    assert "fractions_sum" not in [v.code for v in check(ownership("half", "1/2"))]


def test_it_flags_a_share_above_one():
    found = [v for v in check(ownership("150%")) if v.code == "fraction_range"]
    assert found and "150%" in found[0].message


def test_it_flags_no_owners_and_an_unidentified_property():
    answer = {"property": {"id": p(None), "description": p(None)}, "owners": []}
    assert [v.fields for v in check(answer)] == [("property.id", "property.description"), ("owners",)]


def test_the_schema_keeps_a_share_as_written():
    answer = DOCTYPE.parse_answer(ownership("1/3", 0.5, 1))
    assert [o["fraction"]["value"] for o in answer["owners"]] == ["1/3", 0.5, 1]
    assert make_validator(DOCTYPE, RuleContext())(answer)[0].code == "fractions_sum"
