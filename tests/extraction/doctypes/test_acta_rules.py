"""Rules of the `acta` type: digits vs words, sums, counts, id, row layout and row proofs."""

from __future__ import annotations

import copy

import pytest

from extraction.doctypes.acta import DOCTYPE
from extraction.doctypes.acta.layout import DIGIT_WORDS, PARTIES
from extraction.doctypes.acta.rules import ACTA_ID_PATTERN
from extraction.ocr.blocks import BBox, BlockType, OcrBlock
from extraction.ocr.tagged_text import PromptDocument
from extraction.reading.validation import make_validator, run_rules
from extraction.rules.answers import set_field
from extraction.rules.violations import RuleContext
from tests.support.pages import SQUARE


def words(n: int) -> str:
    return " ".join(DIGIT_WORDS[int(d)] for d in f"{n:04d}")


def proved(value, line: int | None = None):
    return {"value": value, "proof": [{"type": "LINE", "id": line}] if line else []}


def acta_answer(votes: list[int] | None = None, null: int = 3) -> dict:
    votes = votes if votes is not None else [(i * 7) % 20 for i in range(len(PARTIES))]
    valid = sum(votes)
    return {
        "acta_id": proved("050201001.01"),
        "rows": [
            {"party": p, "votes": proved(v), "votes_words": proved(words(v))}
            for p, v in zip(PARTIES, votes, strict=True)
        ],
        "valid_votes": proved(valid),
        "valid_votes_words": proved(words(valid)),
        "null_votes": proved(null),
        "null_votes_words": proved(words(null)),
        "total_votes": proved(valid + null),
        "total_votes_words": proved(words(valid + null)),
    }


def check(answer: dict, ctx: RuleContext | None = None):
    return run_rules(answer, ctx or RuleContext(), DOCTYPE.rules)


def codes(violations) -> list[str]:
    return [v.code for v in violations]


def test_a_consistent_acta_breaks_no_rule():
    assert check(acta_answer()) == []


def test_it_flags_a_row_whose_digits_and_words_disagree_with_a_specific_message():
    answer = acta_answer()
    answer = set_field(answer, "rows[6].votes", 56)
    answer = set_field(answer, "rows[6].votes_words", "CINCO SIETE")
    found = [v for v in check(answer) if v.code == "row_digits_words_mismatch"]
    assert len(found) == 1
    assert found[0].message == "Row 7 (MEP): digits say 56 but words say CINCO SIETE = 57"
    assert found[0].fields == ("rows[6].votes", "rows[6].votes_words")
    assert found[0].expected == 56 and found[0].found == "CINCO SIETE = 57"


def test_it_reads_digit_words_with_leading_zeros_accents_and_one_ocr_slip():
    answer = set_field(acta_answer([0] * 38, null=0), "rows[0].votes", 56)
    answer = set_field(answer, "rows[0].votes_words", "cero cero CINC0 séis")
    assert "row_digits_words_mismatch" not in codes(check(answer))


def test_it_flags_words_that_are_not_digit_words():
    answer = set_field(acta_answer(), "rows[2].votes_words", "CINCUENTA Y SEIS")
    found = [v for v in check(answer) if v.code == "row_digits_words_mismatch"]
    assert found and "not Spanish digit words" in found[0].message and "Row 3 (TUPAMARO)" in found[0].message


def test_it_flags_a_total_whose_words_disagree():
    answer = set_field(acta_answer(), "null_votes_words", words(4))
    found = [v for v in check(answer) if v.code == "total_digits_words_mismatch"]
    assert [v.fields for v in found] == [("null_votes", "null_votes_words")]
    assert "Null votes: digits say 3" in found[0].message


def test_it_flags_party_votes_that_do_not_add_up_to_valid_votes():
    answer = acta_answer()
    valid = answer["valid_votes"]["value"]
    answer = set_field(answer, "rows[0].votes", answer["rows"][0]["votes"]["value"] + 6)
    answer = set_field(answer, "rows[0].votes_words", words(answer["rows"][0]["votes"]["value"]))
    found = [v for v in check(answer) if v.code == "sum_valid_votes"]
    assert len(found) == 1
    assert (
        found[0].message == f"Party votes add up to {valid + 6} but valid votes say {valid} (difference +6)"
    )
    assert found[0].expected == valid and found[0].found == valid + 6
    assert "rows[37].votes" in found[0].fields and "valid_votes" in found[0].fields


def test_it_flags_valid_plus_null_not_making_the_total():
    answer = acta_answer()
    valid = answer["valid_votes"]["value"]
    answer = set_field(answer, "total_votes", valid + 2)
    answer = set_field(answer, "total_votes_words", words(valid + 2))
    found = [v for v in check(answer) if v.code == "valid_plus_null_total"]
    assert (
        found[0].message
        == f"Valid votes {valid} + null votes 3 = {valid + 3}, but total votes say {valid + 2}"
    )


def test_it_flags_negative_counts():
    answer = set_field(acta_answer(), "null_votes", -1)
    found = [v for v in check(answer) if v.code == "negative_count"]
    assert found[0].fields == ("null_votes",) and "cannot be negative" in found[0].message


