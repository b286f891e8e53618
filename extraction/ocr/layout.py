"""Page geometry shared by every OCR adapter: visual rows, text lines and table rows from word boxes (pure).

Engines disagree on what a line is: PyMuPDF's table finder merges table rows that have no ruled line
between them, Tesseract's line finder joins cells far apart on one row (and reads ruled lines as "|"),
and an engine's line may join text of two rows on a skewed or tightly set page. Every adapter therefore
rebuilds its lines (and pdf-text its table rows) here, from the only thing all engines give alike: word
boxes.

- A visual row is the words that sit side by side: a word joins the row whose last (rightmost) word it
  sits level with, after the page's skew is taken out. Comparing with the nearest word, not with a
  band across the page, follows a slanted or slightly curved scan.
- A text line is a run of one visual row, cut where the gap between two words is wider than a word
  space (a column gutter), measured in the row's own character width, or where a ruled line stands.
- A table row found by a table detector is split when it holds several visual rows that line up
  across its cells; a wrapped cell (text on several lines while its neighbours hold one) is left whole.

No tolerance here is a page fraction or a point size: each is a ratio of the page's own text
(word heights, character widths), so it holds at any resolution or font size. Boxes are `geometry.Box`
(x0, y0, x1, y1, y growing downwards) in the page's own unit, the same on both axes: a word's height and a gap
between words are compared, and in fractions of the page they would be lengths of two different scales
(extraction/ocr/geometry.py). Every function here refuses boxes of another type.
"""

from __future__ import annotations

import bisect
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from statistics import median

from extraction.ocr.geometry import Box
from extraction.values.numbers import digit_words

__all__ = [
    "ITEM_TURNS", "RULE_GLYPHS", "Box", "GridCell", "char_width", "estimate_skew", "median_height",
    "numbers_only", "page_skew", "reading_order", "refine_rows", "skew_of_quads", "split_gutters",
    "split_spanning_cells", "straightened", "text_lines", "turns_like_items", "visual_rows", "words_in_cells",
]

# Two words sit on one row when their vertical centres are less than 0.4 of the taller height apart.
# Words of one row are level within about a third of the taller one's height (a small word on a big
# one's baseline, a footnote mark, a hyphen); the next row of the same column is a whole line pitch away
# (one height or more), and a row of a neighbouring column set at another pitch may lie half a pitch off.
LEVEL = 0.4
# A word space is a third to half of a character's width, and a justified line stretches it to about
# one (1.2 in the shared real invoices): a gap of more than one and a half characters is layout, a column
# gutter or a tab stop. Where the engine broke its lines anyway, anything wider than a space cuts.
GUTTER_CHARS = 1.5
SPACE_CHARS = 1.0
RULE_GLYPHS = frozenset("|¦[]")
# The skew is estimated from row fragments at least this many word heights long, so that a box's
# rounding (one pixel on a short word) cannot pass for a slope.
SKEW_MIN_SPAN_HEIGHTS = 4.0


def _measured(boxes: Sequence[Box]) -> Sequence[Box]:
    """`boxes`, checked to be in the page's unit: fractions of a page would compare a fraction of its width
    with a fraction of its height."""
    for box in boxes:
        if not isinstance(box, Box):
            raise TypeError(f"page geometry takes geometry.Box in the page's unit, not {type(box).__name__}")
    return boxes


def _height(box: Box) -> float:
    return box[3] - box[1]


def _centre_y(box: Box) -> float:
    return (box[1] + box[3]) / 2


def _centre_x(box: Box) -> float:
    return (box[0] + box[2]) / 2


def median_height(boxes: Sequence[Box]) -> float:
    _measured(boxes)
    heights = [_height(b) for b in boxes if _height(b) > 0]
    return median(heights) if heights else 0.0


def _stacked(a: Box, b: Box) -> bool:
    """True when one word sits above the other: they share most of their width but are not level.

    Level words that overlap are one row (a PDF may draw a colon over the number beside it).
    """
    overlap = min(a[2], b[2]) - max(a[0], b[0])
    if overlap <= 0.5 * min(a[2] - a[0], b[2] - b[0]):
        return False
    return abs(_centre_y(a) - _centre_y(b)) > LEVEL * max(_height(a), _height(b))


