"""Rules that compare: a condition in the expression language ('amount_due >= 0'), a field compared with another
field (plus days, for dates) or with a number, and arithmetic that cannot be computed on an answer, which is the
definition's problem: a warning when checked, and on such an answer a rule unchecked for a person, never silence."""

from __future__ import annotations

from decimal import Decimal

import pytest

from extraction.doctypes.defined.build import doctype_build
from extraction.doctypes.defined.check import DefinitionError, spec_parse, spec_warnings
from extraction.doctypes.defined.expressions import ExpressionError, parse_condition, parse_expression
from extraction.rules.violations import CHECK_UNFINISHED, RuleContext

CTX = RuleContext()


def F(value):  # noqa: N802 - reads like the prompt's F
    return {"value": value, "proof": []}


def utility_bill(*rules):
    return {
        "name": "utility_bill", "label": "Utility bill",
        "fields": [{"key": "account", "label": "Account number", "kind": "text"},
                   {"key": "period_start", "label": "Period start", "kind": "date"},
                   {"key": "period_end", "label": "Period end", "kind": "date"},
                   {"key": "issue_date", "label": "Issue date", "kind": "date"},
                   {"key": "due_date", "label": "Due date", "kind": "date"},
                   {"key": "previous_balance", "label": "Previous balance", "kind": "money"},
                   {"key": "new_charges", "label": "New charges", "kind": "money"},
                   {"key": "amount_due", "label": "Amount due", "kind": "money"},
                   {"key": "units", "label": "Units used", "kind": "count"}],
        "tables": [{"key": "lines", "label": "Lines", "columns": [
            {"key": "paid", "label": "Paid", "kind": "money"}, {"key": "due", "label": "Due", "kind": "money"}]}],
        "rules": list(rules),
    }


def bill(**values):
    answer = {"account": F("A-1"), "period_start": F("2024-03-01"), "period_end": F("2024-03-31"),
              "issue_date": F("2024-04-02"), "due_date": F("2024-04-30"), "previous_balance": F(10),
              "new_charges": F(40), "amount_due": F(50), "units": F(200),
              "lines": [{"paid": F(5), "due": F(5)}, {"paid": F(3), "due": F(4)}]}
    answer.update({k: F(v) for k, v in values.items() if k != "lines"})
    if "lines" in values:
        answer["lines"] = [{k: F(v) for k, v in row.items()} for row in values["lines"]]
    return answer


def broken(definition, answer) -> list:
    doctype = doctype_build(spec_parse(definition))
    parsed = doctype.parse_answer(answer)
    return [v for rule in doctype.rules for v in rule(parsed, CTX)]


ENDS_AFTER = {"code": "period_order", "label": "The period ends after it begins", "kind": "compare",
              "field": "period_end", "operator": ">", "other": "period_start",
              "message": "The period ends on {found}, which is not {expected}."}
DUE_WITHIN = {"code": "due_within", "label": "Due within 60 days of issue", "kind": "compare", "field": "due_date",
              "operator": "<=", "other": "issue_date", "offset": "60", "message": "Due {found}, not {expected}."}
NOT_NEGATIVE = {"code": "due_not_negative", "label": "Nothing negative is due", "kind": "condition",
                "expression": "amount_due >= 0", "message": "The amount due is {found}; it must be {expected}."}


# --- the language ---


@pytest.mark.parametrize("text,op", [("amount_due >= 0", ">="), ("a ≤ b + c", "<="), ("a != b", "!="), ("a=b", "=")])
def test_a_condition_is_two_expressions_and_one_comparison(text, op):
    assert parse_condition(text).op == op


@pytest.mark.parametrize("text,says", [("a + b", "a comparison"), ("a < b < c", "compares two expressions once"),
                                        ("a >=", "ends where"), ("a >= $", "unexpected")])
def test_a_condition_that_does_not_parse_says_why(text, says):
    with pytest.raises(ExpressionError, match=says):
        parse_condition(text)


def test_an_expression_rule_is_told_that_a_comparison_belongs_in_a_condition():
    with pytest.raises(ExpressionError, match="condition rule compares two"):
        parse_expression("a >= b")


# --- comparing fields ---


def test_a_period_that_ends_before_it_begins_is_caught_and_one_that_ends_after_is_not():
    assert broken(utility_bill(ENDS_AFTER), bill()) == []
    (v,) = broken(utility_bill(ENDS_AFTER), bill(period_end="2024-02-28"))
    assert v.message == "The period ends on 2024-02-28, which is not after 2024-03-01."
    assert (v.fields, v.subject) == (("period_end", "period_start"), "period_end")
    assert broken(utility_bill(ENDS_AFTER), bill(period_end="2024-03-01")) != []  # after, not on


def test_a_due_date_more_than_sixty_days_after_the_issue_is_caught():
    assert broken(utility_bill(DUE_WITHIN), bill(due_date="2024-05-31")) == []  # day 59
    (v,) = broken(utility_bill(DUE_WITHIN), bill(due_date="2024-06-02"))
    assert v.message == "Due 2024-06-02, not on or before 2024-06-01."