def test_it_flags_a_count_that_is_not_a_whole_number():
    answer = set_field(acta_answer(), "rows[4].votes", "12.5")
    assert "count_not_integer" in codes(check(answer))


@pytest.mark.parametrize("code", ["050201001.01", "181103005.01"])
def test_a_code_as_the_real_sheets_print_it_breaks_no_rule(code):
    # DESIGN.md: real codes published with their QR are 9 digits, a dot, 2 digits.
    assert check(set_field(acta_answer(), "acta_id", code)) == []


@pytest.mark.parametrize("bad", ["05020100101", "050201001.1", "05020100.101", "050201001-01", "ACTA 1",
                                 "201301006.01.1.0001"])
def test_it_flags_a_code_not_of_the_real_form(bad):
    # The last one is the form only our old generator printed: no real sheet has it.
    found = [v for v in check(set_field(acta_answer(), "acta_id", bad)) if v.code == "acta_id_format"]
    assert found and found[0].found == bad and "050201001.01" in found[0].message
    assert "9 digits, a dot, 2 digits" in found[0].message


def test_the_acta_id_pattern_is_nine_digits_a_dot_and_two_digits():
    assert ACTA_ID_PATTERN.match("123456789.12")
    assert not ACTA_ID_PATTERN.match("123456789.12.1.1234")


def test_the_prompt_asks_for_the_real_form_and_says_the_label_varies():
    assert "9 digits, a dot, 2 digits (like 050201001.01)" in DOCTYPE.system_prompt
    assert "label before it differs" in DOCTYPE.system_prompt and ".1.0001" not in DOCTYPE.system_prompt


def test_it_flags_missing_rows_and_a_row_out_of_order():
    answer = acta_answer()
    short = copy.deepcopy(answer)
    short["rows"] = short["rows"][:37]
    assert any(v.code == "rows_layout" and v.found == 37 for v in check(short))
    swapped = copy.deepcopy(answer)
    swapped["rows"][0]["party"], swapped["rows"][1]["party"] = "PCV", "PSUV"
    found = [v for v in check(swapped) if v.code == "rows_layout"]
    assert [v.fields for v in found] == [("rows[0].party",), ("rows[1].party",)]


def test_it_flags_a_missing_count():
    answer = set_field(acta_answer(), "rows[10].votes", None)
    found = [v for v in check(answer) if v.code == "missing_value"]
    assert found[0].fields == ("rows[10].votes",) and "Row 11 (EV)" in found[0].message


def test_it_flags_a_row_that_cites_another_partys_line():
    blocks = [
        OcrBlock(
            page_size=SQUARE,
            id="l1", type=BlockType.LINE, page=1, text="PSUV 12 CERO CERO UNO DOS", bbox=BBox(0, 0, 1, 0.1)
        ),
        OcrBlock(
            page_size=SQUARE,
            id="l2", type=BlockType.LINE, page=1, text="PCV 12 CERO CERO UNO DOS", bbox=BBox(0, 0.1, 1, 0.1)
        ),
    ]
    ctx = RuleContext(prompt=PromptDocument(text="", line_ids={1: "l1", 2: "l2"}), blocks=blocks)
    answer = acta_answer()
    answer["rows"][1]["votes"]["proof"] = [{"type": "LINE", "id": 1}]  # PCV's votes cite PSUV's line
    answer["rows"][0]["votes"]["proof"] = [{"type": "LINE", "id": 1}]
    found = [v for v in check(answer, ctx) if v.code == "row_proof_party"]
    assert [v.fields for v in found] == [("rows[1].votes",)]
    assert "party PSUV, not of PCV" in found[0].message


def tilted_rows(slope: float) -> list[OcrBlock]:
    """Two party rows of a scan turned by `slope` (dy per dx): party, digit words, digits from left to right,
    each word lower the further right it stands, so a row's digits sit level with the next row's party."""
    blocks = []
    for r, (party, digits, spelled) in enumerate([("PSUV", "0012", "CERO CERO UNO DOS"),
                                                   ("PCV", "0003", "CERO CERO CERO TRES")]):
        top = 0.17 + 0.022 * r
        runs = [(party.split(), 0.08), (spelled.split(), 0.18), ([digits], 0.45)]
        for n, (texts, left) in enumerate(runs):
            line = f"r{r}l{n}"
            boxes = [BBox(left + 0.06 * k, top + slope * (left + 0.06 * k + 0.025), 0.05, 0.017)
                     for k in range(len(texts))]
            blocks.append(OcrBlock(page_size=SQUARE, id=line, type=BlockType.LINE, page=1, text=" ".join(texts),
                                   bbox=BBox.enclosing(boxes)))
            blocks += [OcrBlock(page_size=SQUARE, id=f"{line}w{k}", type=BlockType.WORD, page=1, text=t, bbox=b, parent=line)
                       for k, (t, b) in enumerate(zip(texts, boxes, strict=True))]
    return blocks


