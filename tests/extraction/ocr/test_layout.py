"""The word-geometry module every OCR adapter uses: visual rows, lines, and table rows (pure, no engine)."""

from __future__ import annotations

import math

import pytest

from extraction.ocr import layout
from extraction.ocr.geometry import Box
from extraction.ocr.layout import GridCell

# The boxes below are written as plain tuples in pixels; layout takes geometry.Box (it refuses anything else,
# see the last test), so each function is called with the same boxes as Box.


def _measured(boxes):
    return [Box(*b) for b in boxes]


def estimate_skew(boxes, **kw):
    return layout.estimate_skew(_measured(boxes), **kw)


def visual_rows(boxes, **kw):
    return layout.visual_rows(_measured(boxes), **kw)


def text_lines(boxes, *args, **kw):
    return layout.text_lines(_measured(boxes), *args, **kw)


def split_gutters(row, boxes, *args, **kw):
    return layout.split_gutters(row, _measured(boxes), *args, **kw)


def words_in_cells(cells, boxes):
    return layout.words_in_cells(cells, _measured(boxes))


def refine_rows(cells, bands, boxes, **kw):
    return layout.refine_rows(cells, bands, _measured(boxes), **kw)


def split_spanning_cells(cells, boxes, **kw):
    return layout.split_spanning_cells(cells, _measured(boxes), **kw)


def _rotated(boxes: list[tuple[float, float, float, float]], degrees: float) -> list[tuple]:
    """Axis-aligned boxes of the words after turning the page by `degrees` about the origin."""
    t = math.radians(degrees)
    out = []
    for x0, y0, x1, y1 in boxes:
        corners = [(x, y) for x in (x0, x1) for y in (y0, y1)]
        turned = [(x * math.cos(t) - y * math.sin(t), x * math.sin(t) + y * math.cos(t)) for x, y in corners]
        xs, ys = zip(*turned, strict=True)
        out.append((min(xs), min(ys), max(xs), max(ys)))
    return out


def _grid_of_words(rows: int, per_row: int, *, height: float = 20, pitch: float = 26, step: float = 240):
    """Words laid out in rows (pitch 1.3 heights) and columns far apart, like a table on a scan."""
    return [(40 + c * step, 100 + r * pitch, 40 + c * step + 90, 100 + r * pitch + height)
            for r in range(rows) for c in range(per_row)]


@pytest.mark.parametrize("degrees", [0.0, 1.5, -1.5])
def test_visual_rows_follow_a_skewed_scan_across_wide_gutters(degrees):
    # At 1.5 degrees a row climbs 31 px over the 1200 px page, more than the 26 px row pitch: a band
    # across the page would mix rows; following each row's words does not.
    words = _grid_of_words(12, 5)
    rows = visual_rows(_rotated(words, degrees))
    assert sorted(sorted(row) for row in rows) == [list(range(r * 5, r * 5 + 5)) for r in range(12)]
    assert [min(row) for row in rows] == [r * 5 for r in range(12)]  # top to bottom


def test_the_skew_is_measured_from_the_page_text():
    words = _grid_of_words(12, 5)
    assert estimate_skew(_rotated(words, 1.5)) == pytest.approx(math.tan(math.radians(1.5)), rel=0.15)
    assert estimate_skew(words) == 0.0


def test_degenerate_boxes_give_rows_without_a_slope():
    # Zero-size boxes (a malformed response, a dot) must not divide by zero.
    boxes = [(0.5, 0.5, 0.5, 0.5), (0.5, 0.5, 0.5, 0.5), (0.1, 0.2, 0.1, 0.2)]
    assert estimate_skew(boxes) == 0.0
    assert visual_rows(boxes) == [[2], [0, 1]]


def test_a_bullet_with_a_tall_glyph_box_joins_the_row_it_is_centred_on():
    # PDF boxes of a bullet span its font's whole height and reach into the row above.
    above = (40, 702.6, 60, 713.1)
    bullet = (55, 707.8, 59.9, 725.1)
    beside = (62, 711.6, 107.8, 722.1)
    above_right = (62.9, 702.6, 84.1, 713.1)
    rows = visual_rows([above, bullet, beside, above_right])
    assert rows == [[0, 3], [1, 2]]


