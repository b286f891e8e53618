"""Answer paths: setting one field leaves the answer it was given as it was; one path is checked as a walk
of every path would check it."""

import copy

import pytest

from extraction.rules.answers import get_value, is_proved_path, proved_paths, set_field


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


def test_a_path_is_a_proved_field_exactly_when_walking_every_field_finds_it():
    nested = {"a": {"value": {"value": 1}, "proof": []}, "t": [[{"value": 2}], {"3": {"value": 4, "proof": []}}],
              "weird": {"x.y": {"value": 5}}}
    for data in (answer(), nested, [{"value": 1}], {"value": 1, "proof": []}, {}):
        listed = proved_paths(data)
        tried = {*listed, "", "rows", "rows[0]", "rows[0].votes.value", "rows[00].votes", "rows.0.votes",
                 "rows[2].votes", "rows[-1].votes", "rows[0]votes", " rows[0].votes", "note", "a.value",
                 "t[0][0]", "t[1].3", "t[1][3]", "weird.x.y", "[0]", "[1]", "acta_id"}
        for path in tried:
            # a key holding a dot cannot be spelled as a path: no edit reaches it (set_field cannot either)
            expected = path in listed and path != "weird.x.y"
            assert is_proved_path(data, path) == expected, (data, path)
