"""The token-sober prompt rendering and its short ids."""

from __future__ import annotations

import json
import re

import pytest

from extraction.ocr.blocks import BBox, BlockType, OcrBlock, OcrPage
from extraction.ocr.textract_json import parse_textract
from extraction.reading.prompt import PROOF_INSTRUCTIONS, PromptDocument, cell_at, render_prompt
from tests.support.pages import SQUARE, textract_sizes
from tests.support.paths import shared_data


def textract_pages(name: str) -> list[OcrPage]:
    path = shared_data("textract", f"{name}.textract.json")
    return parse_textract(json.loads(path.read_text()), sizes=textract_sizes(path))


def line(id_: str, text: str, box: tuple[float, float, float, float], order: int, page: int = 1) -> OcrBlock:
    return OcrBlock(
        page_size=SQUARE,
        id=id_, type=BlockType.LINE, page=page, text=text, bbox=BBox(*box), order=order, parent="p"
    )


def cell(id_: str, text: str, row: int, column: int, *, row_span: int = 1, column_span: int = 1) -> OcrBlock:
    return OcrBlock(
        page_size=SQUARE,
        id=id_, type=BlockType.CELL, page=1, text=text, bbox=BBox(0.1, 0.3, 0.1, 0.05), parent="t1",
        row=row, column=column, row_span=row_span, column_span=column_span,
    )


@pytest.fixture
def invoice_page() -> OcrPage:
    """An invoice: two header lines, a 3x3 table whose lines the OCR also gave as LINEs, a footer line."""
    table_box = (0.1, 0.3, 0.8, 0.2)
    blocks = [
        OcrBlock(page_size=SQUARE, id="p", type=BlockType.PAGE, page=1, text="", bbox=BBox(0, 0, 1, 1)),
        line("l-title", "Invoice 42183017", (0.1, 0.05, 0.4, 0.03), order=1),
        line("l-date", "Date: 03 Aug 2014", (0.1, 0.1, 0.4, 0.03), order=2),
        OcrBlock(page_size=SQUARE, id="t1", type=BlockType.TABLE, page=1, text="", bbox=BBox(*table_box), order=3, parent="p"),
        line("l-head", "Description Qty Amount", (0.12, 0.31, 0.7, 0.03), order=4),
        line("l-row1", "AWS Data Transfer 1 0.01", (0.12, 0.37, 0.7, 0.03), order=5),
        line("l-row2", "Total 0.01", (0.12, 0.43, 0.7, 0.03), order=6),
        cell("c11", "Description", 1, 1), cell("c12", "Qty", 1, 2), cell("c13", "Amount", 1, 3),
        cell("c21", "AWS Data Transfer", 2, 1), cell("c22", "1", 2, 2), cell("c23", "0.01", 2, 3),
        cell("c31", "Total", 3, 1, column_span=2), cell("c33", "0.01", 3, 3),
        line("l-foot", "Thank you | bye", (0.1, 0.8, 0.4, 0.03), order=7),
    ]
    return OcrPage(number=1, blocks=blocks, engine="test")


def test_a_small_invoice_renders_lines_and_one_table_with_rows(invoice_page):
    doc = render_prompt([invoice_page])
    assert isinstance(doc, PromptDocument)
    assert doc.text == "\n".join([
        "# page 1",
        "L1 Invoice 42183017",
        "L2 Date: 03 Aug 2014",
        "T1",
        "|Description|Qty|Amount",
        "|AWS Data Transfer|1|0.01",
        "|Total||0.01",
        "L3 Thank you | bye",
    ])


def test_short_ids_map_back_to_the_blocks_they_tag(invoice_page):
    doc = render_prompt([invoice_page])
    assert doc.line_ids == {1: "l-title", 2: "l-date", 3: "l-foot"}
    assert doc.table_ids == {1: "t1"}


def test_a_cell_proof_resolves_through_its_table_and_spans(invoice_page):
    doc = render_prompt([invoice_page])
    table = doc.table_ids[1]
    assert cell_at(invoice_page.blocks, table, 2, 3).id == "c23"
    assert cell_at(invoice_page.blocks, table, 3, 2).id == "c31"  # covered by the spanning "Total" cell
    assert cell_at(invoice_page.blocks, table, 4, 1) is None
    assert cell_at(invoice_page.blocks, "other-table", 1, 1) is None