def test_a_hyphen_and_a_footnote_mark_stay_on_their_row():
    words = [(10, 100, 40, 110), (44, 104, 48, 105), (52, 100, 90, 110),  # "Page - Value"
             (10, 200, 14, 205), (18, 201, 80, 211)]  # a raised "3" then its footnote text
    assert visual_rows(words) == [[0, 1, 2], [3, 4]]


def test_a_column_set_at_another_pitch_does_not_join_two_rows_of_its_neighbour():
    # Left column rows every 17.8 pt, right column every 12 pt: a left row lies halfway between two
    # right rows, and must not pull both into one row.
    left = [(8, 88.3 + 17.8 * k, 100, 100.6 + 17.8 * k) for k in range(4)]
    right = [(167, 88.3 + 12 * k, 230, 100.6 + 12 * k) for k in range(6)]
    rows = visual_rows(left + right)
    for row in rows:
        assert sum(i >= len(left) for i in row) <= 1
        assert sum(i < len(left) for i in row) <= 1


def test_lines_are_cut_at_column_gutters_but_not_at_word_spaces():
    # 10 px characters: spaces of 4-8 px, then a 40 px gutter (four characters).
    boxes = [(0, 0, 50, 10), (56, 0, 96, 10), (104, 0, 134, 10), (174, 0, 214, 10)]
    texts = ["Total", "due", "EUR", "4200"]
    assert split_gutters([0, 1, 2, 3], boxes, texts) == [[0, 1, 2], [3]]


def test_an_engine_line_break_wider_than_a_space_stays_a_break():
    # 14 px between the two words is 1.4 characters: no gutter, but more than a space.
    boxes = [(0, 0, 40, 10), (54, 0, 84, 10)]
    assert split_gutters([0, 1], boxes, ["0979", "CRS"]) == [[0, 1]]
    assert split_gutters([0, 1], boxes, ["0979", "CRS"], ["left", "right"]) == [[0], [1]]
    assert split_gutters([0, 1], [(0, 0, 40, 10), (46, 0, 76, 10)], ["0979", "CRS"], ["a", "b"]) == [[0, 1]]


def test_a_ruled_line_read_as_a_word_ends_the_line():
    boxes = [(0, 0, 40, 10), (44, 0, 50, 10), (54, 0, 84, 10)]
    assert split_gutters([0, 1, 2], boxes, ["0979", "|]", "NRT"]) == [[0], [1], [2]]
    assert split_gutters([0, 1, 2], boxes, ["0979", "I", "NRT"]) == [[0, 1, 2]]
    assert split_gutters([0, 1, 2], boxes, ["Hanau", "|", "HRB"], scanned=False) == [[0, 1, 2]]  # typed


def test_lines_are_read_in_rows_then_left_to_right():
    boxes = [(300, 12, 400, 30), (10, 10, 100, 28), (10, 50, 100, 70), (200, 48, 260, 66)]
    assert text_lines(boxes, ["aaaaaaaaaa", "bbbbbbbbb", "cccccccccc", "dddddd"]) == [[1], [0], [2], [3]]