def _chain(boxes: Sequence[Box]) -> list[list[int]]:
    """Rows by chaining each word, left to right, to the row whose last word it sits level with."""
    order = sorted(range(len(boxes)), key=lambda i: (boxes[i][0], boxes[i][1]))
    tallest = max((_height(b) for b in boxes), default=0.0)  # bounds the search window: no offset is larger
    rows: list[list[int]] = []
    keys: list[tuple[float, int]] = []  # (centre of the row's last word, row index), sorted
    for i in order:
        box = boxes[i]
        centre = _centre_y(box)
        lo = bisect.bisect_left(keys, (centre - tallest, -1))
        hi = bisect.bisect_right(keys, (centre + tallest, len(rows)))
        best, best_key = None, None
        for k in range(lo, hi):
            row = keys[k][1]
            last = boxes[rows[row][-1]]
            offset = abs(centre - _centre_y(last))
            if offset > LEVEL * max(_height(box), _height(last)) or _stacked(box, last):
                continue
            key = (-offset, last[2])  # most level first; then the row whose last word ends nearest
            if best_key is None or key > best_key:
                best, best_key = row, key
        if best is None:
            rows.append([i])
            bisect.insort(keys, (centre, len(rows) - 1))
            continue
        del keys[bisect.bisect_left(keys, (_centre_y(boxes[rows[best][-1]]), best))]
        rows[best].append(i)
        bisect.insort(keys, (centre, best))
    return rows


def estimate_skew(boxes: Sequence[Box]) -> float:
    """The page's slope (dy per dx) from its longer row fragments; 0 when the page gives no evidence.

    Neighbouring words of a line overlap almost fully even on a skewed scan, so chaining without any
    correction already yields row fragments; the median of their least-squares slopes is the skew.
    """
    _measured(boxes)
    min_span = SKEW_MIN_SPAN_HEIGHTS * median_height(boxes)
    slopes: list[float] = []
    for row in _chain(boxes):
        if len(row) < 2:
            continue
        xs = [_centre_x(boxes[i]) for i in row]
        ys = [_centre_y(boxes[i]) for i in row]
        mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
        sxx = sum((x - mx) ** 2 for x in xs)
        if max(xs) - min(xs) < min_span or sxx <= 0:
            continue
        slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx
        slopes += [slope] * len(row)  # a long row is better evidence than a short one
    return median(slopes) if slopes else 0.0


def skew_of_quads(quads: Sequence[Sequence[tuple[float, float]] | None]) -> float | None:
    """The page's slope from the engine's line quadrilaterals (top-left, top-right, bottom-right,
    bottom-left, in the page's unit: geometry.points_of), or None without any long enough to tell.

    A detector that draws each line as a turned quadrilateral (RapidOCR) knows the tilt; its word boxes do
    not (they are cut from the line's upright box, so the words of one line sit exactly level). The slope
    of a quadrilateral's top and bottom edges, median over the lines at least SKEW_MIN_SPAN_HEIGHTS long,
    each weighted by its length, is the skew.
    """
    slopes: list[tuple[float, float]] = []
    for quad in quads:
        if not quad or len(quad) != 4:
            continue
        (x0, y0), (x1, y1), (x2, y2), (x3, y3) = quad
        length, height = ((x1 - x0) + (x2 - x3)) / 2, ((y3 - y0) + (y2 - y1)) / 2
        if length <= 0 or height <= 0 or length < SKEW_MIN_SPAN_HEIGHTS * height:
            continue
        slopes.append((((y1 - y0) + (y2 - y3)) / 2 / length, length))
    if not slopes:
        return None
    slopes.sort()
    half, total = sum(w for _, w in slopes) / 2, 0.0
    for slope, weight in slopes:
        total += weight
        if total >= half:
            return slope
    return slopes[-1][0]


def page_skew(boxes: Sequence[Box], quads: Sequence[Sequence[tuple[float, float]] | None] = ()) -> float:
    """The slope (dy per dx) of a page whose lines the engine read as `boxes` (upright, one per line or line
    fragment) and, where it drew them, `quads` (skew_of_quads).

    Two witnesses: the quadrilaterals, which show a strongly turned page, but which a detector draws level on
    a page turned less than about a degree; and the rows the line fragments form across the page
    (estimate_skew). The page's slope is the one under which its lines chain into the fewest rows: the right
    slope joins a row's name, words and figures that the wrong one leaves a line apart. On a tie, the
    quadrilaterals'.
    """
    _measured(boxes)
    candidates = [s for s in (skew_of_quads(quads), estimate_skew(boxes) if boxes else None) if s is not None]
    if len(candidates) < 2 or candidates[0] == candidates[1]:
        return candidates[0] if candidates else 0.0
    return min(candidates, key=lambda s: len(_chain([straightened(b, s) for b in boxes])))


