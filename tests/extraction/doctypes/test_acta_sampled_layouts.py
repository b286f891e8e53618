"""Sheets in the two conventions that made right readings fail (issue 25), read the production way from their
text layer: counts in group-merged cells, and counts printed one digit per box. A right reading passes every
rule, and the error a rule exists for is still caught."""

from __future__ import annotations

import pytest

from extraction.doctypes.registry import get_doctype
from extraction.ocr import pdf_text
from extraction.ocr.blocks import SourceDocument
from extraction.reading.context import reading_context
from extraction.reading.validation import make_validator
from sheetgen.sampled import generate_sampled
from tests.support.acta_answers import correct_answer, swap_rows

GROUP_MERGED = 3  # names and digit words ruled only around each candidate's group, digits ruled per row
COMB = 94  # every count printed one digit per box


def read(seed: int, tmp_path, *, split_cells: bool = True, monkeypatch=None):
    sheet = generate_sampled(seed)
    if not split_cells:  # the table finder's cells as it gives them: one cell over each group
        monkeypatch.setattr(pdf_text, "split_spanning_cells", lambda cells, boxes, skew: list(cells))
    path = tmp_path / f"sheet-{seed}.pdf"
    path.write_bytes(sheet.pdf_bytes)
    pages = pdf_text.PdfTextEngine().read(SourceDocument(path=path, kind="pdf", pages=[]))
    acta = get_doctype("acta")
    ctx = reading_context(doctype=acta, input_mode="text", pages=pages)
    answer = acta.parse_answer(correct_answer(ctx.prompt.text, sheet.printed))
    return sheet, ctx, answer, make_validator(acta, ctx)


def test_the_sheets_have_the_conventions_these_tests_are_about():
    merged = generate_sampled(GROUP_MERGED).conventions
    assert (merged.names, merged.words, merged.numbers) == ("merged-group", "merged-group", "padded")
    assert generate_sampled(COMB).conventions.numbers == "comb"


def test_the_prompt_gives_each_row_of_a_group_merged_cell_its_own_cell(tmp_path):
    sheet, ctx, _, _ = read(GROUP_MERGED, tmp_path)
    rows = {line.split("|")[1]: line for line in ctx.prompt.text.splitlines() if line.startswith("|")}
    for row in sheet.printed["rows"]:
        assert rows[row["party"]] == f"|{row['party']}|{row['votes_text']}|{row['votes_words']}"


@pytest.mark.parametrize("split_cells", [True, False], ids=["cells split by rows", "cells as the finder gives them"])
def test_a_right_reading_of_group_merged_cells_passes_every_rule(tmp_path, monkeypatch, split_cells):
    _, _, answer, validate = read(GROUP_MERGED, tmp_path, split_cells=split_cells, monkeypatch=monkeypatch)
    assert validate(answer) == []


def test_a_vote_moved_within_a_group_merged_cell_is_still_caught(tmp_path, monkeypatch):
    sheet, _, answer, validate = read(GROUP_MERGED, tmp_path, split_cells=False, monkeypatch=monkeypatch)
    a, b = next((a, b) for a in range(13) for b in range(13)
                if sheet.printed["rows"][a]["votes"] != sheet.printed["rows"][b]["votes"])
    broken = validate(swap_rows(answer, a, b, with_proofs=False))
    assert {f"rows[{a}].votes_words", f"rows[{b}].votes_words"} <= {f for v in broken for f in v.fields}


def test_a_right_reading_of_counts_printed_one_digit_per_box_passes_every_rule(tmp_path):
    sheet, ctx, answer, validate = read(COMB, tmp_path)
    assert any(row["votes"] >= 10 for row in sheet.printed["rows"])
    assert validate(answer) == []


def test_a_digit_dropped_from_a_count_printed_one_digit_per_box_is_not_shown_by_it(tmp_path):
    sheet, ctx, answer, validate = read(COMB, tmp_path)
    i = next(i for i, row in enumerate(sheet.printed["rows"]) if row["votes"] >= 10)
    answer["rows"][i]["votes"]["value"] = int(str(sheet.printed["rows"][i]["votes"])[1:])  # 55 read as 5
    broken = validate(answer)
    assert any(v.code == "value_grounded" and v.fields == (f"rows[{i}].votes",) for v in broken)
