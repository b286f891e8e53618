"""Draw one sheet of the forms family with PyMuPDF (pure): printed lines on a thermal strip or on paper.

A sheet is a flow of printed lines, top to bottom, as a receipt printer or a report program prints them: the
header (titles, place, header numbers, the code), per candidate a heading and its party lines, the totals, the
poll workers' signatures, the QR code. Each party line is laid out in the sheet's structure (sheetgen/forms.py):
digits and words after the name, the words on the next line, the words before the digits, or the name alone
with its figures under it; a leader of dots, dashes, underscores or spaces fills the gap to the figures.

On a strip the flow is one column as wide as the printable width of the paper, and the strip is as long as
its drawn length or its content, whichever is longer (a printer feeds what it prints; the line pitch spreads
the lines over the drawn length within a printer's range); cut over several pages, the cuts fall between
lines, like a printer that ejects a page, and the QR and signatures stay on the last page. On paper the flow
fills 1-3 columns under a full-width header and goes on to as many pages as it needs. In a monospaced font a
line is printed as one string, its parts on the character grid, as such a printer prints it.

Content that is not a convention (signers' names, times) comes from the stream `forms-details-<seed>`;
the cuts from `forms-cut-<seed>`.
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass, replace
from typing import Any

import pymupdf

from extraction.doctypes.acta.layout import CANDIDATES, TOTAL_KEYS
from sheetgen.conventions import bold_of
from sheetgen.forms import (
    CANDIDATE_LABELS,
    RECEIPT_FONTS,
    STRIP_PRINTABLE,
    FormConventions,
    font_file,
    is_mono,
    is_strip,
    strip_width,
)
from sheetgen.sampled_draw import _FIRST, _LAST, _ROLES, _extra, _id_number, draw_sheet
from sheetgen.sampled_draw import text_width as _base14_width

__all__ = ["draw_form", "form_page_size"]

PAPER_MARGIN = 36.0
GUTTER = 20.0
STRIP_TOP = 14.0
STRIP_FEED = 42.0  # paper fed past the cutter after the last line
PAPER_QR = 100.0


def form_page_size(c: FormConventions) -> tuple[float, float]:
    """The page's width and height before a strip's length is known (a strip's height is then set by draw)."""
    if is_strip(c.page):
        return strip_width(c.page), 0.0
    paper, orientation = c.page.split("-")
    w, h = pymupdf.paper_size(paper)
    return (h, w) if orientation == "landscape" else (w, h)


# ---------------------------------------------------------------- fonts


@functools.cache
def _ttf(font: str) -> pymupdf.Font:
    return pymupdf.Font(fontfile=font_file(font))


@functools.lru_cache(maxsize=16384)
def _unit(text: str, font: str) -> float:
    if font in RECEIPT_FONTS:
        return _ttf(font).text_length(text, fontsize=1.0)
    return _base14_width(text, size=1.0, font=font)


def width(text: str, font: str, size: float) -> float:
    return _unit(text, font) * size


def bold(font: str) -> str:
    return "rmobo" if font in RECEIPT_FONTS else bold_of(font)


# ---------------------------------------------------------------- the flow


@dataclass
class _Item:
    """One printed line (or the QR) of the flow."""

    height: float
    runs: tuple[tuple[float, str, str], ...] = ()  # (x from the frame's left, text, font)
    size: float = 0.0
    qr: float = 0.0  # the QR's side; it is drawn at x = qr_x
    qr_x: float = 0.0
    tail: bool = False  # signatures, the QR and what follows: kept together, on the last page
    gap: bool = False  # a feed of blank paper
    wide: bool = False  # the header on paper: printed across the page, above the columns


@dataclass(frozen=True)
class _Details:
    extras: tuple[str, ...]
    signers: tuple[tuple[str, str, str], ...]
    witnesses: tuple[tuple[str, str, str], ...]


def _details(c: FormConventions, printed: dict[str, Any]) -> _Details:
    rng = random.Random(f"forms-details-{c.seed}")
    extras = tuple(_extra(kind, rng, printed) for kind in c.extras)
    roles = rng.choice(_ROLES)[: c.signatures]

    def person(role: str) -> tuple[str, str, str]:
        return role, f"{rng.choice(_FIRST)} {rng.choice(_LAST)}", _id_number(rng, c.id_style)

    signers = tuple(person(role) for role in roles)
    witnesses = tuple(person("TESTIGO") for _ in range(rng.randint(0, 3)))
    return _Details(extras=extras, signers=signers, witnesses=witnesses)


class _Layout:
    """The lines of one sheet for a column `w` points wide, in the conventions `c`."""

    def __init__(self, c: FormConventions, printed: dict[str, Any], place: tuple[str, str, str, str],
                 details: _Details, w: float, pitch: float, gap: float = 0.0):
        self.c, self.p, self.place, self.d, self.w = c, printed, place, details, w
        self.gap = gap  # blank paper a printer feeds between sections and candidates (a strip: see _strip)
        self.font, self.bold, self.size = c.font, bold(c.font), c.size
        self.pitch = pitch
        self.mono = is_mono(c.font)
        self.cw = width("0", self.font, self.size)  # a character cell (monospaced fonts)
        self.space = width(" ", self.font, self.size)
        self.structure = c.structure

    # ------------------------------------------------------------ one line

    def line(self, runs: list[tuple[float, str, str]], **kw: Any) -> _Item:
        if self.mono and len({f for _, _, f in runs}) == 1 and len(runs) > 1:
            runs = [(runs[0][0], self._on_grid(runs), runs[0][2])]
        return _Item(height=self.pitch, runs=tuple(runs), size=self.size, **kw)

    def _on_grid(self, runs: list[tuple[float, str, str]]) -> str:
        """Runs of one monospaced line as the one string a printer prints (each part on its character cell)."""
        x0 = runs[0][0]
        out = ""
        for x, text, _ in runs:
            cell = round((x - x0) / self.cw)
            out += " " * max(cell - len(out), 1 if out else 0) + text
        return out

    def blank(self, share: float = 1.0, **kw: Any) -> _Item:
        return _Item(height=self.pitch * share, **kw)

    def feed(self, **kw: Any) -> list[_Item]:
        """The sheet's feed between sections (none on paper)."""
        return [_Item(height=self.gap, gap=True, **kw)] if self.gap else []

    def wrapped(self, text: str, font: str, align: str = "left", indent: int = 2, **kw: Any) -> list[_Item]:
        """`text` on as many lines as it needs, broken between words; continuation lines indented."""
        words, lines, current = text.split(), [], ""
        for word in words:
            joined = f"{current} {word}".strip()
            lead = indent * self.cw if lines else 0.0
            if current and width(joined, font, self.size) + lead > self.w:
                lines.append(current)
                current = word
            else:
                current = joined
        lines.append(current)
        items = []
        for i, s in enumerate(lines):
            lead = indent * self.cw if i else 0.0
            tw = width(s, font, self.size)
            x = {"center": (self.w - tw) / 2, "right": self.w - tw}.get(align, lead)
            if self.mono and align != "left":
                x = round(x / self.cw) * self.cw
            items.append(self.line([(max(x, 0.0), s, font)], **kw))
        return items

    def separator(self, char: str | None = None, **kw: Any) -> _Item:
        char = char or self.c.separator
        n = int(self.w / width(char, self.font, self.size))
        return self.line([(0.0, char * n, self.font)], **kw)

    # ------------------------------------------------------------ a row: name, digits, words

    def _leader(self, start: float, end: float) -> list[tuple[float, str, str]]:
        """The leader filling [start, end] (a space kept at each end), or nothing for a leader of spaces."""
        char = self.c.leader
        if char == " ":
            return []
        lw = width(char, self.font, self.size)
        n = int((end - start - 2 * self.space) / lw)
        return [(start + self.space, char * n, self.font)] if n > 0 else []

    def _at(self, x: float) -> float:
        return round(x / self.cw) * self.cw if self.mono else x

    def figure_x(self, name: str, name_font: str, figures: str, column: float | None) -> float:
        """Where the figures start after `name`, as the sheet aligns them."""
        fw = width(figures, self.font, self.size)
        name_end = width(name, name_font, self.size)
        if self.c.figures == "right":
            return self._at(self.w - fw) if not self.mono else self.w - len(figures) * self.cw
        if self.c.figures == "column" and column is not None:
            return column
        lw = width(self.c.leader, self.font, self.size)
        return self._at(name_end + 2 * self.space + self.c.follow * lw)

    def column_for(self, names: list[str], name_font: str) -> float:
        """The figures' column of a section: after its widest name and a short leader."""
        widest = max(width(n, name_font, self.size) for n in names)
        lw = width(self.c.leader, self.font, self.size)
        return self._at(widest + 2 * self.space + 3 * lw + (self.cw if self.mono else 0.0))

    def _fits(self, x: float, text: str, name_end: float) -> bool:
        return x >= name_end + self.space - 1e-6 and x + width(text, self.font, self.size) <= self.w + 1e-6

    def row(self, name: str, digits: str, words: str, name_font: str, column: float | None,
            structure: str | None = None) -> list[_Item] | None:
        """The lines of one row in the sheet's structure, or None when the row does not fit the line."""
        structure = structure or self.structure
        name_end = width(name, name_font, self.size)
        if structure in ("same-line", "words-first"):
            figures = f"{words} {digits}" if structure == "words-first" else f"{digits} {words}"
            x = self.figure_x(name, name_font, figures, column)
            if not self._fits(x, figures, name_end):
                return None
            return [self.line([(0.0, name, name_font), *self._leader(name_end, x), (x, figures, self.font)])]
        indent = self.c.indent * self.cw
        if structure == "next-line":
            x = self.figure_x(name, name_font, digits, column)
            if not self._fits(x, digits, name_end):
                return None
            first = self.line([(0.0, name, name_font), *self._leader(name_end, x), (x, digits, self.font)])
            ww = width(words, self.font, self.size)
            wx = indent if indent + ww <= self.w else 0.0
            if self.c.figures == "right":
                wx = self.w - ww if not self.mono else self.w - len(words) * self.cw
            return [first, self.line([(wx, words, self.font)])]
        # name-alone: the name, then its figures on one line or two
        parts = [f"{digits} {words}"] if self.c.figure_lines == 1 else [digits, words]
        out = [self.line([(0.0, name, name_font)])]
        for part in parts:
            pw = width(part, self.font, self.size)
            x = (self.w - pw if not self.mono else self.w - len(part) * self.cw) if self.c.figures == "right" else indent
            if x + pw > self.w:
                x = 0.0
            out.append(self.line([(max(x, 0.0), part, self.font)]))
        return out

    def fits(self) -> bool:
        """Whether every party row fits the line in the sheet's structure."""
        column = self.column_for([r["party"] for r in self.p["rows"]], self.font)
        return all(self.row(r["party"], r["votes_text"], r["votes_words"], self.font, column) is not None
                   for r in self.p["rows"])

    # ------------------------------------------------------------ the sections

    def header(self, wide: bool) -> list[_Item]:
        c = self.c
        items: list[_Item] = []
        align = c.title_align
        for text in c.titles:
            font = self.bold if "ELECCI" in text or text.startswith("ACTA") else self.font
            items += self.wrapped(text, font, align=align, wide=wide)
        if c.separators != "none":
            items.append(self.separator(wide=wide))
        state, municipality, parish, centre = self.place
        labels = c.place_labels
        values = (state, municipality, parish.removeprefix("PQ. ") if labels[2] == "PQ." else parish, centre)
        for label, value in zip(labels, values, strict=True):
            items += self.wrapped(f"{label}{'' if label.endswith('.') else ':'} {value}", self.font, wide=wide)
        for extra in self.d.extras:
            items += self.wrapped(extra, self.font, wide=wide)
        if c.code_at == "header":
            items += self.code(wide=wide)
        if c.separators != "none":
            items.append(self.separator(wide=wide))
        return items + self.feed(wide=wide)

    def code(self, **kw: Any) -> list[_Item]:
        text = f"{self.c.code_label} {self.p['acta_id']}".strip()
        if width(text, self.bold, self.size) <= self.w:
            return [self.line([(0.0, text, self.bold)], **kw)]
        return [self.line([(0.0, self.c.code_label, self.bold)], **kw),
                self.line([(0.0, self.p["acta_id"], self.bold)], **kw)]

    def parties(self) -> list[_Item]:
        c, rows = self.c, iter(self.p["rows"])
        column = self.column_for([r["party"] for r in self.p["rows"]], self.font)
        items: list[_Item] = []
        for g, (candidate, parties) in enumerate(CANDIDATES):
            if g:
                items += self.feed()
            if g and c.separators == "candidates":
                items.append(self.separator())
            elif g and c.candidate != "none":
                items.append(self.blank(0.5))
            if c.candidate == "labelled":
                label = CANDIDATE_LABELS[c.seed % len(CANDIDATE_LABELS)]
                items += self.wrapped(f"{label} {candidate}", self.bold, indent=0)
            elif c.candidate in ("heading", "heading-rule"):
                items += self.wrapped(candidate, self.bold, indent=0)
                if c.candidate == "heading-rule":
                    items.append(self.separator("-" if c.separators == "none" else None))
            for _ in parties:
                r = next(rows)
                items += self.row(r["party"], r["votes_text"], r["votes_words"], self.font, column) or []
        return items

    def totals(self) -> list[_Item]:
        """The totals in the rows' structure; a label too long for it gets its own line, the figures under it."""
        labels, p = self.c.totals_labels, self.p
        fitting = [lab for lab, k in zip(labels, TOTAL_KEYS, strict=True)
                   if self.row(lab, p[f"{k}_text"], p[f"{k}_words"], self.bold, None) is not None]
        column = self.column_for(fitting, self.bold) if fitting else None
        items = self.feed() + ([self.separator()] if self.c.separators != "none" else [self.blank(0.5)])
        for label, key in zip(labels, TOTAL_KEYS, strict=True):
            digits, words = p[f"{key}_text"], p[f"{key}_words"]
            lines = self.row(label, digits, words, self.bold, column)
            if lines is None:
                lines = self.row(label, digits, words, self.bold, None, structure="name-alone")
            items += lines or []
        if self.c.separators != "none":
            items.append(self.separator())
        return items

    def tail(self, qr_side: float, qr_x: float) -> list[_Item]:
        """Signatures, the QR, the code when it is printed at the foot: kept together on the last page."""
        items = self.feed(tail=True) + [self.blank(0.5, tail=True)]
        for title, people in (("MIEMBROS DE MESA", self.d.signers), ("TESTIGOS", self.d.witnesses)):
            if not people:
                continue
            items += self.wrapped(title, self.bold, tail=True)
            for role, name, ident in people:
                items.append(self.blank(1.0, tail=True))
                items.append(self.line([(0.0, "FIRMA: " + "_" * max(8, int((self.w * 0.7) / self.cw) - 7), self.font)],
                                       tail=True))
                for text in (role, name, ident):
                    items += self.wrapped(text, self.font, tail=True)
        items += self.feed(tail=True) or [self.blank(1.0, tail=True)]
        items.append(_Item(height=qr_side + self.pitch * 0.5, qr=qr_side, qr_x=qr_x, tail=True))
        if self.c.code_at == "footer":
            items += self.code(tail=True)
        return items


# ---------------------------------------------------------------- pages


def _resolved(c: FormConventions, layout_of) -> FormConventions:
    """The structure as printed: same-line or words-first whose rows do not fit the line print next-line."""
    if c.structure in ("same-line", "words-first") and not layout_of(c).fits():
        c = replace(c, structure="next-line")
    if c.structure == "next-line" and not layout_of(c).fits():
        c = replace(c, structure="name-alone")
    return c


def _draw_items(page: pymupdf.Page, items: list[tuple[float, float, _Item]], qr_png: bytes) -> None:
    """Items at (x, y) of their top; the text of each line on its baseline."""
    for font in sorted({f for _, _, it in items for _, _, f in it.runs if f in RECEIPT_FONTS}):
        page.insert_font(fontname=font, fontfile=font_file(font))
    shape = page.new_shape()
    for x, y, item in items:
        base = y + item.height * 0.5 + item.size * 0.36
        for dx, text, font in item.runs:
            shape.insert_text((x + dx, base), text, fontsize=item.size, fontname=font, color=(0, 0, 0))
    shape.commit()
    for x, y, item in items:
        if item.qr:
            page.insert_image(pymupdf.Rect(x + item.qr_x, y, x + item.qr_x + item.qr, y + item.qr), stream=qr_png)


def _cuts(heights: list[float], tail_start: int, n: int, rng: random.Random) -> list[int]:
    """Indexes the n pages start at: between lines, near equal heights, never inside the tail."""
    total = sum(heights)
    tops = [sum(heights[:i]) for i in range(len(heights) + 1)]
    starts = [0]
    for k in range(1, n):
        target = total * k / n + rng.uniform(-0.12, 0.12) * total / n
        allowed = [i for i in range(starts[-1] + 1, tail_start + 1)]
        if not allowed:
            break
        starts.append(min(allowed, key=lambda i: abs(tops[i] - target)))
    return starts


def _strip(doc: pymupdf.Document, c: FormConventions, printed: dict, place: tuple, details: _Details,
           qr_png: bytes) -> FormConventions:
    rng = random.Random(f"forms-length-{c.seed}")
    length = rng.uniform(1550.0, 2700.0)  # 55-95 cm: what the drawn strip would be
    w = STRIP_PRINTABLE[c.page]
    x0 = (strip_width(c.page) - w) / 2
    qr_side = round(w * c.qr_share, 1)

    def layout_of(conv: FormConventions, pitch: float = 12.0, gap: float = 0.0) -> _Layout:
        return _Layout(conv, printed, place, details, w, pitch, gap)

    c = _resolved(c, layout_of)

    def flow(pitch: float, gap: float) -> list[_Item]:
        lay = layout_of(c, pitch, gap)
        return lay.header(False) + lay.parties() + lay.totals() + lay.tail(qr_side, (w - qr_side) / 2)

    # The printer spreads its lines over the strip's drawn length: a line pitch of 1.25-2.4 times the size (at
    # least 9 pt, at most 13), then feeds of up to three lines between sections and candidates. What is still
    # short of the length is not printed: the strip ends where its content does.
    probe = flow(1.0, 1e-3)
    fixed = sum(it.height for it in probe if it.qr)
    lines = sum(it.height for it in probe if not it.qr and not it.gap)
    feeds = sum(1 for it in probe if it.gap)
    room = length - STRIP_TOP - STRIP_FEED - fixed
    pitch = min(max(room / lines, 1.25 * c.size, 9.0), max(2.4 * c.size, 13.0))
    gap = min(max(room - lines * pitch, 0.0) / feeds, 3 * pitch)
    items = flow(round(pitch, 2), round(gap, 2))
    heights = [it.height for it in items]
    tail_start = next(i for i, it in enumerate(items) if it.tail)
    starts = _cuts(heights, tail_start, c.pages, random.Random(f"forms-cut-{c.seed}"))
    chunks = [items[a:b] for a, b in zip(starts, [*starts[1:], len(items)], strict=True)]
    content = max(sum(it.height for it in chunk) for chunk in chunks)
    height = STRIP_TOP + content + STRIP_FEED
    for chunk in chunks:
        page = doc.new_page(width=strip_width(c.page), height=round(height, 1))
        placed, y = [], STRIP_TOP
        for item in chunk:
            placed.append((x0, y, item))
            y += item.height
        _draw_items(page, placed, qr_png)
    return replace(c, pages=len(chunks), pitch=round(pitch / c.size, 2))


def _paper(doc: pymupdf.Document, c: FormConventions, printed: dict, place: tuple, details: _Details,
           qr_png: bytes) -> FormConventions:
    pw, ph = form_page_size(c)
    pitch = c.size * c.pitch
    inner = pw - 2 * PAPER_MARGIN

    def col_w(columns: int) -> float:
        return (inner - GUTTER * (columns - 1)) / columns

    def layout(conv: FormConventions, columns: int) -> _Layout:
        return _Layout(conv, printed, place, details, col_w(columns), pitch)

    columns = c.columns  # fewer when the drawn structure's rows do not fit a column
    while columns > 1 and _resolved(c, lambda conv, n=columns: layout(conv, n)).structure != c.structure:
        columns -= 1
    c = _resolved(replace(c, columns=columns), lambda conv: layout(conv, columns))
    w, lay = col_w(columns), layout(c, columns)
    head = _Layout(c, printed, place, details, inner, pitch).header(True) if columns > 1 else lay.header(False)
    qr_side = min(PAPER_QR, w)
    body = ([] if columns > 1 else head) + lay.parties() + lay.totals() + lay.tail(qr_side, 0.0)
    pages: list[list[tuple[float, float, _Item]]] = [[]]
    y = PAPER_MARGIN
    if columns > 1:
        for item in head:
            pages[0].append((PAPER_MARGIN, y, item))
            y += item.height
        y += pitch * 0.5
    top, column, bottom = y, 0, ph - PAPER_MARGIN
    tail_at = next(i for i, it in enumerate(body) if it.tail)
    tail_h = sum(it.height for it in body[tail_at:])
    for i, item in enumerate(body):
        need = tail_h if i == tail_at else item.height  # the tail starts where all of it fits
        if y + need > bottom and y > top:
            column += 1
            if column == columns:
                pages.append([])
                column, top = 0, PAPER_MARGIN
            y = top
        pages[-1].append((PAPER_MARGIN + column * (w + GUTTER), y, item))
        y += item.height
    for placed in pages:
        page = doc.new_page(width=pw, height=ph)
        _draw_items(page, placed, qr_png)
    return replace(c, pages=len(pages), columns=columns)


def draw_form(doc: pymupdf.Document, c: FormConventions, printed: dict[str, Any], place: tuple[str, str, str, str],
              qr_png: bytes) -> FormConventions:
    """Add the sheet's pages to `doc`; return the conventions as drawn."""
    if c.structure == "table":
        assert c.table is not None
        w, h = form_page_size(c)
        page = doc.new_page(width=w, height=h)
        return replace(c, table=draw_sheet(page, c.table, printed, place, qr_png))
    details = _details(c, printed)
    if is_strip(c.page):
        return _strip(doc, c, printed, place, details, qr_png)
    return _paper(doc, c, printed, place, details, qr_png)