def straightened(box: Box, slope: float) -> Box:
    """`box` where it stands once the page's turn (`slope`, dy per dx) is taken out: its centre turned back
    about the page's origin, its width and height kept. Both axes move: on a page turned 3 degrees the left
    edge of a column a page high drifts by a twentieth of that height, as its rows climb or fall."""
    if not slope:
        return box
    c = 1.0 / math.sqrt(1.0 + slope * slope)
    cx, cy = c * (box.cx + slope * box.cy), c * (box.cy - slope * box.cx)
    half_w, half_h = box.width / 2, box.height / 2
    return Box(cx - half_w, cy - half_h, cx + half_w, cy + half_h)


def visual_rows(boxes: Sequence[Box], *, skew: float | None = None) -> list[list[int]]:
    """Indices of `boxes` grouped into visual rows: rows top to bottom, each row left to right.

    `skew` (dy per dx) is estimated from the boxes when not given; a caller that looks at a few words
    of a page (one line, one table) passes the page's estimate.
    """
    if not _measured(boxes):
        return []
    slope = estimate_skew(boxes) if skew is None else skew
    level = [straightened(b, slope) for b in boxes]
    rows = [sorted(row, key=lambda i: _centre_x(boxes[i])) for row in _chain(level)]
    # By centres, not left edges: a glyph a PDF draws over its neighbour keeps its place.
    rows.sort(key=lambda row: median(_centre_y(level[i]) for i in row))
    return rows


def char_width(box: Box, text: str) -> float:
    return (box[2] - box[0]) / max(len(text), 1)


def split_gutters(row: Sequence[int], boxes: Sequence[Box], texts: Sequence[str],
                  sources: Sequence[object] | None = None, *, scanned: bool = True) -> list[list[int]]:
    """Runs of one visual row (indices in x order), cut where the gap is wider than a word space.

    A gap of more than GUTTER_CHARS characters always cuts; where the engine itself broke its lines
    (`sources`: the engine line of each word, None when unknown) a gap of more than SPACE_CHARS cuts,
    so that lines are only joined across a plain word space. On a `scanned` page a ruled line that the
    engine read as text ("|") cuts too; in a PDF's text layer rules are drawings, and a "|" was typed.
    """
    if not row:
        return []
    _measured(boxes)
    char = median(char_width(boxes[i], texts[i]) for i in row)
    runs = [[row[0]]]
    reach = boxes[row[0]][2]
    for previous, i in zip(row, row[1:], strict=False):
        gap = boxes[i][0] - reach
        broken = sources is not None and sources[i] is not None and sources[i] != sources[previous]
        ruled = scanned and (_is_rule(texts[i]) or _is_rule(texts[previous]))
        if ruled or (char > 0 and gap > (SPACE_CHARS if broken else GUTTER_CHARS) * char):
            runs.append([i])
        else:
            runs[-1].append(i)
        reach = max(reach, boxes[i][2])
    return runs


def _is_rule(text: str) -> bool:
    """A "word" an OCR engine made of a ruled line: only bars and brackets (Tesseract reads a table's
    vertical rules as "|", "||", "|]"). It stands between cells, so a line stops at it."""
    return bool(text) and all(c in RULE_GLYPHS for c in text)


def text_lines(boxes: Sequence[Box], texts: Sequence[str], sources: Sequence[object] | None = None, *,
               scanned: bool = True, skew: float | None = None) -> list[list[int]]:
    """Lines of words in reading order (rows top to bottom, runs left to right), as word indices.
    `skew`: the page's slope when the engine knows it (skew_of_quads), else estimated from the words."""
    lines: list[list[int]] = []
    for row in visual_rows(boxes, skew=skew):
        lines += split_gutters(row, boxes, texts, sources, scanned=scanned)
    return lines


# ------------------------------------------------------------------------------------- reading order