def test_no_line_holds_words_of_two_rows_of_a_skewed_table():
    words = _grid_of_words(10, 4, step=150)
    lines = text_lines(_rotated(words, 1.0), ["0056"] * len(words))
    assert all(len({i // 4 for i in line}) == 1 for line in lines)


# --------------------------------------------------------------------------------------------- tables


def _word(x: float, y: float, width: float = 30, height: float = 9) -> tuple[float, float, float, float]:
    return (x, y, x + width, y + height)


def _merged_band(parties: int, *, top: float = 100, pitch: float = 12.5):
    """One detected row: a candidate cell and three data cells, each holding `parties` rows of text."""
    bottom = top + parties * pitch
    cells = [GridCell(1, c + 1, 1, 1, (x0, top, x1, bottom))
             for c, (x0, x1) in enumerate([(0, 100), (100, 200), (200, 260), (260, 400)])]
    words = [_word(4, (top + bottom) / 2 - 4.5, 60)]  # the candidate, centred
    for k in range(parties):
        y = top + k * pitch + 2
        words += [_word(104, y), _word(212, y, 25), _word(264, y, 120)]
    return cells, [(top, bottom)], words


def test_a_row_holding_several_rows_lined_up_across_its_cells_is_split():
    cells, bands, words = _merged_band(3)
    words_in_cells(cells, words)
    out = refine_rows(cells, bands, words)
    candidate = next(c for c in out if c.column == 1)
    assert (candidate.row, candidate.row_span, candidate.words) == (1, 3, [0])
    for column in (2, 3, 4):
        split = sorted((c for c in out if c.column == column), key=lambda c: c.row)
        assert [c.row for c in split] == [1, 2, 3]
        assert all(len(c.words) == 1 for c in split)
        assert split[0].box[1] == 100 and split[-1].box[3] == 100 + 3 * 12.5
        assert all(a.box[3] == b.box[1] for a, b in zip(split, split[1:], strict=False))


def test_a_wrapped_cell_beside_single_line_cells_stays_one_cell():
    cells = [GridCell(1, c + 1, 1, 1, (x0, 100, x1, 140)) for c, (x0, x1) in
             enumerate([(0, 250), (250, 300), (300, 400)])]
    words = [_word(4, 102, 200), _word(4, 114, 200), _word(4, 126, 120), _word(254, 102, 10), _word(304, 102)]
    words_in_cells(cells, words)
    out = refine_rows(cells, [(100, 140)], words)
    assert [(c.row, c.column, c.row_span, sorted(c.words)) for c in out] == [
        (1, 1, 1, [0, 1, 2]), (1, 2, 1, [3]), (1, 3, 1, [4])]


def test_two_wrapped_cells_beside_two_single_line_cells_read_as_wrapped_text():
    cells = [GridCell(1, c + 1, 1, 1, (x0, 100, x1, 130)) for c, (x0, x1) in
             enumerate([(0, 150), (150, 300), (300, 350), (350, 450)])]
    words = [_word(4, 102, 120), _word(4, 114, 120), _word(154, 102, 120), _word(154, 114, 120),
             _word(304, 102, 10), _word(354, 102)]
    words_in_cells(cells, words)
    assert [(c.row, c.row_span) for c in refine_rows(cells, [(100, 130)], words)] == [(1, 1)] * 4


def test_two_rows_the_finder_joined_are_split_though_wrapped_headers_vote_for_wrapped_text():
    """A ruled table whose finder missed the rule between two rows: that row holds two rows lined up in
    every cell, while two wrapped header rows hold a second line in one cell of four each."""
    columns = [(0, 100), (100, 200), (200, 300), (300, 400)]
    cells, words = [], []
    for r, (top, bottom) in enumerate([(100, 130), (130, 160), (160, 190)], start=1):
        cells += [GridCell(r, c + 1, 1, 1, (x0, top, x1, bottom)) for c, (x0, x1) in enumerate(columns)]
        if r < 3:  # a header wrapped in its first cell
            words += [_word(x0 + 4, top + 2, 60) for x0, _ in columns] + [_word(4, top + 14, 60)]
        else:  # two data rows in every cell
            words += [_word(x0 + 4, top + dy, 60) for dy in (2, 16) for x0, _ in columns]
    words_in_cells(cells, words)
    bands = [(100, 130), (130, 160), (160, 190)]
    out = refine_rows(cells, bands, words)
    assert sorted((c.row, c.column, len(c.words)) for c in out if c.row >= 3) == [
        (r, c, 1) for r in (3, 4) for c in (1, 2, 3, 4)]
    assert [len(c.words) for c in out if c.row == 1 and c.column == 1] == [2]  # the wrapped header stays whole


def test_a_value_alone_in_a_merged_row_keeps_its_own_row():
    # Two candidate groups; in the second the words column holds text on its last row only.
    first, bands1, words1 = _merged_band(3, top=100)
    second, bands2, words2 = _merged_band(3, top=137.5)
    for cell in second:
        cell.row = 2
    words2 = [w for k, w in enumerate(words2) if k == 0 or k % 3 != 0 or k == 9]  # drop two words cells
    cells, words = first + second, words1 + words2
    words_in_cells(cells, words)
    out = refine_rows(cells, bands1 + bands2, words)
    lone = [c for c in out if c.column == 4 and c.words and c.row > 3]
    assert len(lone) == 1 and lone[0].row == 6 and lone[0].row_span == 1
    assert max(c.row + c.row_span - 1 for c in out) == 6


def test_rows_after_a_split_band_are_renumbered():
    cells, bands, words = _merged_band(2)
    below = GridCell(2, 1, 1, 4, (0, 125, 400, 140))
    words.append(_word(4, 128, 100))
    cells.append(below)
    words_in_cells(cells, words)
    out = refine_rows(cells, bands + [(125, 140)], words)
    assert [(c.row, c.column_span) for c in out if c.column == 1] == [(1, 1), (3, 4)]


def _tilted_rapid_lines(slope: float, *, gap: float = 150):
    """RapidOCR-like lines of a two-column sheet turned by `slope`: each line a turned quadrilateral, its
    words cut from the line's upright box (so the words of one line sit exactly level, as RapidOCR gives),
    the runs of a row `gap` px apart, rows 36 px apart, text 30 px high."""
    from extraction.ocr.rapid import _RawLine

    lines = []
    for r in range(6):
        runs = ((["P" + "ABCDEF"[r]], 40), (["CERO", "UNO", str(r)], 40 + gap), ([f"00{r}"], 160 + 2 * gap),
                (["Q" + "ABCDEF"[r]], 200 + 3 * gap), (["CERO", "DOS", str(r)], 200 + 4 * gap),
                ([f"10{r}"], 320 + 5 * gap))
        for texts, left in runs:
            width = 40 * len(texts)
            top = 300 + 36 * r + slope * left
            quad = [(left, top), (left + width, top + slope * width), (left + width, top + slope * width + 30),
                    (left, top + 30)]
            lines.append(_RawLine(text=" ".join(texts), score=0.9, quad=quad, items=[]))
    return lines


def test_a_tilted_scan_reads_row_by_row_from_the_engines_turned_line_boxes():
    # Turned 4 degrees: a row's right end sits 70 px (two row pitches) above its left end. The words alone
    # (level within each line) do not show it across the wide gaps; the detector's quadrilaterals do.
    from extraction.ocr.blocks import BlockType
    from extraction.ocr.layout import skew_of_quads
    from extraction.ocr.rapid import build_blocks

    raw = _tilted_rapid_lines(-0.07)
    assert skew_of_quads([line.quad for line in raw]) == pytest.approx(-0.07)
    lines = [b.text for b in build_blocks(raw, 1, 1240, 1754) if b.type is BlockType.LINE]
    assert lines == [text for r in range(6) for text in ("P" + "ABCDEF"[r], f"CERO UNO {r}", f"00{r}",
                                                           "Q" + "ABCDEF"[r], f"CERO DOS {r}", f"10{r}")]


def test_quadrilaterals_too_short_to_show_a_slope_give_none():
    from extraction.ocr.layout import skew_of_quads

    assert skew_of_quads([[(0, 0), (30, 2), (30, 22), (0, 20)], None]) is None


def _group_ruled_table(*, name_rows: int = 4):
    """Four rows ruled per row in the digits column (2) while the names (1) and the words (3) are ruled only
    around the group: the finder's cells for columns 1 and 3 span all four rows."""
    boxes, digits = [], []
    for r in range(4):
        top = 100 + 20 * r
        boxes += [(10, top + 4, 40, top + 16), (60, top + 4, 80, top + 16), (100, top + 4, 180, top + 16)]
    cells = [GridCell(1, 1, 4, 1, (0, 100, 50, 180), [3 * r for r in range(name_rows)]),
             GridCell(1, 3, 4, 1, (90, 100, 200, 180), [3 * r + 2 for r in range(4)])]
    for r in range(4):
        digits.append(GridCell(r + 1, 2, 1, 1, (50, 100 + 20 * r, 90, 120 + 20 * r), [3 * r + 1]))
    return cells + digits, boxes


def test_a_cell_ruled_around_a_group_of_rows_another_column_splits_is_split_by_the_rows_its_words_form():
    cells, boxes = _group_ruled_table()
    out = split_spanning_cells(cells, boxes)
    assert sorted((c.row, c.column, c.row_span, c.words) for c in out if c.column != 2) == [
        (r + 1, column, 1, [3 * r + offset]) for r in range(4) for column, offset in ((1, 0), (3, 2))]
    assert all(c.box[1] == 100 + 20 * (c.row - 1) and c.box[3] == 120 + 20 * (c.row - 1) for c in out)


def test_a_text_centred_over_its_rows_keeps_its_spanning_cell():
    cells, boxes = _group_ruled_table()
    boxes.append((10, 133, 40, 147))  # one name centred between rows 2 and 3, level with neither
    cells[0] = GridCell(1, 1, 4, 1, (0, 100, 50, 180), [len(boxes) - 1])
    out = split_spanning_cells(cells, boxes)
    assert [(c.row, c.row_span) for c in out if c.column == 1] == [(1, 4)]
    assert [(c.row, c.row_span) for c in out if c.column == 3] == [(r, 1) for r in range(1, 5)]


def test_page_geometry_refuses_boxes_that_are_not_in_the_pages_unit():
    # a tuple may be fractions of the page, where a width and a height are lengths of two scales
    with pytest.raises(TypeError, match="geometry.Box"):
        layout.visual_rows([(0.1, 0.1, 0.2, 0.11), (0.3, 0.1, 0.4, 0.11)])
    assert layout.visual_rows([Box(10, 10, 20, 21), Box(30, 10, 40, 21)]) == [[0, 1]]


def _rows_turned_a_little(slope: float):
    """Twenty rows of a name, four words read as separate lines and the figures, on a page turned by `slope`;
    each line's box upright, and the detector's quadrilaterals drawn level (as it may draw them on a page
    turned a degree or so). Text 30 px high, rows 36 px apart."""
    boxes, texts, quads = [], [], []
    for r in range(20):
        for text, left, width in (("PARTY " + chr(65 + r), 40, 160), ("CERO", 800, 50), ("CERO", 860, 50),
                                  ("UNO", 920, 50), ("CINCO", 980, 50), (f"00{r % 10}", 1400, 60)):
            top = 100 + 36 * r + slope * left
            boxes.append(Box(left, top, left + width, top + 30))
            texts.append(text)
            quads.append([(left, top), (left + width, top), (left + width, top + 30), (left, top + 30)])
    return boxes, texts, quads


def test_a_page_turned_a_little_takes_its_slope_from_its_rows_where_the_detector_drew_level_boxes():
    # Turned 1.1 degrees: the figures stand 26 px (most of a row pitch) above their name. Under the level
    # quadrilaterals' slope the name reads after its own figures; under the rows' slope, before them.
    boxes, texts, quads = _rows_turned_a_little(-0.02)
    assert layout.skew_of_quads(quads) == 0.0
    skew = layout.page_skew(boxes, quads)
    assert skew == pytest.approx(-0.02, abs=0.002)
    order = [texts[i] for i in layout.reading_order(boxes, texts, skew=skew)]
    assert order[:12] == ["PARTY A", "CERO", "CERO", "UNO", "CINCO", "000",
                          "PARTY B", "CERO", "CERO", "UNO", "CINCO", "001"]
    assert [texts[i] for i in layout.reading_order(boxes, texts, skew=0.0)][:2] != ["PARTY A", "CERO"]


def test_a_page_the_detector_drew_turned_keeps_the_quadrilaterals_slope():
    raw = _tilted_rapid_lines(-0.07)
    quads = [line.quad for line in raw]
    boxes = [Box(min(x for x, _ in q), min(y for _, y in q), max(x for x, _ in q), max(y for _, y in q)) for q in quads]
    assert layout.page_skew(boxes, quads) == pytest.approx(-0.07)


def test_a_turned_page_is_straightened_on_both_axes():
    # A column's left edge a page high, turned 3 degrees, drifts 50 pt across; straightened, it is one x again.
    slope = math.tan(math.radians(3))
    c, s = math.cos(math.radians(3)), math.sin(math.radians(3))
    lefts = []
    for y in range(0, 1000, 100):
        x0, y0 = 100 * c - y * s, 100 * s + y * c  # the column's edge at x=100 turned about the origin
        box = Box(x0, y0, x0 + 40, y0 + 12)
        assert abs(box.x0 - 100) < 60
        lefts.append(layout.straightened(box, slope).x0)
    assert max(lefts) - min(lefts) < 1.0
    assert layout.straightened(Box(10, 20, 50, 32), 0.0) == Box(10, 20, 50, 32)