def test_reading_order_follows_the_order_field_not_the_list_order(invoice_page):
    invoice_page.blocks.reverse()
    for b in invoice_page.blocks:
        if b.id == "l-date":
            b.order = 0  # the engine says the date is read first
    doc = render_prompt([invoice_page])
    assert doc.line_ids[1] == "l-date" and doc.line_ids[2] == "l-title"


def test_a_table_takes_the_place_of_its_first_line_even_when_it_is_ordered_last(invoice_page):
    for b in invoice_page.blocks:
        if b.id == "t1":
            b.order = 99
    doc = render_prompt([invoice_page])
    assert doc.text.index("\nT1\n") < doc.text.index("Thank you")


def test_a_cell_proof_names_the_cell_the_prompt_prints_at_that_slot_when_a_finder_overlaps_cells():
    # a finder's first cell of a row reaching over the next two columns, whose own cells the prompt prints
    wide = cell("wide", "PSUV 123 PCV 2", 1, 1, column_span=3)
    own = cell("own", "AD 3 COPEI 0", 1, 3)
    doc = render_prompt([OcrPage(number=1, blocks=[
        OcrBlock(page_size=SQUARE, id="t1", type=BlockType.TABLE, page=1, text="", bbox=BBox(0.1, 0.3, 0.8, 0.2)), wide, own])])
    assert doc.text.splitlines()[2] == "|PSUV 123 PCV 2||AD 3 COPEI 0"
    assert cell_at([wide, own], "t1", 1, 3) is own and cell_at([wide, own], "t1", 1, 2) is wide


def test_a_line_in_a_table_box_whose_words_no_cell_holds_is_kept(invoice_page):
    invoice_page.blocks.append(line("l-stamp", "PAID", (0.6, 0.45, 0.1, 0.03), order=6))
    doc = render_prompt([invoice_page])
    assert "\nL3 PAID" in doc.text and doc.line_ids[3] == "l-stamp"


def test_a_line_whose_words_no_cell_holds_is_kept_though_a_cell_prints_the_same_words():
    """A table finder that took a whole block of rows into its box with no cells for them (one giant cell
    cut down to the header): the block's lines read like other rows' cells, but no cell holds them."""
    def word(id_: str, text: str, left: float, top: float, parent: str) -> OcrBlock:
        return OcrBlock(page_size=SQUARE,
                        id=id_, type=BlockType.WORD, page=1, text=text, bbox=BBox(left, top, 0.05, 0.02), parent=parent)

    blocks = [OcrBlock(page_size=SQUARE, id="t1", type=BlockType.TABLE, page=1, text="", bbox=BBox(0.0, 0.2, 1.0, 0.5), order=9),
              OcrBlock(page_size=SQUARE, id="c1", type=BlockType.CELL, page=1, text="CERO SEIS", bbox=BBox(0.5, 0.3, 0.4, 0.04),
                       parent="t1", row=1, column=1),
              line("held", "CERO SEIS", (0.55, 0.31, 0.2, 0.02), order=1), word("h1", "CERO", 0.55, 0.31, "held"),
              word("h2", "SEIS", 0.62, 0.31, "held"),
              line("free", "CERO SEIS", (0.05, 0.31, 0.2, 0.02), order=2), word("f1", "CERO", 0.05, 0.31, "free"),
              word("f2", "SEIS", 0.12, 0.31, "free")]
    doc = render_prompt([OcrPage(number=1, blocks=blocks)])
    assert doc.line_ids == {1: "free"} and doc.table_ids == {1: "t1"}
    assert doc.text.split("\n")[1:] == ["T1", "|CERO SEIS", "L1 CERO SEIS"]


def test_a_table_without_cells_does_not_swallow_its_lines(invoice_page):
    invoice_page.blocks = [b for b in invoice_page.blocks if b.type is not BlockType.CELL]
    doc = render_prompt([invoice_page])
    assert "\nL4 AWS Data Transfer 1 0.01" in doc.text
    assert doc.text.endswith("T1") or "\nT1\nL" in doc.text  # a table without rows


