"""Expected values an admin uploads (pure): JSON nested as the answer or flat by path, CSV by path; a file that
cannot be read says why in words."""

from __future__ import annotations

import pytest

from extraction.evaluation.expected import ExpectedError, answer_flat, expected_parse


def test_json_nested_as_the_answer_reads_as_paths():
    data = b'{"bill.pdf": {"amount_due": 50, "items": [{"price": 4.5}, {"price": null}]}}'
    assert expected_parse(name="values.json", data=data) == {
        "bill.pdf": {"amount_due": 50, "items[0].price": 4.5, "items[1].price": None}}


def test_a_json_list_of_files_with_flat_paths_reads_the_same():
    data = b'[{"file": "bill.pdf", "expected": {"items[0].price": 4.5}}]'
    assert expected_parse(name="v.JSON", data=data) == {"bill.pdf": {"items[0].price": 4.5}}


def test_csv_reads_a_row_per_document_and_an_empty_cell_as_no_value():
    data = "\ufefffile,total,items[0].price\na.pdf,12.50,\nb.pdf,3\n\n".encode()
    assert expected_parse(name="v.csv", data=data) == {"a.pdf": {"total": "12.50", "items[0].price": None},
                                                       "b.pdf": {"total": "3", "items[0].price": None}}


def test_an_answers_proved_leaves_read_as_their_values():
    answer = {"total": {"value": 5, "proof": [{"type": "LINE", "id": 3}]}, "rows": [{"v": {"value": 1, "proof": []}}]}
    assert answer_flat(answer) == {"total": 5, "rows[0].v": 1}


@pytest.mark.parametrize(("name", "data", "said"), [
    ("v.json", b"{not json", "is not valid JSON"),
    ("v.json", b"[1]", 'entry 1 needs a "file"'),
    ("v.json", b'{"a.pdf": 3}', "the values of a.pdf are not an object"),
    ("v.csv", b"name,total\na.pdf,1\n", 'the first column\'s header is "file"'),
    ("v.csv", b"file,total,\na.pdf,1,2\n", "every column after \"file\" is headed"),
    ("v.csv", b"file,total\na.pdf,1,2\n", "line 2 has more cells"),
    ("v.txt", b"{}", "come as a .json or a .csv"),
    ("v.json", b"{}", "names no document"),
    ("v.csv", b"\xff\xfe", "is not UTF-8"),
])
def test_a_file_that_cannot_be_read_says_why(name, data, said):
    with pytest.raises(ExpectedError, match=said):
        expected_parse(name=name, data=data)