def test_a_number_is_compared_with_a_number_and_a_column_with_its_rows_other_column():
    at_least = {"code": "charges", "label": "Charges", "kind": "compare", "field": "new_charges", "operator": ">=",
                "value": "0", "message": "New charges {found} must be {expected}."}
    (v,) = broken(utility_bill(at_least), bill(new_charges=-3))
    assert v.message == "New charges -3 must be at least 0."
    paid = {"code": "paid", "label": "Paid at most due", "kind": "compare", "field": "lines.paid", "operator": "<=",
            "other": "lines.due", "message": "{row_label}: paid {found}, not {expected}."}
    (v,) = broken(utility_bill(paid), bill(lines=[{"paid": 5, "due": 5}, {"paid": 6, "due": 4}]))
    assert v.fields == ("lines[1].paid", "lines[1].due") and v.message == "Lines 2: paid 6, not at most 4."


def test_a_missing_value_leaves_a_comparison_nothing_to_say():
    assert broken(utility_bill(ENDS_AFTER, DUE_WITHIN, NOT_NEGATIVE), bill(period_end=None, due_date="", amount_due=None)) == []


def test_a_condition_says_what_users_say_of_their_documents():
    assert broken(utility_bill(NOT_NEGATIVE), bill()) == []
    (v,) = broken(utility_bill(NOT_NEGATIVE), bill(amount_due=-12))
    assert v.message == "The amount due is -12; it must be at least 0." and v.subject == "amount_due"
    closes = {"code": "due_closes", "label": "Balance plus charges", "kind": "condition",
              "expression": "amount_due = previous_balance + new_charges", "message": "Due {found}, {expected}."}
    (v,) = broken(utility_bill(closes), bill(amount_due=55))
    assert v.message == "Due 55, equal to 50.00." and set(v.fields) == {"amount_due", "previous_balance", "new_charges"}


def test_a_condition_over_a_tables_columns_holds_row_by_row():
    rows = {"code": "paid_rows", "label": "Paid at most due", "kind": "condition", "expression": "lines.paid <= lines.due",
            "message": "{row_label}: paid {found}, {expected}."}
    (v,) = broken(utility_bill(rows), bill(lines=[{"paid": 9, "due": 4}, {"paid": 1, "due": 4}]))
    assert v.fields == ("lines[0].paid", "lines[0].due") and v.message == "Lines 1: paid 9, at most 4."


# --- what cannot be computed is the definition's problem ---


PER_UNIT = {"code": "per_unit", "label": "Price per unit is sane", "kind": "condition",
            "expression": "new_charges / units <= 2", "message": "{found} per unit."}


def test_a_division_by_zero_on_an_answer_leaves_the_rule_unchecked_for_a_person_not_passed():
    assert broken(utility_bill(PER_UNIT), bill()) == []
    (v,) = broken(utility_bill(PER_UNIT), bill(units=0))
    assert v.code == CHECK_UNFINISHED and v.unchecked
    assert "divides by units, which is 0 here" in v.message and v.message.startswith("Price per unit is sane")
    share = {"code": "share", "label": "Share", "kind": "expression", "field": "amount_due",
             "expression": "new_charges / units * 100", "message": "x"}
    (v,) = broken(utility_bill(share), bill(units=0))
    assert v.code == CHECK_UNFINISHED and "divides by units" in v.message


def test_checking_a_definition_warns_of_a_division_an_answer_can_make_zero_with_that_answer():
    (warning,) = spec_warnings(spec_parse(utility_bill(PER_UNIT)))
    assert warning.startswith("rule 'per_unit': new_charges / units <= 2 divides by units")
    assert "for example new_charges = 0, units = 0" in warning
    safe = {**PER_UNIT, "expression": "new_charges <= units * 2"}
    assert spec_warnings(spec_parse(utility_bill(safe))) == []


@pytest.mark.parametrize("rule,says", [
    ({"field": "period_end", "operator": ">", "value": "3"}, "for a fixed date use a date_range rule"),
    ({"field": "period_end", "other": "period_start"}, "it needs its comparison"),
    ({"field": "period_end", "operator": ">"}, "with another field or with a number"),
    ({"field": "period_end", "operator": ">", "other": "amount_due"}, "must be date"),
    ({"field": "amount_due", "operator": ">", "other": "lines.due"}, "compare it with a single field"),
    ({"field": "period_end", "operator": ">", "other": "period_start", "offset": "1.5"}, "a whole number"),
])
def test_a_comparison_that_cannot_work_is_refused_in_words(rule, says):
    with pytest.raises(DefinitionError) as err:
        spec_parse(utility_bill({"code": "c", "label": "C", "kind": "compare", "message": "m", **rule}))
    assert says in str(err.value)


def test_a_condition_naming_an_unknown_field_is_refused_in_words():
    with pytest.raises(DefinitionError, match="its condition's field 'amount_dew' is not a field of this type"):
        spec_parse(utility_bill({**NOT_NEGATIVE, "expression": "amount_dew >= 0"}))


def test_money_compares_exactly():
    (v,) = broken(utility_bill({**NOT_NEGATIVE, "expression": "amount_due >= 0.01"}), bill(amount_due="0.00"))
    assert v.found == 0 or Decimal(str(v.found)) == 0
