"""Scoring a run against people (pure): what counts as the same value, each document's outcome, each rule's
precision and recall, and the sentences that say a candidate is worse."""

from __future__ import annotations

from decimal import Decimal

import pytest

from extraction.evaluation.scoring import DocumentRun, comparison_warnings, field_kind, run_score, same_value


@pytest.mark.parametrize(("found", "expected"), [(12.5, "12.50"), ("1,250.00", 1250), (None, ""), ("A  B", "A B"),
                                                 ("2024-03-01", "2024-03-01")])
def test_a_value_equals_the_persons_in_any_spelling_of_the_same_amount_or_text(found, expected):
    assert same_value(found, expected)


@pytest.mark.parametrize(("found", "expected"), [(8, "12.50"), (None, 0), ("Corner", "CORNER"), (True, 1)])
def test_a_different_amount_text_or_an_empty_value_is_not_the_persons(found, expected):
    assert not same_value(found, expected)


def test_a_tables_rows_are_one_field():
    assert field_kind("items[12].price") == "items[].price" and field_kind("total") == "total"


def _doc(item: int, status: str, found: dict, expected: dict, fired: dict | None = None) -> DocumentRun:
    return DocumentRun(item=item, name=f"d{item}", status=status, found=found, expected=expected, fired=fired or {},
                       cost=Decimal("0.01"), seconds=2.0)


def test_each_document_gets_its_outcome_from_its_status_and_its_values():
    right, wrong = {"total": 5}, {"total": 6}
    score = run_score([_doc(1, "passed", right, right), _doc(2, "passed", wrong, right),
                       _doc(3, "flagged", right, right), _doc(4, "flagged", wrong, right),
                       _doc(5, "failed", {}, right), _doc(6, "queued", {}, right)])
    assert score.outcomes == {"passed_right": 1, "false_pass": 1, "needless_review": 1, "caught": 1, "failed": 1}
    assert (score.documents, score.done) == (6, 5)
    assert score.fields == {"total": (2, 4)}  # the failed and the unread documents are not counted as read


def test_a_row_people_removed_or_one_the_reading_missed_is_a_wrong_value():
    people = {"items[0].price": 4.5}
    extra = _doc(1, "passed", {"items[0].price": 4.5, "items[1].price": 8}, people)
    missed = _doc(2, "passed", {}, people)
    assert extra.wrong_paths() == ["items[1].price"] and missed.wrong_paths() == ["items[0].price"]


def test_a_rule_that_cries_wolf_has_low_precision_and_one_that_misses_low_recall():
    people = {"total": 10, "date": "2024-01-01"}
    wrong_total = {"total": 11, "date": "2024-01-01"}
    runs = [
        _doc(1, "flagged", wrong_total, people, {"sum": ["total"], "date_rule": ["date"]}),  # date_rule: a false alarm
        _doc(2, "flagged", people, people, {"date_rule": ["date"]}),  # a false alarm on a right document
        _doc(3, "passed", wrong_total, people),  # nothing fired: both rules missed it
    ]
    rules = run_score(runs, rule_codes=["quiet"]).as_dict()["rules"]
    assert rules["sum"] | {} == {"fired": 1, "right_alarms": 1, "caught": 1, "wrong": 2, "precision": 1.0,
                                 "recall": 0.5}
    assert (rules["date_rule"]["precision"], rules["date_rule"]["recall"]) == (0.0, 0.5)
    assert rules["quiet"] == {"fired": 0, "right_alarms": 0, "caught": 0, "wrong": 2, "precision": None,
                              "recall": 0.0}


def test_cost_and_time_are_per_document_read():
    figures = run_score([_doc(1, "passed", {}, {}), _doc(2, "passed", {}, {}), _doc(3, "failed", {}, {})]).as_dict()
    assert (figures["cost_per_document"], figures["seconds_per_document"]) == ("0.010000", 2.0)


def _finished(fields: dict, false_passes: int) -> dict:
    return {"documents": 2, "done": 2, "outcomes": {"false_pass": false_passes}, "fields": fields}


def test_a_candidate_that_reads_a_field_worse_or_lets_more_wrong_values_pass_is_said_to_be_worse():
    live = _finished({"total": {"right": 2, "compared": 2, "accuracy": 1.0}}, 0)
    worse = _finished({"total": {"right": 1, "compared": 2, "accuracy": 0.5}}, 1)
    assert comparison_warnings(worse, live, candidate_name="v2", live_name="v1") == [
        "v2 reads total right less often: 1 of 2 against 2 of 2 for v1.",
        "v2 lets 1 document with a wrong value pass, where v1 lets 0."]
    assert comparison_warnings(live, worse, candidate_name="v1", live_name="v2") == []


def test_nothing_is_said_of_a_comparison_still_being_read():
    live = _finished({}, 0)
    reading = {**_finished({}, 2), "done": 1}
    assert comparison_warnings(reading, live, candidate_name="v2", live_name="v1") == []