def test_on_a_tilted_scan_a_row_reads_its_own_party_not_the_next_row_level_with_its_digits():
    blocks = tilted_rows(slope=0.037)
    ids = {1: "r0l2", 2: "r1l2", 3: "r0l1", 4: "r1l1"}
    ctx = RuleContext(prompt=PromptDocument(text="", line_ids=ids), blocks=blocks)
    answer = acta_answer()
    for row, (digits_line, words_line) in enumerate([(1, 3), (2, 4)]):
        answer["rows"][row]["votes"]["proof"] = [{"type": "LINE", "id": digits_line}]
        answer["rows"][row]["votes_words"]["proof"] = [{"type": "LINE", "id": words_line}]
    assert [v for v in check(answer, ctx) if v.code == "row_proof_party"] == []
    moved = copy.deepcopy(answer)
    moved["rows"][1]["votes"]["proof"] = [{"type": "LINE", "id": 1}]  # PCV's votes read off PSUV's row
    found = [v for v in check(moved, ctx) if v.code == "row_proof_party"]
    assert [(v.fields, v.found) for v in found] == [(("rows[1].votes",), "PSUV")]


def test_a_party_name_whose_space_the_ocr_lost_is_still_the_rows_own():
    # two columns: PSUV's row at the left, EL CAMBIO's at the right, read as one word
    blocks = [
        OcrBlock(page_size=SQUARE, id="l1", type=BlockType.LINE, page=1, text="PSUV 0012", bbox=BBox(0.05, 0.2, 0.3, 0.02)),
        OcrBlock(page_size=SQUARE, id="l2", type=BlockType.LINE, page=1, text="ELCAMBIO", bbox=BBox(0.5, 0.2, 0.15, 0.02)),
        OcrBlock(page_size=SQUARE, id="l3", type=BlockType.LINE, page=1, text="0003", bbox=BBox(0.7, 0.2, 0.05, 0.02)),
    ]
    ctx = RuleContext(prompt=PromptDocument(text="", line_ids={1: "l1", 2: "l2", 3: "l3"}), blocks=blocks)
    answer = acta_answer()
    row = PARTIES.index("EL CAMBIO")
    answer["rows"][row]["votes"]["proof"] = [{"type": "LINE", "id": 3}]
    assert [v for v in check(answer, ctx) if v.code == "row_proof_party"] == []
    une = PARTIES.index("UNE")
    answer["rows"][une]["votes"]["proof"] = [{"type": "LINE", "id": 3}]  # UNE's votes read off this row
    assert [v.fields for v in check(answer, ctx) if v.code == "row_proof_party"] == [(f"rows[{une}].votes",)]


def test_the_validator_runs_the_schema_first_and_reports_the_path():
    validate = make_validator(DOCTYPE, RuleContext())
    answer = set_field(acta_answer(), "rows[3].votes", "many")
    found = validate(answer)
    assert codes(found) == ["schema"] and found[0].fields == ("rows[3].votes",)


# --- the degenerate answer (DESIGN.md's seed study: all zeros after a failed round) ----------------------


def sheet_lines(*texts: str) -> list[OcrBlock]:
    return [OcrBlock(page_size=SQUARE, id=f"l{i}", type=BlockType.LINE, page=1, text=t, bbox=BBox(0.1, 0.02 * i, 0.5, 0.02))
            for i, t in enumerate(texts, start=1)]


def test_an_all_zero_answer_is_flagged_as_degenerate_when_the_sheet_prints_votes():
    zeros = acta_answer(votes=[0] * len(PARTIES), null=0)
    ctx = RuleContext(blocks=sheet_lines("PSUV 0012 CERO CERO UNO DOS", "PCV 0000 CERO CERO CERO CERO"))
    found = [v for v in check(zeros, ctx) if v.code == "degenerate_answer"]
    assert len(found) == 1 and found[0].degenerate
    assert "rows[0].votes" in found[0].fields and "valid_votes" in found[0].fields
    # 0 = 0 closes every sum: no other rule sees it
    assert [v for v in check(zeros, ctx) if v.code in ("sum_valid_votes", "valid_plus_null_total")] == []


def test_an_empty_answer_is_degenerate_too():
    empty = acta_answer()
    for path in ["valid_votes", "null_votes", "total_votes"] + [f"rows[{i}].votes" for i in range(len(PARTIES))]:
        empty = set_field(empty, path, None)
    ctx = RuleContext(blocks=sheet_lines("TOTAL VOTOS 0145 CERO UNO CUATRO CINCO"))
    assert "degenerate_answer" in codes(check(empty, ctx))


def test_a_sheet_where_nobody_voted_may_be_answered_with_zeros():
    zeros = acta_answer(votes=[0] * len(PARTIES), null=0)
    ctx = RuleContext(blocks=sheet_lines("PSUV 000 CERO CERO CERO", "VOTOS NULOS 000 CERO CERO CERO"))
    assert "degenerate_answer" not in codes(check(zeros, ctx))


def test_one_nonzero_count_is_not_degenerate():
    votes = [0] * len(PARTIES)
    votes[5] = 3
    ctx = RuleContext(blocks=sheet_lines("PODEMOS 0003 CERO CERO CERO TRES"))
    assert "degenerate_answer" not in codes(check(acta_answer(votes=votes, null=0), ctx))
