"""Lines in reading order and words as printed (extraction/ocr/layout.py `reading_order`, extraction/ocr/lines.py):
columns of text one after the other, a column of figures row by row with its names, a leader read into a word
split from it, and a digit word with a look-alike character read as the word it is."""

from __future__ import annotations

from extraction.ocr.blocks import BBox, BlockType
from extraction.ocr.geometry import PageSize
from extraction.ocr.lines import EngineWord, build_page_lines, split_leaders
from extraction.ocr.page_rows import token_kind
from extraction.proofs.grounding import supports
from extraction.values.numbers import digit_word
from tests.support.generated_pages import Style, lay_out, place, placements

A4 = PageSize(595.0, 842.0)


def _lines(words: list[tuple[str, float, float, float]], size: PageSize = A4) -> list[str]:
    """LINE texts of words given as (text, x0, y0, x1) in points, 10 pt high."""
    built = build_page_lines(1, [EngineWord(text=t, confidence=1.0, bbox=BBox(x0 / size.width, y0 / size.height,
                                                                               (x1 - x0) / size.width, 10 / size.height))
                                 for t, x0, y0, x1 in words], size=size, scanned=False)
    return [b.text for b in built.blocks if b.type is BlockType.LINE]


def test_two_columns_of_printed_items_read_one_column_after_the_other():
    style = Style(size=8.0, advance=0.6, ascent=1.0, pitch=1.4, space=0.6, numbers="padded", comb_pitch=1.5,
                  digit_gap=0.4, order="digits-words", structure="next-line", indent=2.0, leader="none", blocks=2,
                  headings=False)
    sheet = lay_out(style, [(5 * i + 1) % 1000 for i in range(38)], 7, "050201001.01")
    placed = place(sheet, placements(sheet, k=2.0, dx=0, dy=0, cut=0)[0])
    lines = [b for b in placed.pages[0].blocks if b.type is BlockType.LINE]
    order = {b.id: k for k, b in enumerate(lines)}
    line_of = {b.id: b.parent for b in placed.pages[0].blocks if b.type is BlockType.WORD}
    at = [order[line_of[placed.block_of[item.label[0]]]] for item in sheet.items]
    assert at == sorted(at)  # PSUV's lines, then PCV's, ... down the left column, then down the right one
    words_line = order[line_of[placed.block_of[sheet.items[0].words[0]]]]
    assert words_line == order[line_of[placed.block_of[sheet.items[0].digits[0]]]] + 1  # its words just after


def test_a_column_of_figures_beside_their_names_is_read_row_by_row_with_them():
    rows = [("PSUV", "0056"), ("PCV", "0012"), ("TUPAMARO", "0003"), ("PPT", "0100")]
    words = [w for r, (name, figures) in enumerate(rows)
             for w in ((name, 60, 100 + 14 * r, 60 + 6 * len(name)), (figures, 400, 100 + 14 * r, 424))]
    assert _lines(words) == [t for pair in rows for t in pair]


def test_columns_of_text_are_read_one_after_the_other():
    left = [(f"left{r} text of the first column", 40, 100 + 14 * r, 260) for r in range(5)]
    right = [(f"right{r} text of the second column", 320, 100 + 14 * r, 560) for r in range(5)]
    words = [(w, x0 + 40 * k, y, x0 + 40 * k + 30) for t, x0, y, _ in left + right for k, w in enumerate(t.split())]
    assert [t.split()[0] for t in _lines(words)] == [f"left{r}" for r in range(5)] + [f"right{r}" for r in range(5)]


def test_a_leader_read_into_a_word_is_split_from_the_name_and_the_figures():
    word = EngineWord(text="TUPAMARO---1", confidence=0.9, bbox=BBox(0.1, 0.2, 0.24, 0.01))
    parts = split_leaders(word)
    assert [p.text for p in parts] == ["TUPAMARO", "---", "1"]
    assert [round(p.bbox.left, 4) for p in parts] == [0.1, 0.26, 0.32] and parts[2].bbox.width == 0.02
    assert [p.text for p in split_leaders(EngineWord(text="---006", confidence=1.0, bbox=word.bbox))] == ["---", "006"]
    for kept in ("2024-07-28", "555-1234", "1.234.567", "S.A."):  # one dash or dot is part of the word
        assert split_leaders(EngineWord(text=kept, confidence=1.0, bbox=word.bbox)) == [
            EngineWord(text=kept, confidence=1.0, bbox=word.bbox)]
    assert token_kind("........") == token_kind("-----") == "rule"  # a leader is neither label nor value