def test_ids_run_on_across_pages():
    doc = render_prompt(textract_pages("multi-page-tables"))
    first, second = doc.text.split("# page 2")
    lines_one = [int(n) for n in re.findall(r"^L(\d+) ", first, flags=re.M)]
    lines_two = [int(n) for n in re.findall(r"^L(\d+) ", second, flags=re.M)]
    assert lines_one + lines_two == list(range(1, len(doc.line_ids) + 1))
    assert lines_one and lines_two
    assert re.findall(r"^T(\d+)$", second, flags=re.M) == ["3", "4"]
    assert "Page 2 - Value 1.1.1" in second and "Page 2 - Value 1.1.1" not in first


def test_the_paystub_renders_every_table_as_rows_and_no_table_line_twice():
    pages = textract_pages("paystub")
    doc = render_prompt(pages)
    blocks = {b.id: b for b in pages[0].blocks}
    assert len(doc.table_ids) == 7 and set(doc.table_ids) == set(range(1, 8))
    assert all(blocks[i].type is BlockType.TABLE for i in doc.table_ids.values())
    assert "|Regular|10.00|32.00|320.00|16,640.00" in doc.text
    assert "||Net Pay|$291.90|" in doc.text
    # a table's rows all start with |, so no line tag hides among them
    rows = re.findall(r"^T\d+\n((?:\|.*\n?)*)", doc.text, flags=re.M)
    assert rows and all(r.startswith("|") for block in rows for r in block.splitlines())
    rendered_lines = dict(re.findall(r"^L(\d+) (.*)$", doc.text, flags=re.M))
    for short, block_id in doc.line_ids.items():  # every tag names the block whose text follows it
        assert blocks[block_id].type is BlockType.LINE and blocks[block_id].text == rendered_lines[str(short)]
    assert "Regular" not in rendered_lines.values()  # carried by the earnings table only
    assert doc.text.count("Regular") == 1
    assert "Important Notes" in rendered_lines.values()
    # nothing is lost: every LINE of the page is either tagged or held by a rendered table's cells
    cell_words = {w for b in pages[0].blocks if b.type is BlockType.CELL for w in b.text.split()}
    tagged = set(doc.line_ids.values())
    for b in pages[0].blocks:
        if b.type is BlockType.LINE and b.id not in tagged:
            assert set(b.text.split()) <= cell_words, b.text


def test_the_paystub_reads_the_earnings_table_before_the_deductions_and_the_check_last():
    text = render_prompt(textract_pages("paystub")).text
    assert text.index("Earnings Statement") < text.index("|Regular|") < text.index("Federal Income Tax")
    assert text.index("Federal Income Tax") < text.index("TWO HUNDRED NINETY-ONE AND 90/100 DOLLARS")


def test_a_spanning_cell_is_rendered_once_in_its_top_left_slot():
    doc = render_prompt(textract_pages("merged-cells"))
    table = doc.text[doc.text.index("\nT3\n") + 1:]
    rows = table.splitlines()[1:]
    assert rows[2] == "|Monday, February 28, 2022|1|3|$ 40.00|$ 120.00"
    assert rows[3] == "||2|5|$ 10.00|$ 50.00"
    assert table.count("Monday, February 28, 2022") == 1


def test_a_pipe_inside_a_cell_is_escaped_so_the_columns_still_count(invoice_page):
    for b in invoice_page.blocks:
        if b.id == "c21":
            b.text = "Data | Transfer"
    doc = render_prompt([invoice_page])
    assert "|Data \\| Transfer|1|0.01" in doc.text


def test_the_proof_instructions_name_every_kind_of_reference():
    for kind in ('"LINE"', '"WORD"', '"TABLE"', '"CELL"', '"row"', '"column"', '"line"'):
        assert kind in PROOF_INSTRUCTIONS
    assert len(PROOF_INSTRUCTIONS) < 1000


def test_the_tagged_rendering_of_the_real_textract_pages_costs_at_most_a_fifth_more_than_their_plain_text():
    # The measure of bench/prompt_tokens.py: o200k tokens of the rendering against the plain LINE text,
    # over every page of the recorded responses (short-line pages cost more, long tables less).
    from bpe_openai import get_encoding

    encode = get_encoding("o200k_base").encode
    rendered = plain = 0
    for path in sorted(shared_data("textract").glob("*.textract.json")):
        data = json.loads(path.read_text())
        rendered += len(encode(render_prompt(parse_textract(data, sizes=textract_sizes(path))).text))
        plain += len(encode("\n".join(b["Text"] for b in data["Blocks"] if b["BlockType"] == "LINE")))
    assert plain > 0 and rendered <= 1.2 * plain
