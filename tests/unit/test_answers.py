"""Answer paths: setting one field leaves the answer it was given as it was."""

import copy

import pytest

from extraction.answers import get_value, set_field


def answer() -> dict:
    return {"acta_id": {"value": "1.2", "proof": [{"type": "LINE", "id": 1}]},
            "rows": [{"party": {"value": "A", "proof": []}, "votes": {"value": 3, "proof": [{"type": "LINE", "id": 2}]}},
                     {"party": {"value": "B", "proof": []}, "votes": {"value": 4, "proof": []}}],
            "note": "plain"}


def test_setting_a_field_changes_only_that_value_and_keeps_its_proof():
    before = answer()
    after = set_field(before, "rows[0].votes", 30)
    expected = answer()
    expected["rows"][0]["votes"]["value"] = 30
    assert after == expected
    assert after["rows"][0]["votes"]["proof"] == [{"type": "LINE", "id": 2}]


def test_the_answer_given_is_left_as_it_was_even_when_the_copy_is_changed_in_place():
    before = answer()
    pristine = copy.deepcopy(before)
    after = set_field(before, "rows[1].votes", 9)
    after["rows"][1]["votes"]["proof"].append({"type": "LINE", "id": 7})  # as taking a proof from the page does
    after["rows"][1]["party"] = {"value": "C", "proof": []}
    assert before == pristine and get_value(before, "rows[1].votes") == 4


def test_a_plain_leaf_is_replaced_and_a_missing_path_raises():
    assert set_field(answer(), "note", "other")["note"] == "other"
    for path in ("rows[5].votes", "missing", "note.deeper", "rows[0].votes.value.x"):
        with pytest.raises(KeyError):
            set_field(answer(), path, 1)
