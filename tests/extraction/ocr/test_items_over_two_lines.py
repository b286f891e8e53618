"""A form that prints one item over two lines (a party's name and digits, its words on the next line; the name
alone on its line, its figures under it) is read as one row by the row anchor, the proof rules and the offline
reader: found from the words' order and indentation (extraction/ocr/page_rows.py `PageRows.head_of`), never from a
table. The sheets are thermal strips laid out in points (tests/support/generated_pages.py)."""

from __future__ import annotations

import pytest

from extraction.doctypes.acta.template_reader import read_acta
from extraction.doctypes.registry import get_doctype
from extraction.ocr.blocks import BlockType
from extraction.ocr.page_rows import PageRows, page_skew
from extraction.reading.context import reading_context
from extraction.reading.prompt import render_prompt
from extraction.reading.validation import make_validator
from tests.support.generated_pages import Style, answer_of, lay_out, place, placements

ACTA = get_doctype("acta")
COUNTS = [(7 * i + 3) % 1000 for i in range(38)]


def strip(structure: str, *, order: str = "digits-words", leader: str = "dots", blocks: int = 1):
    style = Style(size=8.0, advance=0.6, ascent=1.0, pitch=1.35, space=0.6, numbers="padded", comb_pitch=1.5,
                  digit_gap=0.4, order=order, structure=structure, indent=2.0, leader=leader, blocks=blocks,
                  headings=True)
    sheet = lay_out(style, COUNTS, 12, "050201001.01")
    a_strip = next(p for p in placements(sheet, k=6.0, dx=0, dy=0, cut=0) if p.name == "a strip")
    return sheet, place(sheet, a_strip)


def page_rows(placed) -> PageRows:
    words = [b for b in placed.pages[0].blocks if b.type is BlockType.WORD]
    lines = [b for b in placed.pages[0].blocks if b.type is BlockType.LINE]
    return PageRows(words, skew=page_skew(lines, words))


@pytest.mark.parametrize("structure", ["next-line", "name-alone"])
def test_the_second_line_of_an_item_continues_the_line_of_its_name(structure):
    sheet, placed = strip(structure)
    rows = page_rows(placed)
    for item in sheet.items:
        name_row = rows.row_of[placed.block_of[item.label[0]]]
        words_row = rows.row_of[placed.block_of[item.words[0]]]
        assert words_row == name_row + 1 and rows.head_of(words_row) == name_row
        assert rows.item_of(words_row) == name_row
        assert rows.head_of(name_row) is None  # an item's first line starts with its name


def test_a_row_whose_label_the_ocr_lost_under_a_whole_item_continues_nothing():
    sheet, placed = strip("same-line", leader="none")
    lost = sheet.items[5]
    words = [b for b in placed.pages[0].blocks if b.type is BlockType.WORD
             and b.id not in {placed.block_of[i] for i in lost.label}]
    rows = PageRows(words, skew=0.0)
    values_row = rows.row_of[placed.block_of[lost.digits[0]]]
    assert rows.head_of(values_row) is None  # the row above shows digits and words already


@pytest.mark.parametrize("structure", ["same-line", "next-line", "name-alone"])
@pytest.mark.parametrize("order", ["digits-words", "words-digits"])
def test_a_right_answer_to_a_strip_breaks_no_rule_and_votes_moved_with_their_proofs_do(structure, order):
    sheet, placed = strip(structure, order=order)
    ctx = reading_context(doctype=ACTA, input_mode="text", pages=placed.pages)
    validate = make_validator(ACTA, ctx)
    assert validate(answer_of(sheet, placed, ctx.prompt, by="word")) == []
    # BR's votes answered under DDP and DDP's under BR, proofs following the votes (the seed study's error)
    br, ddp = (next(i for i, item in enumerate(sheet.items) if item.key == p) for p in ("BR", "DDP"))
    swapped = {(sheet.items[a].key, part): b for a, b in ((br, ddp), (ddp, br)) for part in ("votes", "votes_words")}
    values = {(sheet.items[a].key, part): (sheet.items[b].votes if part == "votes" else sheet.items[b].words_text)
              for (_, part), b, a in ((k, v, br if k[0] == "BR" else ddp) for k, v in swapped.items())}
    moved = validate(answer_of(sheet, placed, ctx.prompt, by="word", values=values, proofs=swapped))
    assert {v.code for v in moved} == {"row_proof_party"}
    assert {v.found for v in moved} == {"BR", "DDP"}


@pytest.mark.parametrize("structure", ["next-line", "name-alone"])
@pytest.mark.parametrize("order", ["digits-words", "words-digits"])
def test_the_offline_reader_reads_items_printed_over_two_lines(structure, order):
    sheet, placed = strip(structure, order=order)
    answer = read_acta(pages=placed.pages, prompt=render_prompt(placed.pages))
    read = [(row["votes"]["value"], row["votes_words"]["value"]) for row in answer["rows"]]
    assert read == [(item.votes, item.words_text) for item in sheet.items[:38]]
    assert answer["valid_votes"]["value"] == sum(COUNTS)