# Columns of text, or of printed items flowed over a page, are each at least this many characters wide and of
# like widths (the narrower at least COLUMN_LIKENESS of the wider); a column of items holds MIN_COLUMN_LINES.
MIN_COLUMN_CHARS = 12
COLUMN_LIKENESS = 0.5
MIN_COLUMN_LINES = 8
# A gutter between columns is a few characters wide; a wider gap inside the print is the space between labels
# and the values set far to their right (a form's totals, figures at a column's right edge).
MAX_GUTTER_CHARS = 8
# Printed items flowed over columns turn from a name to figures alone (or back) row after row: at least
# ITEM_TURNS turns, in at least ITEM_TURN_SHARE of a column's rows (an item printed over two or three lines).
ITEM_TURNS = 4
ITEM_TURN_SHARE = 1 / 3
# Running text fills its column: most lines (PROSE_SHARE) are at least PROSE_FILL of its width.
PROSE_FILL = 0.6
PROSE_SHARE = 0.75
MIN_PROSE_LINES = 3
# A gutter may have titles, rules or signatures running across it above or below the columns: at most this
# share of the lines.
ACROSS_SHARE = 0.25
# A band across the whole print at least this many text heights high is a section break, not a gap between rows.
SECTION_HEIGHTS = 1.0


def reading_order(boxes: Sequence[Box], texts: Sequence[str] | None = None, *, skew: float = 0.0) -> list[int]:
    """Indices of `boxes` (the lines, or tables, of one page) in reading order.

    The page is cut into columns where a gutter runs down it (`_columns`: a narrow band between two sides alike
    in width, each a column of printed items, not a table's columns; titles or signatures across it above or
    below the columns read before or after them), else into sections where a band at least SECTION_HEIGHTS of text
    high runs across all of it; each part is read the same way, one after the other, left or top first.
    Anything else is read row by row (`visual_rows`), each row left to right: a form's labels with the values
    beside them, a table's names with their figures. Every width and height is the text's own (characters,
    text heights), never the page's, so blank space around the print changes nothing; the page's skew (`skew`,
    dy per dx) is taken out first, so a turned scan still shows its bands.
    """
    _measured(boxes)
    if not boxes:
        return []
    level = [straightened(b, skew) for b in boxes]
    heights = sorted(b.height for b in level if b.height > 0)
    height = heights[len(heights) // 2] if heights else 0.0
    chars = [b.width / len(t) for b, t in zip(boxes, texts or (), strict=False) if t and "\n" not in t and b.width > 0]
    char = median(chars) if chars else 0.5 * height
    figures = [numbers_only(t) for t in texts] if texts is not None else [False] * len(boxes)
    out: list[int] = []
    stack = [list(range(len(level)))]  # a stack, not recursion: a dense page may hold 1000+ lines
    while stack:
        idx = stack.pop()
        parts = _columns(idx, level, figures, char)
        if len(parts) == 1:
            parts = _sections(idx, level, SECTION_HEIGHTS * height)
        if len(parts) == 1:
            out += [idx[k] for row in visual_rows([level[i] for i in idx], skew=0.0) for k in row]
        else:
            stack += reversed(parts)
    return out


def numbers_only(text: str) -> bool:
    """A line of figures alone: every word a number, a digit word or punctuation."""
    words = [w for w in text.split() if any(c.isalnum() for c in w)]
    return bool(words) and all(any(c.isdigit() for c in w) or digit_words(w) is not None for w in words)


def _sections(idx: list[int], boxes: Sequence[Box], min_band: float) -> list[list[int]]:
    """`idx` cut where a band at least `min_band` high runs across all of it, top first."""
    order = sorted(idx, key=lambda i: boxes[i].y0)
    parts, reach = [[order[0]]], boxes[order[0]].y1
    for i in order[1:]:
        if min_band > 0 and boxes[i].y0 - reach >= min_band:
            parts.append([])
        parts[-1].append(i)
        reach = max(reach, boxes[i].y1)
    return parts


def _columns(idx: list[int], boxes: Sequence[Box], figures: Sequence[bool], char: float) -> list[list[int]]:
    """`idx` cut at the widest gutter that separates columns, left first; whole when none does (a wider gap may
    lie inside a column: between names and their figures set at its right edge). Lines running across the
    gutter above or below the columns (a title, a rule, signatures under both) are read before or after them."""
    if len(idx) < 2 * MIN_PROSE_LINES:
        return [idx]
    for start, end in _thin_bands(idx, boxes, ACROSS_SHARE * len(idx)):
        if end - start > MAX_GUTTER_CHARS * char:
            continue
        across = sorted(boxes[i].cy for i in idx if boxes[i].x0 < end and boxes[i].x1 > start)
        # the lines between two that run across the gutter, the longest such stretch
        edges = [float("-inf"), *across, float("inf")]
        top, bottom = max(zip(edges, edges[1:], strict=False),
                          key=lambda e: sum(e[0] < boxes[i].cy < e[1] for i in idx))
        inside = [i for i in idx if top < boxes[i].cy < bottom]
        sides = [i for i in inside if boxes[i].x1 <= start], [i for i in inside if boxes[i].x1 > start]
        if not all(_is_column(side, boxes, figures, char) for side in sides):
            continue
        widths = [max(boxes[i].x1 for i in side) - min(boxes[i].x0 for i in side) for side in sides]
        if min(widths) < COLUMN_LIKENESS * max(widths):
            continue
        above = [i for i in idx if boxes[i].cy <= top]
        below = [i for i in idx if boxes[i].cy >= bottom]
        return [part for part in (above, *sides, below) if part]
    return [idx]


def _thin_bands(idx: list[int], boxes: Sequence[Box], most: float) -> list[tuple[float, float]]:
    """The x intervals that at most `most` of the lines run across (and lines on both sides), widest first."""
    events = sorted([(boxes[i].x0, 1) for i in idx] + [(boxes[i].x1, -1) for i in idx])
    bands, depth, opened = [], 0, None
    left, right = events[0][0], events[-1][0]
    for x, step in events:
        if depth <= most and opened is not None and x > opened and left < opened:
            bands.append((opened, x))
        depth += step
        opened = x if depth <= most else None
    return sorted((b for b in bands if b[1] < right), key=lambda b: b[0] - b[1])


def _is_column(side: list[int], boxes: Sequence[Box], figures: Sequence[bool], char: float) -> bool:
    """Whether lines on one side of a gutter are a column: of running text (most of its lines fill its width),
    or of printed items (turning row after row between a name and figures alone: an item over two lines or
    more, the next item's name...), as the columns of a table never do (each holds one kind of thing, a row's
    label beside its figures, and its cells leave most of the width blank)."""
    if len(side) < MIN_PROSE_LINES:
        return False
    width = max(boxes[i].x1 for i in side) - min(boxes[i].x0 for i in side)
    if width < MIN_COLUMN_CHARS * char:
        return False
    full = sum(boxes[i].width >= PROSE_FILL * width and not figures[i] for i in side)
    if full >= PROSE_SHARE * len(side):
        return True  # a column of running text: its lines fill its width
    if len(side) < MIN_COLUMN_LINES:
        return False
    return turns_like_items([all(figures[side[k]] for k in row)
                             for row in visual_rows([boxes[i] for i in side], skew=0.0)])


def turns_like_items(figures: Sequence[bool]) -> bool:
    """Whether a column's lines, top to bottom, each figures alone or not, turn between the two as printed items
    flowed down a column do (a name, its figures on the next line, the next name...): ITEM_TURNS turns or more,
    in at least ITEM_TURN_SHARE of its lines."""
    turns = sum(a != b for a, b in zip(figures, figures[1:], strict=False))
    return turns >= ITEM_TURNS and turns >= ITEM_TURN_SHARE * len(figures)


# --------------------------------------------------------------------------------------------- tables


@dataclass
class GridCell:
    """One cell of a detected table: 1-based row/column with spans, its box and the words inside."""

    row: int
    column: int
    row_span: int
    column_span: int
    box: Box
    words: list[int] = field(default_factory=list)


def words_in_cells(cells: Sequence[GridCell], boxes: Sequence[Box]) -> None:
    """Give each word to the smallest cell holding its centre (fills `cell.words`)."""
    _measured(boxes)
    for cell in cells:
        cell.words = []
    by_area = sorted(cells, key=lambda c: (c.box[2] - c.box[0]) * (c.box[3] - c.box[1]))
    for i, box in enumerate(boxes):
        x, y = _centre_x(box), _centre_y(box)
        for cell in by_area:
            x0, y0, x1, y1 = cell.box
            if x0 <= x <= x1 and y0 <= y <= y1:
                cell.words.append(i)
                break


def refine_rows(cells: Sequence[GridCell], bands: Sequence[tuple[float, float]], boxes: Sequence[Box],
                *, skew: float = 0.0) -> list[GridCell]:
    """Split table rows that hold several visual rows lined up across their cells.

    `bands[r - 1]` is the (top, bottom) of detected row r; `cells[*].words` index `boxes` (see
    words_in_cells). A detected row is cut between its visual rows that hold words in two or more of its
    cells; a visual row with words in one cell only (a wrapped line, a label centred between rows) stays
    with the nearest such row. Whether a column follows the new rows is decided over the whole table: a
    column whose cells hold several of those rows follows them and each of its cells is split, one per
    row; a column whose cells hold one text each (a candidate name merged over its parties) keeps one cell
    that spans the new rows. Nothing is split on the table's say unless more columns follow the rows than
    hold one text: a row where two wrapped cells sit beside two single-line cells reads as wrapped text, not
    as two rows. A detected row is also split on its own say where more of its cells hold several of its
    visual rows than hold one (a rule the finder missed between two rows of an otherwise ruled table, whose
    other rows vote for wrapped text), those cells then following its rows.
    Returns new cells with rows renumbered from 1.
    """
    if not cells or not bands:
        return list(cells)
    _measured(boxes)
    row_of: dict[int, int] = {}
    for row_index, row in enumerate(visual_rows(boxes, skew=skew)):
        for i in row:
            row_of[i] = row_index
    groups = {r: _band_groups(r, cells, bands[r - 1], boxes, row_of) for r in range(1, len(bands) + 1)}

    follow: Counter[int] = Counter()
    single: Counter[int] = Counter()
    held: dict[int, dict[int, int]] = {}  # detected row -> column -> how many of its visual rows the cell holds
    for r, band_groups in groups.items():
        if len(band_groups) < 2:
            continue
        held[r] = {}
        for cell in cells:
            if cell.row != r or cell.row_span != 1 or not cell.words:
                continue
            held[r][cell.column] = sum(any(i in group for i in cell.words) for group in band_groups)
            (follow if held[r][cell.column] >= 2 else single)[cell.column] += 1
    # A tie follows the rows: splitting a label column only moves the label to one of its rows, while
    # letting a data column span would show its value on the first row.
    following = {c for c in follow if follow[c] >= single[c]}
    singles = {c for c in single if single[c] > follow[c]}
    table_says = len(following) > len(singles)
    splitting: dict[int, set[int]] = {}  # detected row -> the columns whose cells are split there
    for r, columns in held.items():
        many = {c for c, n in columns.items() if n >= 2}
        if len(many) > len(columns) - len(many):
            splitting[r] = many | (following if table_says else set())
        elif table_says and following & columns.keys():
            splitting[r] = set(following)
    if not splitting:
        return list(cells)

    counts = [len(groups[r]) if r in splitting else 1 for r in range(1, len(bands) + 1)]
    first = [1 + sum(counts[:k]) for k in range(len(counts))]  # new number of each band's first row
    # The new rows meet halfway between the words of the following columns (a label merged over the rows
    # may sit anywhere in its cell).
    followers = {i for c in cells if c.row_span == 1 and c.column in splitting.get(c.row, following) for i in c.words}
    out: list[GridCell] = []
    for cell in cells:
        if cell.row_span == 1 and cell.row in splitting and cell.column in splitting[cell.row]:
            out += _split_cell(cell, groups[cell.row], bands[cell.row - 1], first[cell.row - 1], boxes, followers)
            continue
        last = min(cell.row + cell.row_span - 1, len(bands))
        out.append(replace(cell, row=first[cell.row - 1], row_span=sum(counts[cell.row - 1:last]),
                           words=list(cell.words)))
    return sorted(out, key=lambda c: (c.row, c.column))


def _band_groups(r: int, cells: Sequence[GridCell], band: tuple[float, float], boxes: Sequence[Box],
                 row_of: dict[int, int]) -> list[set[int]]:
    """The words of detected row `r`, grouped into the new rows it holds (one group: nothing to split)."""
    top, bottom = band
    cells_of: dict[int, set[int]] = {}  # visual row -> cells (by position in `cells`) it has words in
    words_of: dict[int, set[int]] = {}
    for k, cell in enumerate(cells):
        if not cell.row <= r < cell.row + cell.row_span:
            continue
        for i in cell.words:
            if top <= _centre_y(boxes[i]) < bottom:
                cells_of.setdefault(row_of[i], set()).add(k)
                words_of.setdefault(row_of[i], set()).add(i)
    if not words_of:
        return []
    rows = sorted(words_of, key=lambda v: median(_centre_y(boxes[i]) for i in words_of[v]))
    lined_up = [v for v in rows if len(cells_of[v]) >= 2]
    if len(lined_up) < 2:
        return [set().union(*words_of.values())]
    centre = {v: median(_centre_y(boxes[i]) for i in words_of[v]) for v in rows}
    groups: dict[int, set[int]] = {v: set(words_of[v]) for v in lined_up}
    for v in rows:
        if v in groups:
            continue
        # Nearest lined-up row; on a tie the one above (wrapped text continues downwards).
        home = min(lined_up, key=lambda u: (abs(centre[u] - centre[v]), centre[u] > centre[v]))
        groups[home] |= words_of[v]
    return [groups[v] for v in lined_up]


def _split_cell(cell: GridCell, band_groups: list[set[int]], band: tuple[float, float], first_row: int,
                boxes: Sequence[Box], followers: set[int]) -> list[GridCell]:
    """One cell per new row of the band, each holding its row's words."""
    extents = []
    for group in band_groups:
        members = [boxes[i] for i in group if i in followers] or [boxes[i] for i in group]
        extents.append((min(b[1] for b in members), max(b[3] for b in members)))
    top, bottom = band
    edges = [top] + [
        min(max((extents[k][1] + extents[k + 1][0]) / 2, top), bottom) for k in range(len(extents) - 1)
    ] + [bottom]
    x0, _, x1, _ = cell.box
    return [
        GridCell(row=first_row + k, column=cell.column, row_span=1, column_span=cell.column_span,
                 box=(x0, edges[k], x1, edges[k + 1]), words=[i for i in cell.words if i in group])
        for k, group in enumerate(band_groups)
    ]


def split_spanning_cells(cells: Sequence[GridCell], boxes: Sequence[Box], *, skew: float = 0.0) -> list[GridCell]:
    """Cells that span several rows while their words line up with those rows, split into one cell per row.

    A table finder draws rows from ruled lines: a column ruled only around a group of rows (a candidate's
    party names, or their votes in words) comes out as one cell over the group, while the column beside it,
    ruled per row, splits the same rows. The words are the truth: where every word of such a cell sits level
    with the words of the single-row cells of one of the rows it spans, and they fall on two rows or more,
    the cell becomes one cell per spanned row holding that row's words. A text that stands apart from the
    rows (a candidate's name centred over its parties) is left as one spanning cell.
    """
    if not any(c.row_span > 1 and c.words for c in cells):
        return list(cells)
    _measured(boxes)
    row_of: dict[int, int] = {}
    for visual, row in enumerate(visual_rows(boxes, skew=skew)):
        for i in row:
            row_of[i] = visual
    singles: dict[int, list[GridCell]] = {}
    for c in cells:
        if c.row_span == 1:
            singles.setdefault(c.row, []).append(c)
    out: list[GridCell] = []
    for cell in cells:
        pieces = _row_pieces(cell, singles, row_of) if cell.row_span > 1 and cell.words else None
        out += pieces if pieces else [cell]
    return sorted(out, key=lambda c: (c.row, c.column))


def _row_pieces(cell: GridCell, singles: dict[int, list[GridCell]], row_of: dict[int, int]) -> list[GridCell] | None:
    """One cell per row `cell` spans, each with the words level with that row's single-row cells; None when a
    word lines up with none of them, when they fall on one row only, or when a spanned row has no single-row
    cell to tell where it lies."""
    spanned = range(cell.row, cell.row + cell.row_span)
    if any(not singles.get(r) for r in spanned):
        return None
    lined = {r: {row_of[i] for c in singles[r] if c.column != cell.column for i in c.words} for r in spanned}
    home: dict[int, int] = {}
    for i in cell.words:
        rows = [r for r in spanned if row_of[i] in lined[r]]
        if len(rows) != 1:
            return None
        home[i] = rows[0]
    if len(set(home.values())) < 2:
        return None
    x0, _, x1, _ = cell.box
    return [GridCell(row=r, column=cell.column, row_span=1, column_span=cell.column_span,
                     box=(x0, min(c.box[1] for c in singles[r]), x1, max(c.box[3] for c in singles[r])),
                     words=[i for i in cell.words if home[i] == r]) for r in spanned]