def test_a_digit_word_with_a_look_alike_character_reads_as_that_word_and_a_party_name_does_not():
    assert [digit_word(t) for t in ("CER0", "UN0", "CERD", "UND", "5EIS")] == [0, 1, 0, 1, 6]
    assert [digit_word(t) for t in ("UNE", "DDP", "MIN", "AD")] == [None] * 4  # parties of the form
    assert token_kind("CER0") == "word"
    assert supports("SEIS CERO", "60 SEIS CER0", word_numbers=True)
    assert not supports("SEIS UNO", "60 SEIS CER0", word_numbers=True)


def test_a_line_reads_a_split_word_as_the_engine_read_it():
    built = build_page_lines(1, [EngineWord(text="PSUV.......056", confidence=1.0, bbox=BBox(0.1, 0.1, 0.3, 0.01)),
                                 EngineWord(text="CERO", confidence=1.0, bbox=BBox(0.42, 0.1, 0.08, 0.01))],
                             size=A4, scanned=False)
    [line] = [b for b in built.blocks if b.type is BlockType.LINE]
    assert line.text == "PSUV.......056 CERO"
    assert [b.text for b in built.blocks if b.type is BlockType.WORD] == ["PSUV", ".......", "056", "CERO"]
    assert built.word_ids == ["p1-w1", "p1-w4"]


def test_columns_of_printed_items_the_table_finder_took_for_a_table_stay_lines_and_a_real_table_stays_a_table():
    import pymupdf

    from extraction.ocr.pdf_text import read_pdf_page
    from sheetgen.generate import generate_acta
    from sheetgen.sampled import generate_sampled

    flowed = generate_sampled(300023, "forms")  # A4 landscape, items flowed over two columns under rules of '*'
    with pymupdf.open(stream=flowed.pdf_bytes, filetype="pdf") as doc:
        assert doc[0].find_tables().tables  # the finder's guess
        page = read_pdf_page(doc[0], 1)
    assert not [b for b in page.blocks if b.type is BlockType.TABLE]
    lines = [b.text for b in page.blocks if b.type is BlockType.LINE]
    assert lines.index("PSUV") < lines.index("PCV") < lines.index("EV")  # down the left column first
    with pymupdf.open(stream=generate_acta(seed=3).pdf_bytes, filetype="pdf") as doc:
        page = read_pdf_page(doc[0], 1)
    assert [b for b in page.blocks if b.type is BlockType.TABLE]


def test_a_table_of_records_whose_description_runs_over_a_name_and_a_date_stays_a_table():
    import pymupdf

    from extraction.ocr.pdf_text import read_pdf_page

    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    lefts, top, pitch = [40, 90, 400, 555], 100, 14
    rows = [("Pos.", "Description", "Amount")]
    for n in range(1, 7):
        rows += [(str(n), f"Hosting plan {n}", f"{n},39"), ("", "Fee per unit", ""), ("", "01.05.14-31.05.14", "")]
    for r, cells in enumerate(rows):
        for left, text in zip(lefts, cells, strict=False):
            page.insert_text((left + 3, top + r * pitch + 10), text, fontsize=9)
    bottom = top + len(rows) * pitch
    for x in lefts:
        page.draw_line((x, top), (x, bottom))
    for r in range(len(rows) + 1):
        page.draw_line((lefts[0], top + r * pitch), (lefts[-1], top + r * pitch))
    read = read_pdf_page(page, 1)
    cells = [b.text for b in read.blocks if b.type is BlockType.CELL]
    assert "01.05.14-31.05.14" in cells and "Hosting plan 6" in cells and "6,39" in cells
