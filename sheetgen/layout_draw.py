"""Draw a tally sheet in any `Layout` (pure): header, place, code, the party table, totals, signatures, QR.

The page is built top to bottom: titles, place, code (unless boxed or in the footer), totals when they come
first, the table in 1-3 columns, totals when they follow, then the footer (signatures, QR, totals or code
when the layout puts them there). Row height and font size shrink until everything fits the page.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import pymupdf

from extraction.doctypes.acta.layout import CANDIDATES, TOTAL_KEYS
from sheetgen.layouts import Layout
from sheetgen.pen import BOLD, Pen, signatures, text_width

MARGIN = 32.0
GAP = 14.0  # between table columns
QR_SIDE = 100.0
FOOTER_H = 112.0
GREY, LIGHT = (0.82, 0.82, 0.82), (0.92, 0.92, 0.92)
RULED = ("grid", "grouped")  # grouped: ruled columns, a rule only around each candidate's rows


@dataclass
class _Entry:
    kind: str  # "head" (a candidate heading) | "row"
    candidate: str
    row: dict[str, Any] | None = None
    first: bool = False  # first row of its candidate in this column
    span: int = 1  # rows of its candidate in this column (for merged cells)


def _columns(layout: Layout, rows: list[dict[str, Any]]) -> list[list[_Entry]]:
    """Candidates split into contiguous columns of about equal height."""
    groups: list[list[_Entry]] = []
    it = iter(rows)
    for candidate, parties in CANDIDATES:
        group = [_Entry("head", candidate)] if layout.candidate == "heading" else []
        party_entries = [_Entry("row", candidate, next(it)) for _ in parties]
        party_entries[0].first = True
        for e in party_entries:
            e.span = len(parties)
        groups.append(group + party_entries)
    # The contiguous split whose tallest column is shortest (10 candidates: few splits to try).
    best: list[list[_Entry]] = []
    for cuts in itertools.combinations(range(1, len(groups)), layout.columns - 1):
        bounds = [0, *cuts, len(groups)]
        columns = [[e for g in groups[a:b] for e in g] for a, b in itertools.pairwise(bounds)]
        if not best or max(map(len, columns)) < max(map(len, best)):
            best = columns
    return best


def _last_of_group(entries: list[_Entry], e: _Entry) -> bool:
    return e is entries[-1] or entries[entries.index(e) + 1].candidate != e.candidate


@dataclass
class _Geometry:
    size: float
    row_h: float
    cand_w: float
    party_w: float
    digits_w: float
    words_w: float


def _fit(layout: Layout, p: dict[str, Any], col_w: float, row_h: float) -> _Geometry:
    font, bold = layout.font, BOLD[layout.font]
    party_font = bold if layout.bold_parties else font
    words = [r["votes_words"] for r in p["rows"]] + [p[f"{k}_words"] for k in TOTAL_KEYS]
    size = min(layout.size, row_h / 1.45)
    while True:
        cand_w = 0.0
        if layout.candidate in ("merged", "repeated"):
            cand_w = max(text_width(c, size=size * 0.9, font=bold) for c, _ in CANDIDATES) + 8
        party_w = max(text_width(r["party"], size=size, font=party_font) for r in p["rows"]) + 10
        if layout.totals_at != "footer":
            party_w = max(party_w, *(text_width(t, size=size * 0.9, font=bold) + 10 for t in layout.totals_labels))
        digits_w = max(text_width("0" * len(p["rows"][0]["votes_text"]), size=size + 0.5, font=bold) + 14,
                       text_width(layout.headers[2], size=size * 0.85, font=bold) + 8)
        words_w = max(text_width(w, size=size * 0.95, font=font) for w in words) + 10
        if cand_w + party_w + digits_w + words_w <= col_w or size < 4.5:
            break
        size *= 0.94
    # What is left widens the words, then the party and candidate columns.
    spare = col_w - cand_w - party_w - digits_w - words_w
    words_w += spare * 0.5
    if cand_w:
        cand_w += spare * 0.25
        party_w += spare * 0.25
    else:
        party_w += spare * 0.5
    return _Geometry(size=size, row_h=row_h, cand_w=cand_w, party_w=party_w, digits_w=digits_w, words_w=words_w)


class _Sheet:
    def __init__(self, page: pymupdf.Page, layout: Layout, printed: dict[str, Any]):
        self.page, self.layout, self.p = page, layout, printed
        self.pen = Pen(page)
        self.w, self.h = page.rect.width, page.rect.height
        self.font, self.bold = layout.font, BOLD[layout.font]

    # ---------------------------------------------------------------- header

    def header(self, place: tuple[str, str, str, str], mesa: str, qr_png: bytes) -> float:
        lay, pen = self.layout, self.pen
        right = self.w - MARGIN
        if lay.qr_at == "top-right" or lay.code_at == "top-right":
            right -= QR_SIDE + 12 if lay.qr_at == "top-right" else 132
        y = MARGIN + 6
        titles = [("REPUBLICA BOLIVARIANA DE VENEZUELA - CONSEJO NACIONAL ELECTORAL", 7.0, self.font),
                  ("ELECCION PRESIDENCIAL 2024", 13.0, self.bold), ("ACTA DE ESCRUTINIO", 9.0, self.bold)]
        for text, size, font in titles:
            y += size + 3
            pen.text(MARGIN, y, text, size=size, font=font, align=lay.title_align, width=right - MARGIN)
        y += 10
        y = self._place(place, mesa, y, right)
        code = f"{lay.code_label} {self.p['acta_id']}".strip()
        if lay.code_at == "header":
            y += 11
            pen.text(MARGIN, y, code, size=9, font=self.bold)
            y += 4
        elif lay.code_at == "top-right":
            x0, x1 = self.w - MARGIN - 122, self.w - MARGIN
            pen.rect(x0, MARGIN, x1, MARGIN + 34, width=0.8)
            if lay.code_label:
                pen.text(x0, MARGIN + 12, lay.code_label, size=7, font=self.font, align="center", width=x1 - x0)
            pen.text(x0, MARGIN + (27 if lay.code_label else 21), self.p["acta_id"], size=10, font=self.bold,
                     align="center", width=x1 - x0)
            y = max(y, MARGIN + 40)
        if lay.qr_at == "top-right":
            x1 = self.w - MARGIN
            self.page.insert_image(pymupdf.Rect(x1 - QR_SIDE, MARGIN, x1, MARGIN + QR_SIDE), stream=qr_png)
            y = max(y, MARGIN + QR_SIDE + 4)
        return y + 8

    def _place(self, place: tuple[str, str, str, str], mesa: str, y: float, right: float) -> float:
        lay, pen = self.layout, self.pen
        state, municipality, parish, centre = place
        l_state, l_mun, l_par, l_centre, l_mesa = lay.place_labels
        if lay.place == "lines":
            for s in (f"{l_state}: {state}    {l_mun}: {municipality}", f"{l_par}: {parish}",
                      f"{l_centre}: {centre}    {l_mesa}: {mesa}"):
                y += 11
                pen.text(MARGIN, y, s, size=8, font=self.font)
            return y
        if lay.place == "compact":
            parts = [f"{l_state} {state}", f"{l_mun} {municipality}", f"{l_par} {parish.removeprefix('PQ. ')}",
                     f"{l_centre} {centre}", f"{l_mesa} {mesa}"]
            line, lines = "", []
            for part in parts:
                candidate = f"{line} / {part}" if line else part
                if text_width(candidate, size=7.5, font=self.font) > right - MARGIN:
                    lines.append(line)
                    candidate = part
                line = candidate
            for s in [*lines, line]:
                y += 10
                pen.text(MARGIN, y, s, size=7.5, font=self.font)
            return y
        # boxes: a label over each value
        values = [state, municipality, parish, centre, mesa]
        labels = [l_state, l_mun, l_par, l_centre, l_mesa]
        shares = [0.16, 0.17, 0.2, 0.37, 0.1]
        x = MARGIN
        for label, value, share in zip(labels, values, shares, strict=True):
            x1 = x + (right - MARGIN) * share
            pen.rect(x, y + 2, x1, y + 26, width=0.5)
            pen.text(x + 3, y + 10, label, size=5.5, font=self.font)
            size = 7.5
            while text_width(value, size=size, font=self.bold) > x1 - x - 6 and size > 4:
                size -= 0.25
            pen.text(x + 3, y + 22, value, size=size, font=self.bold)
            x = x1
        return y + 28

    # ---------------------------------------------------------------- one row of label | digits | words

    def _value_cells(self, x: float, y: float, g: _Geometry, digits: str, words: str, *, boxed: bool) -> None:
        lay, pen = self.layout, self.pen
        baseline = y + g.row_h * 0.5 + g.size * 0.36
        if lay.order == "digits-words":
            dx, wx = x, x + g.digits_w
        else:
            wx, dx = x, x + g.words_w
        if boxed:
            pen.rect(dx + 3, y + 1.5, dx + g.digits_w - 3, y + g.row_h - 1.5, width=0.6)
        pen.text(dx, baseline, digits, size=g.size + 0.5, font=self.bold, align="center", width=g.digits_w)
        pen.text(wx + 5, baseline, words, size=g.size * 0.95, font=self.font)
        if lay.table in RULED:
            split = x + (g.digits_w if lay.order == "digits-words" else g.words_w)
            pen.line(split, y, split, y + g.row_h)

    # ---------------------------------------------------------------- the party table

    def table(self, y: float, bottom: float) -> float:
        lay = self.layout
        columns = _columns(lay, self.p["rows"])
        col_w = (self.w - 2 * MARGIN - GAP * (lay.columns - 1)) / lay.columns
        extra = 3.6 if lay.totals_at in ("above", "below") else 0
        n = max(len(c) for c in columns) + 1 + extra
        g = _fit(lay, self.p, col_w, min(lay.size * 2.0, (bottom - y) / n))
        self.geometry = g
        if lay.totals_at == "above":
            y = self.totals(MARGIN, y, g) + g.row_h * 0.6
        ends = []
        for c, entries in enumerate(columns):
            x0 = MARGIN + c * (col_w + GAP)
            ends.append(self._column(x0, x0 + col_w, y, entries, g))
        y = max(ends)
        if lay.totals_at == "below":
            y = self.totals(MARGIN + (len(columns) - 1) * (col_w + GAP), y + g.row_h * 0.6, g)
        return y

    def _column(self, x0: float, x1: float, y: float, entries: list[_Entry], g: _Geometry) -> float:
        lay, pen = self.layout, self.pen
        h = g.row_h
        cand, party, values = x0, x0 + g.cand_w, x0 + g.cand_w + g.party_w
        titles = lay.headers
        # column titles
        if lay.table in RULED:
            pen.rect(x0, y, x1, y + h, fill=GREY)
        title_size = g.size * 0.85
        base = y + h * 0.5 + title_size * 0.36
        if g.cand_w:
            pen.text(cand, base, titles[0], size=title_size, font=self.bold, align="center", width=g.cand_w)
        pen.text(party + 4, base, titles[1], size=title_size, font=self.bold)
        dx = values if lay.order == "digits-words" else values + g.words_w
        wx = values + g.digits_w if lay.order == "digits-words" else values
        pen.text(dx, base, titles[2], size=title_size, font=self.bold, align="center", width=g.digits_w)
        pen.text(wx + 5, base, titles[3], size=title_size, font=self.bold)
        if lay.table not in RULED:
            pen.line(x0, y + h, x1, y + h, width=0.4 if lay.table != "lines" else 0.3)
        y += h
        party_font = self.bold if lay.bold_parties else self.font
        stripe = 0
        group_top = y
        for e in entries:
            base = y + h * 0.5 + g.size * 0.36
            if e.kind == "head":
                if lay.table in (*RULED, "boxes", "striped"):
                    pen.rect(x0, y, x1, y + h, fill=GREY, stroke=lay.table != "striped")
                pen.text(x0 + 5, base, e.candidate, size=g.size, font=self.bold)
                if lay.table == "lines":
                    pen.line(x0, y + h - 1, x0 + text_width(e.candidate, size=g.size, font=self.bold) + 8, y + h - 1,
                             width=0.4)
                y += h
                continue
            row = e.row
            assert row is not None
            if lay.table == "striped":
                stripe += 1
                if stripe % 2:
                    pen.rect(x0, y, x1, y + h, fill=LIGHT, stroke=False)
            elif lay.table == "boxes":
                pen.rect(x0, y, x1, y + h, width=0.4)
            elif lay.table in RULED:
                if lay.table == "grid" or _last_of_group(entries, e):
                    pen.line(party, y + h, x1, y + h)
                pen.line(party, y, party, y + h)
                pen.line(values, y, values, y + h)
                pen.line(x1, y, x1, y + h)
                pen.line(x0, y, x0, y + h)
            if e.first:
                group_top = y
            if lay.candidate == "repeated":
                pen.text(cand + 4, base, e.candidate, size=g.size * 0.9, font=self.font)
                if lay.table == "grid" or (lay.table in RULED and _last_of_group(entries, e)):
                    pen.line(x0, y + h, party, y + h)
            pen.text(party + 4, base, row["party"], size=g.size, font=party_font)
            self._value_cells(values, y, g, row["votes_text"], row["votes_words"], boxed=lay.table == "boxes")
            y += h
            if lay.candidate == "merged" and _last_of_group(entries, e):
                mid = (group_top + y) / 2 + g.size * 0.33
                if lay.table in RULED:
                    pen.line(x0, y, party, y)
                pen.text(cand + 4, mid, e.candidate, size=g.size * 0.9, font=self.bold)
        if lay.table in RULED:
            pen.line(x0, y, x1, y)
        return y

    # ---------------------------------------------------------------- totals and footer

    def totals(self, x0: float, y: float, g: _Geometry, *, label_w: float | None = None) -> float:
        lay, pen = self.layout, self.pen
        h = g.row_h
        label_w = label_w if label_w is not None else g.cand_w + g.party_w
        x1 = x0 + label_w + g.digits_w + g.words_w
        for label, key in zip(lay.totals_labels, TOTAL_KEYS, strict=True):
            base = y + h * 0.5 + g.size * 0.36
            if lay.table in RULED:
                pen.rect(x0, y, x1, y + h)
                pen.line(x0 + label_w, y, x0 + label_w, y + h)
            elif lay.table == "boxes":
                pen.rect(x0, y, x1, y + h, width=0.8)
            elif lay.table == "striped":
                pen.rect(x0, y, x1, y + h, fill=LIGHT, stroke=False)
            pen.text(x0 + 5, base, label, size=g.size * 0.9, font=self.bold)
            self._value_cells(x0 + label_w, y, g, self.p[f"{key}_text"], self.p[f"{key}_words"],
                              boxed=lay.table == "boxes")
            y += h
        return y

    def footer(self, y: float, qr_png: bytes) -> None:
        lay, pen = self.layout, self.pen
        top = max(y + 10, self.h - MARGIN - FOOTER_H)
        left, right = MARGIN, self.w - MARGIN
        if lay.qr_at == "bottom-right":
            self.page.insert_image(pymupdf.Rect(right - QR_SIDE, top, right, top + QR_SIDE), stream=qr_png)
            right -= QR_SIDE + 12
        elif lay.qr_at == "bottom-left":
            self.page.insert_image(pymupdf.Rect(left, top, left + QR_SIDE, top + QR_SIDE), stream=qr_png)
            left += QR_SIDE + 12
        sig_y = top
        if lay.totals_at == "footer":
            g = self.geometry
            label_w = max(text_width(t, size=g.size * 0.9, font=self.bold) for t in lay.totals_labels) + 12
            g_footer = _Geometry(size=min(g.size, 8), row_h=min(g.row_h, 13), cand_w=0, party_w=0,
                                 digits_w=g.digits_w, words_w=min(g.words_w, right - left - label_w - g.digits_w))
            sig_y = self.totals(left, top, g_footer, label_w=label_w) + 2
        signatures(pen, left, sig_y, min(right - left, 420), n=3 if right - left < 380 else 4, font=self.font)
        if lay.code_at == "footer":
            pen.text(left, min(sig_y + 58, self.h - MARGIN + 6), f"{lay.code_label} {self.p['acta_id']}".strip(),
                     size=9, font=self.bold)


def draw_layout(page: pymupdf.Page, layout: Layout, printed: dict[str, Any], place: tuple[str, str, str, str],
                mesa: str, qr_png: bytes) -> None:
    sheet = _Sheet(page, layout, printed)
    y = sheet.header(place, mesa, qr_png)
    reserve = FOOTER_H + 14 if layout.qr_at != "top-right" or layout.totals_at == "footer" else 62
    y = sheet.table(y, sheet.h - MARGIN - reserve)
    sheet.footer(y, qr_png)
    sheet.pen.commit()
