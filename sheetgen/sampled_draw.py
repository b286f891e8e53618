"""Draw one tally sheet for a `Conventions` with PyMuPDF (pure): header, party tables, totals, signatures, QR.

The page is laid out top to bottom: the header (titles, place, header numbers, the code unless it is boxed in
a top corner or sits in the footer; a QR or code box in a top corner), the party tables in 1-3 blocks, what
goes right below them (totals apart, signatures), then the footer band anchored at the bottom of the page (QR,
totals, signatures, code, as the conventions put them). The tables take what height is left: their font and
row height shrink until they fit. When the body would drop under `FLOOR` points another number of blocks is
tried, then what was below the tables moves into the footer; `draw_sheet` returns the conventions as drawn.

Content that is not a convention (signers' names, times, the register) comes from its own random stream,
`details-<seed>`, so a convention's draw never changes the names on the sheet.
"""

from __future__ import annotations

import functools
import io
import itertools
import random
from dataclasses import dataclass, field, replace
from typing import Any

import pymupdf
from PIL import Image, ImageDraw, ImageFont

from extraction.doctypes.acta.layout import CANDIDATES, TOTAL_KEYS
from sheetgen.conventions import Conventions, bold_of
from sheetgen.pen import Pen
from sheetgen.pen import text_width as _pen_width

__all__ = ["FLOOR", "Details", "draw_details", "draw_sheet", "page_size"]

MARGIN = 30.0
GUTTER = 14.0
QR_SIDE = 92.0
CODE_BOX = (128.0, 34.0)
FLOOR = 6.0  # smallest body size (pt) before the drawer tries another arrangement
PAD = 3.0
GREY, LIGHT = (0.8, 0.8, 0.8), (0.9, 0.9, 0.9)
INKS = ((0.12, 0.22, 0.62), (0.38, 0.18, 0.55), (0.66, 0.1, 0.12))  # blue, violet, red stamp pads


def page_size(c: Conventions) -> tuple[float, float]:
    w, h = pymupdf.paper_size(c.paper)
    return (h, w) if c.orientation == "landscape" else (w, h)


# ---------------------------------------------------------------- details (content, not conventions)

_FIRST = ("MARIA", "JOSE", "LUIS", "CARMEN", "ANA", "PEDRO", "YOLANDA", "CARLOS", "ROSA", "JESUS", "GLADYS",
          "RAFAEL", "ELENA", "MIGUEL", "NELSON", "YUSMARY")
_LAST = ("GONZALEZ", "RODRIGUEZ", "PEREZ", "HERNANDEZ", "GARCIA", "MARTINEZ", "LOPEZ", "RAMIREZ", "TORRES",
         "ROJAS", "MENDOZA", "SILVA", "CASTILLO", "MORENO", "BRICEÑO", "UZCATEGUI")
_ROLES = (("PRESIDENTE(A)", "SECRETARIO(A)", "MIEMBRO", "TESTIGO"),
          ("PRESIDENTE(A)", "MIEMBRO A", "MIEMBRO B", "SECRETARIO(A)"),
          ("PRESIDENTE DE MESA", "MIEMBRO DE MESA", "SECRETARIO DE MESA", "OPERADOR(A)"))
_STAMPS = (("CNE", "MESA {mesa}", "CERRADA"), ("CONSEJO NACIONAL", "ELECTORAL", "MESA N° {mesa}"),
           ("JUNTA MUNICIPAL", "ELECTORAL", "RECIBIDO"), ("CNE", "ESCRUTADA"))


@dataclass(frozen=True)
class Details:
    extras: tuple[str, ...]  # the header numbers as printed
    signers: tuple[tuple[str, str, str], ...]  # role, name, ID number
    stamp_lines: tuple[str, ...]


def _extra(kind: str, rng: random.Random, printed: dict[str, Any]) -> str:
    """One header number as real forms print it; never 9 digits, a dot, 2 digits (that is the acta code)."""
    code = printed["acta_id"]
    mesa = int(code.split(".")[1])
    if kind == "table":
        return rng.choice([f"MESA {mesa}", f"MESA N° {mesa:02d}", f"MESA: {mesa}", f"N° DE MESA {mesa}"])
    if kind == "register":
        voters = printed["total_votes"] + rng.randint(15, 260)
        return rng.choice(["ELECTORES INSCRITOS: {}", "ELECTORES EN MESA {}", "INSCRITOS: {}", "E.I. {}"]).format(voters)
    if kind == "date":
        date = rng.choice(["28/07/2024", "28-07-2024"])
        return rng.choice(["FECHA: {}", "{}", "FECHA {}"]).format(date)
    if kind == "time":
        label = rng.choice(["HORA DE CIERRE", "HORA DE INSTALACIÓN", "HORA:", "CIERRE:"])
        hour = rng.randint(6, 7) if label == "HORA DE INSTALACIÓN" else rng.randint(18, 20)
        return f"{label} {hour:02d}:{rng.randint(0, 59):02d}"
    if kind == "centre-code":
        # Real centre codes are the acta code's first 9 digits: a decoy of the same form, without the table.
        centre = code[:9] if rng.random() < 0.5 else f"{rng.randint(10, 24):02d}{rng.randint(1, 10**7 - 1):07d}"
        return rng.choice(["CÓDIGO CENTRO {}", "COD. C.V.: {}", "CENTRO N° {}", "CÓDIGO DEL CENTRO: {}"]).format(centre)
    return rng.choice([f"CÓD. PARROQUIA {code[:6]}", f"COD. MUNICIPIO {code[:4]}", f"PQ. {code[:2]}-{code[2:4]}-{code[4:6]}"])


def _id_number(rng: random.Random, style: str) -> str:
    n = rng.randint(4_000_000, 31_000_000)
    return f"C.I. V-{n:,}".replace(",", ".") if style == "dotted" else f"V{n}"


def draw_details(c: Conventions, printed: dict[str, Any]) -> Details:
    rng = random.Random(f"details-{c.seed}")
    extras = tuple(_extra(kind, rng, printed) for kind in c.extras)
    roles = rng.choice(_ROLES)[: c.signatures]
    signers = tuple((role, f"{rng.choice(_FIRST)} {rng.choice(_LAST)}", _id_number(rng, c.id_style)) for role in roles)
    mesa = int(printed["acta_id"].split(".")[1])
    stamp = tuple(s.format(mesa=mesa) for s in rng.choice(_STAMPS))
    return Details(extras=extras, signers=signers, stamp_lines=stamp)


# ---------------------------------------------------------------- text helpers


@functools.lru_cache(maxsize=8192)
def _unit_width(text: str, font: str) -> float:
    # Character by character: PyMuPDF measures a whole string with accented letters short (NÚMEROS by an M),
    # and Base-14 text has no kerning, so the sum is the printed width.
    return sum(_pen_width(ch, size=1.0, font=font) for ch in text)


def text_width(text: str, *, size: float, font: str) -> float:
    """The printed width of `text`, measured once per text and font (widths scale with the size)."""
    return _unit_width(text, font) * size


class _Pen(Pen):
    """The acta pen, aligning with the width above."""

    def text(self, x: float, y: float, s: str, *, size: float = 8, font: str = "helv", align: str = "left",
             width: float = 0) -> None:
        w = text_width(s, size=size, font=font)
        x += {"center": (width - w) / 2, "right": width - w}.get(align, 0.0)
        super().text(x, y, s, size=size, font=font)


def _balanced(words: list[str], n: int, size: float, font: str) -> list[str]:
    """`words` in at most n lines, the widest line as narrow as can be (names have 1-3 words)."""
    n = max(1, min(n, len(words)))
    best: list[str] = [" ".join(words)]
    best_w = text_width(best[0], size=size, font=font)
    for cuts in itertools.combinations(range(1, len(words)), n - 1):
        bounds = [0, *cuts, len(words)]
        lines = [" ".join(words[a:b]) for a, b in itertools.pairwise(bounds)]
        w = max(text_width(s, size=size, font=font) for s in lines)
        if w < best_w:
            best, best_w = lines, w
    return best


def _widest(lines: list[str], size: float, font: str) -> float:
    return max(text_width(s, size=size, font=font) for s in lines)


def _shrunk(text: str, width: float, size: float, font: str, floor: float = 3.5) -> float:
    while size > floor and text_width(text, size=size, font=font) > width:
        size *= 0.95
    return size


# ---------------------------------------------------------------- table model


@dataclass
class _Line:
    kind: str  # "head" (a candidate heading row) | "row" (a party) | "total"
    group: int  # candidate index; -1 for the totals
    candidate: str = ""
    row: dict[str, Any] | None = None
    label: str = ""
    key: str = ""


@dataclass
class _Geometry:
    size: float
    row_h: float
    title_h: float
    cand_w: float
    cand_wrap: bool  # merged/repeated names wrapped onto two or three lines
    party_w: float
    values: list[tuple[str, float]]  # ("digits" | "words" | "both", width), left to right
    blocks: list[list[_Line]]
    col_w: float


@dataclass
class _Spots:
    """Where things landed, for the overlays."""

    names: list[tuple[float, float, float, float]] = field(default_factory=list)  # x0, x1, y0, y1 per block
    sign_lines: list[tuple[float, float, float]] = field(default_factory=list)  # x0, x1, y


class _Sheet:
    def __init__(self, page: pymupdf.Page, c: Conventions, printed: dict[str, Any], details: Details):
        self.page, self.c, self.p, self.d = page, c, printed, details
        self.pen = _Pen(page)
        self.w, self.h = page.rect.width, page.rect.height
        self.font, self.bold = c.font, bold_of(c.font)
        self.spots = _Spots()

    # ------------------------------------------------------------ numbers in the sheet's style

    def _digit_box(self, size: float) -> float:
        """A comb box's width: the drawn ratio of the digit height, never tighter than the digit plus a gap."""
        slant = 0.35 if self.bold in ("hebi", "tibi", "cobi") else 0.25  # italic digits lean past their advance
        return max(self.c.comb_ratio * 0.72 * size, text_width("0", size=size, font=self.bold) + slant * size)

    def number_width(self, text: str, size: float) -> float:
        c, adv = self.c, text_width("0", size=size, font=self.bold)
        if c.numbers == "comb":
            return len(text) * self._digit_box(size)
        if c.numbers == "spaced":
            return len(text) * adv + (len(text) - 1) * c.digit_gap * size
        return text_width(text, size=size, font=self.bold)

    def number(self, x: float, y: float, h: float, text: str, size: float) -> None:
        """Digits from `x`, vertically centred in the band [y, y + h]."""
        c, pen = self.c, self.pen
        base = y + h * 0.5 + size * 0.36
        if c.numbers in ("plain", "padded"):
            pen.text(x, base, text, size=size, font=self.bold)
            return
        adv = text_width("0", size=size, font=self.bold)
        step = self._digit_box(size) if c.numbers == "comb" else adv + c.digit_gap * size
        for i, digit in enumerate(text):
            x0 = x + i * step
            if c.numbers == "comb":
                box_h = min(h - 2.0, size * 1.35)
                pen.rect(x0, y + (h - box_h) / 2, x0 + step, y + (h + box_h) / 2, width=max(c.rule_width * 0.6, 0.3))
                pen.text(x0, base, digit, size=size, font=self.bold, align="center", width=step)
            else:
                pen.text(x0, base, digit, size=size, font=self.bold)

    # ------------------------------------------------------------ header

    def _corner_items(self) -> dict[str, list[tuple[str, float, float]]]:
        items: dict[str, list[tuple[str, float, float]]] = {"left": [], "right": []}
        if self.c.qr_at.startswith("top"):
            items[self.c.qr_at.split("-")[1]].append(("qr", QR_SIDE, QR_SIDE))
        if self.c.code_at.startswith("top"):
            items[self.c.code_at.split("-")[1]].append(("code", *CODE_BOX))
        return items

    def header(self, qr_png: bytes) -> float:
        corners = self._corner_items()
        left, right, bottom = MARGIN, self.w - MARGIN, MARGIN
        for side, items in corners.items():
            for kind, w, h in items:
                x0 = left if side == "left" else right - w
                if kind == "qr":
                    self.page.insert_image(pymupdf.Rect(x0, MARGIN, x0 + w, MARGIN + h), stream=qr_png)
                else:
                    self._code_box(x0, MARGIN)
                if side == "left":
                    left += w + 12
                else:
                    right -= w + 12
                bottom = max(bottom, MARGIN + h)
        y = MARGIN + 2
        for text in self.c.titles:
            y = self._title(text, y, left, right)
        y = self._place(y + 6, left, right)
        y = self._extras(y, left, right)
        if self.c.code_at == "header":
            y += 13
            self.pen.text(left, y, f"{self.c.code_label} {self.p['acta_id']}".strip(), size=9.5, font=self.bold)
        return max(y + 4, bottom) + 10

    def _title(self, text: str, y: float, left: float, right: float) -> float:
        big = "ELECCI" in text
        size, font = (12.5, self.bold) if big else (9.5, self.bold) if text.startswith("ACTA") else (7.5, self.font)
        size = _shrunk(text, right - left, size, font)
        y += size + 3
        self.pen.text(left, y, text, size=size, font=font, align=self.c.title_align, width=right - left)
        return y

    def _place(self, y: float, left: float, right: float) -> float:
        state, municipality, parish, centre = self.p["_place"]
        labels = self.c.place_labels
        values = (state, municipality, parish.removeprefix("PQ. ") if labels[2] == "PQ." else parish, centre)
        pairs = [f"{lab}{'' if lab.endswith('.') else ':'} {val}" for lab, val in zip(labels, values, strict=True)]
        pen, style = self.pen, self.c.place_style
        if style == "boxes":
            x = left
            for label, value, share in zip(labels, values, (0.17, 0.19, 0.24, 0.4), strict=True):
                x1 = x + (right - left) * share
                pen.rect(x, y + 2, x1, y + 26, width=0.5)
                pen.text(x + 3, y + 10, label, size=5.5, font=self.font)
                pen.text(x + 3, y + 22, value, size=_shrunk(value, x1 - x - 6, 7.5, self.bold), font=self.bold)
                x = x1
            return y + 28
        if style == "compact":
            runs = [" / ".join(pairs)]
        else:
            runs = [f"{pairs[0]}    {pairs[1]}", pairs[2], pairs[3]]
        for run in self._wrap(runs, right - left, 7.5, " / "):
            y += 10.5
            pen.text(left, y, run, size=_shrunk(run, right - left, 7.5, self.font), font=self.font)
        return y

    def _wrap(self, runs: list[str], width: float, size: float, sep: str) -> list[str]:
        """Runs whose parts (split on `sep`) are packed onto lines no wider than `width`."""
        out = []
        for run in runs:
            line = ""
            for part in run.split(sep):
                joined = f"{line}{sep}{part}" if line else part
                if line and text_width(joined, size=size, font=self.font) > width:
                    out.append(line)
                    joined = part
                line = joined
            out.append(line)
        return out

    def _extras(self, y: float, left: float, right: float) -> float:
        if not self.d.extras:
            return y
        sep = "      "
        for run in self._wrap([sep.join(self.d.extras)], right - left, 7.5, sep):
            y += 10.5
            self.pen.text(left, y, run, size=_shrunk(run, right - left, 7.5, self.font), font=self.font)
        return y

    def _code_box(self, x0: float, y0: float) -> None:
        w, h = CODE_BOX
        label, code = self.c.code_label, self.p["acta_id"]
        self.pen.rect(x0, y0, x0 + w, y0 + h, width=0.8)
        if label:
            self.pen.text(x0, y0 + 12, label, size=_shrunk(label, w - 6, 7, self.font), font=self.font,
                          align="center", width=w)
        self.pen.text(x0, y0 + (27 if label else 21), code, size=10.5, font=self.bold, align="center", width=w)

    # ------------------------------------------------------------ totals apart, signatures, footer

    def _apart_size(self) -> float:
        return min(self.c.size, 8.5)

    def totals_apart_height(self) -> float:
        s = self._apart_size()
        return 3 * s * (1.75 if self.c.totals_style == "table" else 2.1)

    def signatures_height(self) -> float:
        return (len(self.d.signers) + 1) * 12.0 if self.c.signatures_style == "table" else 50.0

    def below_height(self) -> float:
        c, h = self.c, 0.0
        if c.totals == "apart" and c.totals_at == "below":
            h += self.totals_apart_height() + 10
        if c.signatures_at == "below":
            h += self.signatures_height() + 10
        return h

    def footer_height(self) -> float:
        c = self.c
        stack = 0.0
        if c.totals == "apart" and c.totals_at == "footer":
            stack += self.totals_apart_height() + 8
        if c.signatures_at == "footer":
            stack += self.signatures_height() + 4
        if c.code_at == "footer":
            stack += 16
        qr = QR_SIDE if c.qr_at.startswith("bottom") else 0.0
        return max(qr, stack)

    def apart_widths(self) -> tuple[float, float, float]:
        """(label, digits, words) widths of the totals printed apart."""
        s = self._apart_size()
        label_w = max(text_width(lab, size=s, font=self.bold) for lab in self.c.totals_labels) + 2 * PAD + 4
        digits_w = max(self.number_width(self.p[f"{k}_text"], s) for k in TOTAL_KEYS) + 2 * PAD + 4
        words_w = max(text_width(self.p[f"{k}_words"], size=s * 0.92, font=self.font) for k in TOTAL_KEYS)
        return label_w, digits_w, max(words_w + 2 * PAD + 4, 90.0)

    def totals_apart(self, x: float, y: float) -> float:
        """The totals as their own small table or as labelled lines; returns the y below them."""
        c, pen, s = self.c, self.pen, self._apart_size()
        ws = s * 0.92
        label_w, digits_w, words_w = self.apart_widths()
        rh = s * (1.75 if c.totals_style == "table" else 2.1)
        x1 = x + label_w + digits_w + words_w
        for label, key in zip(c.totals_labels, TOTAL_KEYS, strict=True):
            base = y + rh * 0.5 + s * 0.36
            text = label if c.totals_style == "table" else f"{label}:"
            pen.text(x + PAD, base, text, size=s, font=self.bold)
            first, second = ("digits", "words") if c.order == "digits-words" else ("words", "digits")
            xa = x + label_w
            for kind in (first, second):
                w = digits_w if kind == "digits" else words_w
                if kind == "digits":
                    self.number(xa + PAD + 2, y, rh, self.p[f"{key}_text"], s)
                else:
                    pen.text(xa + PAD + 2, base, self.p[f"{key}_words"], size=ws, font=self.font)
                if c.ruled and c.totals_style == "lines":
                    pen.line(xa + 2, y + rh - 1.5, xa + w - 2, y + rh - 1.5, width=c.rule_width)
                xa += w
            if c.ruled and c.totals_style == "table":
                pen.rect(x, y, x1, y + rh, width=c.rule_width)
                pen.line(x + label_w, y, x + label_w, y + rh, width=c.rule_width)
                split = x + label_w + (digits_w if first == "digits" else words_w)
                pen.line(split, y, split, y + rh, width=c.rule_width)
            y += rh
        return y

    def signatures(self, x: float, y: float, width: float) -> float:
        pen, signers = self.pen, self.d.signers
        if self.c.signatures_style == "table":
            cols = [("CARGO", 0.26), ("NOMBRE Y APELLIDO", 0.34), ("C.I.", 0.2), ("FIRMA", 0.2)]
            width = min(width, 440.0)
            xs = [x]
            for _, share in cols:
                xs.append(xs[-1] + width * share)
            rows = [[t for t, _ in cols], *[[role, name, ident, ""] for role, name, ident in signers]]
            for r, cells in enumerate(rows):
                y0 = y + r * 12
                pen.rect(x, y0, xs[-1], y0 + 12, width=0.5, fill=LIGHT if r == 0 else None)
                for i, cell in enumerate(cells):
                    pen.line(xs[i], y0, xs[i], y0 + 12, width=0.5)
                    font = self.bold if r == 0 else self.font
                    pen.text(xs[i] + 2, y0 + 8.6, cell, size=_shrunk(cell, xs[i + 1] - xs[i] - 4, 6.5, font), font=font)
                if r:
                    self.spots.sign_lines.append((xs[3] + 4, xs[4] - 4, y0 + 10))
            return y + len(rows) * 12
        step = min(width / len(signers), 150.0)
        for i, (role, name, ident) in enumerate(signers):
            x0, x1 = x + i * step + 6, x + (i + 1) * step - 6
            pen.line(x0, y + 24, x1, y + 24, width=0.5)
            self.spots.sign_lines.append((x0, x1, y + 22))
            for j, (text, font) in enumerate(((role, self.bold), (name, self.font), (ident, self.font))):
                pen.text(x0, y + 32 + j * 8, text, size=_shrunk(text, x1 - x0, 6.3, font), font=font, align="center",
                         width=x1 - x0)
        return y + 50

    def below(self, y: float, g: _Geometry) -> None:
        c = self.c
        y += 10
        if c.totals == "apart" and c.totals_at == "below":
            # Under the last block, where the eye ends the table.
            x = MARGIN + (len(g.blocks) - 1) * (g.col_w + GUTTER) if len(g.blocks) > 1 else MARGIN
            x = min(x, self.w - MARGIN - sum(self.apart_widths()))
            y = self.totals_apart(x, y) + 10
        if c.signatures_at == "below":
            self.signatures(MARGIN, y, self.w - 2 * MARGIN)

    def footer(self, qr_png: bytes) -> None:
        c, pen = self.c, self.pen
        top = self.h - MARGIN - self.footer_height()
        left, right = MARGIN, self.w - MARGIN
        if c.qr_at.startswith("bottom"):
            x0 = right - QR_SIDE if c.qr_at == "bottom-right" else left
            self.page.insert_image(pymupdf.Rect(x0, self.h - MARGIN - QR_SIDE, x0 + QR_SIDE, self.h - MARGIN),
                                   stream=qr_png)
            if c.qr_at == "bottom-right":
                right -= QR_SIDE + 14
            else:
                left += QR_SIDE + 14
        y = top
        if c.totals == "apart" and c.totals_at == "footer":
            y = self.totals_apart(left, y) + 8
        if c.signatures_at == "footer":
            y = self.signatures(left, y, right - left) + 4
        if c.code_at == "footer":
            code = f"{c.code_label} {self.p['acta_id']}".strip()
            align = "left" if c.qr_at == "bottom-right" else "right"
            pen.text(left, self.h - MARGIN - 3, code, size=9.5, font=self.bold, align=align, width=right - left)

    # ------------------------------------------------------------ fitting the tables

    def _groups(self) -> list[list[_Line]]:
        c, rows = self.c, iter(self.p["rows"])
        groups = []
        for i, (candidate, parties) in enumerate(CANDIDATES):
            # A rotated name needs a few rows of height; a shorter group gets a heading row instead.
            head = c.candidate == "heading" or (c.candidate == "rotated" and len(parties) < 3)
            lines = [_Line("head", i, candidate)] if head else []
            groups.append(lines + [_Line("row", i, candidate, next(rows)) for _ in parties])
        return groups

    def _split(self, blocks: int) -> list[list[_Line]]:
        """Candidate groups cut into contiguous blocks, the tallest block as short as can be."""
        groups = self._groups()
        totals = [_Line("total", -1, label=lab, key=k) for lab, k in zip(self.c.totals_labels, TOTAL_KEYS, strict=True)]
        tail = totals if self.c.totals == "inside" else []
        best: list[list[_Line]] = []
        for cuts in itertools.combinations(range(1, len(groups)), blocks - 1):
            bounds = [0, *cuts, len(groups)]
            split = [[line for grp in groups[a:b] for line in grp] for a, b in itertools.pairwise(bounds)]
            split[-1] = split[-1] + tail
            if not best or max(map(len, split)) < max(map(len, best)):
                best = split
        return best

    def _cand_width(self, size: float, blocks: list[list[_Line]], wrap: bool) -> float:
        c = self.c
        if c.candidate == "heading":
            return 0.0
        if c.candidate == "rotated":
            return 2 * 0.85 * size * 1.3 + 2 * PAD
        spans = {line.group: sum(1 for x in b if x.group == line.group and x.kind == "row")
                 for b in blocks for line in b if line.kind == "row"}
        widest = 0.0
        for group, (name, _) in enumerate(CANDIDATES):
            if group not in spans:
                continue  # a rotated sheet's heading group (not here) or no rows
            lines, fs = self._cand_lines(name, spans[group], size, wrap)
            widest = max(widest, _widest(lines, fs, self.bold))
        return widest + 2 * PAD

    def _cand_lines(self, name: str, rows: int, size: float, wrap: bool) -> tuple[list[str], float]:
        """A merged or repeated candidate's name as lines, and their size."""
        if not wrap:
            return [name], size * (0.85 if self.c.candidate == "repeated" else 0.9)
        if self.c.candidate == "repeated" or rows == 1:
            return _balanced(name.split(), 2, size * 0.62, self.bold), size * 0.62
        return _balanced(name.split(), 3 if rows >= 3 else 2, size * 0.9, self.bold), size * 0.9

    def _title_lines(self, text: str, width: float, size: float) -> tuple[list[str], float]:
        """A column title on one line, else two, shrunk when even two are too wide."""
        if not text or text_width(text, size=size, font=self.bold) <= width:
            return [text], size
        lines = _balanced(text.split(), 2, size, self.bold)
        while _widest(lines, size, self.bold) > width and size > 3.5:
            size *= 0.95
        return lines, size

    def _titles(self) -> dict[str, str]:
        cand, party, digits, words, both = self.c.headers
        return {"cand": cand, "party": party, "digits": digits, "words": words, "both": both}

    def _value_columns(self, size: float, blocks: list[list[_Line]]) -> list[tuple[str, float]]:
        c, ws = self.c, size * 0.92
        shown = [line for b in blocks for line in b if line.kind != "head"]
        texts = [(line.row or self.p)["votes_text" if line.row else f"{line.key}_text"] for line in shown]
        words = [(line.row or self.p)["votes_words" if line.row else f"{line.key}_words"] for line in shown]
        digits_w = max(self.number_width(t, size) for t in texts)
        words_w = max(text_width(w, size=ws, font=self.font) for w in words)
        title = self._titles()
        minimum = {k: max(text_width(part, size=size * 0.8, font=self.bold) for part in v.split()) + 2 * PAD
                   for k, v in title.items()}
        if c.words == "same-cell":
            return [("both", max(digits_w + size * 0.8 + words_w + 2 * PAD, minimum["both"]))]
        cols = [("digits", max(digits_w + 2 * PAD + 4, minimum["digits"])), ("words", max(words_w + 2 * PAD, minimum["words"]))]
        return cols if c.order == "digits-words" else cols[::-1]

    def _widths(self, size: float, col_w: float, blocks: list[list[_Line]]) -> tuple[float, bool, float, list] | None:
        """(candidate width, wrapped?, party width, value columns) at `size`, or None when they overflow."""
        c = self.c
        values = self._value_columns(size, blocks)
        party = max(text_width(r["party"], size=size, font=self.font) for r in self.p["rows"]) + 2 * PAD
        party = max(party, max(text_width(part, size=size * 0.8, font=self.bold) for part in c.headers[1].split()) + 2 * PAD)
        for wrap in (False, True):
            cand = self._cand_width(size, blocks, wrap)
            if c.candidate in ("merged", "repeated"):
                cand = max(cand, max(text_width(p, size=size * 0.8, font=self.bold) for p in c.headers[0].split()) + 2 * PAD)
            label = max(text_width(lab, size=size * 0.9, font=self.bold) for lab in c.totals_labels) + 2 * PAD
            need_party = max(party, label - cand) if c.totals == "inside" else party
            if cand + need_party + sum(w for _, w in values) <= col_w:
                return cand, wrap, need_party, values
            if c.candidate not in ("merged", "repeated"):
                break
        return None

    def fit(self, blocks: int, top: float, bottom: float) -> _Geometry:
        split = self._split(blocks)
        col_w = (self.w - 2 * MARGIN - GUTTER * (blocks - 1)) / blocks
        n = max(len(b) for b in split)
        size = self.c.size
        for _ in range(200):
            widths = self._widths(size, col_w, split)
            if widths is None:
                size *= 0.96
                continue
            cand, wrap, party, values = widths
            g = self._spread(_Geometry(size, 0, 0, cand, wrap, party, values, split, col_w))
            two_line = any(len(self._title_lines(t, w - 2 * PAD, size * 0.8)[0]) > 1 for t, w in self._title_cells(g))
            factor = 1.75 if two_line else 1.1
            row_h = min(2.4 * size, (bottom - top) / (n + factor))
            if row_h < 1.42 * size - 1e-6 and size > 3.0:
                size = row_h / 1.42
                continue
            g.row_h, g.title_h = row_h, row_h * factor
            return g
        raise RuntimeError("the sheet does not fit its page")  # not reached: sizes shrink geometrically

    def _spread(self, g: _Geometry) -> _Geometry:
        """What width is left widens the text columns in proportion (the digits keep their width)."""
        spare = g.col_w - g.cand_w - g.party_w - sum(w for _, w in g.values)
        text = g.cand_w + g.party_w + sum(w for k, w in g.values if k != "digits")
        g.values = [(k, w if k == "digits" else w + spare * w / text) for k, w in g.values]
        g.cand_w += spare * g.cand_w / text
        g.party_w += spare * g.party_w / text
        return g

    def _title_cells(self, g: _Geometry) -> list[tuple[str, float]]:
        title = self._titles()
        # A rotated name's narrow column has no room for a title: its cell stays empty, as on such forms.
        cells = [("" if self.c.candidate == "rotated" else title["cand"], g.cand_w)] if g.cand_w else []
        cells.append((title["party"], g.party_w))
        return cells + [(title[k], w) for k, w in g.values]

    # ------------------------------------------------------------ drawing the tables

    def tables(self, g: _Geometry, y: float) -> float:
        ends = []
        for b, lines in enumerate(g.blocks):
            x0 = MARGIN + b * (g.col_w + GUTTER)
            ends.append(self._block(g, x0, y, lines))
        return max(ends)

    def _block(self, g: _Geometry, x0: float, top: float, lines: list[_Line]) -> float:
        c, pen = self.c, self.pen
        x1 = x0 + g.col_w
        xp = x0 + g.cand_w
        xv = xp + g.party_w
        cols, x = [], xv
        for kind, w in g.values:
            cols.append((kind, x, x + w))
            x += w
        rw = c.rule_width
        # column titles
        if c.fills == "header":
            pen.rect(x0, top, x1, top + g.title_h, fill=GREY, stroke=False)
        edges = [x0, xp] if g.cand_w else [x0]
        edges += [xv, *(b for _, _, b in cols)]
        for (text, _), a, b in zip(self._title_cells(g), edges[:-1], edges[1:], strict=True):
            self._title_cell(text, a, b, top, g)
        y = top + g.title_h
        if c.ruled:
            pen.line(x0, y, x1, y, width=rw)
            for e in edges[1:-1]:
                pen.line(e, top, e, y, width=rw)
        parties = sum(1 for line in lines if line.kind != "total")  # overlays stay off the totals' labels
        self.spots.names.append((x0, xv, y, y + g.row_h * parties))
        group_top, stripe = y, 0
        for i, line in enumerate(lines):
            h = g.row_h
            nxt = lines[i + 1] if i + 1 < len(lines) else None
            last_of_group = nxt is None or nxt.group != line.group or nxt.kind == "head"
            if line.kind == "head":
                self._heading(line, x0, x1, y, g)
                group_top = y + h
                y += h
                continue
            if i == 0 or lines[i - 1].group != line.group or lines[i - 1].kind == "head":
                group_top = y
            if line.kind == "row":
                stripe += 1
                if c.fills == "alternate" and stripe % 2 == 0:
                    pen.rect(xp if c.candidate in ("merged", "rotated") else x0, y, x1, y + h, fill=LIGHT, stroke=False)
                self._row(line, g, x0, xp, xv, cols, y)
            else:
                self._total(line, g, x0, xv, cols, y)
            if c.ruled:
                self._row_rules(line, last_of_group, g, x0, xp, xv, cols, y)
            headed = any(x.kind == "head" and x.group == line.group for x in lines)
            if last_of_group and line.kind == "row" and c.candidate in ("merged", "rotated") and not headed:
                self._merged_name(line.candidate, x0, xp, group_top, y + h, g)
            y += h
        if c.ruled:
            pen.rect(x0, top, x1, y, width=rw)
        return y

    def _title_cell(self, text: str, a: float, b: float, top: float, g: _Geometry) -> None:
        lines, size = self._title_lines(text, b - a - 2 * PAD, g.size * 0.8)
        step = size * 1.15
        base = top + g.title_h / 2 - step * (len(lines) - 1) / 2 + size * 0.36
        for j, s in enumerate(lines):
            self.pen.text(a, base + j * step, s, size=size, font=self.bold, align="center", width=b - a)

    def _heading(self, line: _Line, x0: float, x1: float, y: float, g: _Geometry) -> None:
        c, pen = self.c, self.pen
        if c.fills == "candidate-bars":
            pen.rect(x0, y, x1, y + g.row_h, fill=GREY, stroke=False)
        if c.ruled:
            pen.line(x0, y, x1, y, width=c.rule_width)
            pen.line(x0, y + g.row_h, x1, y + g.row_h, width=c.rule_width)
        size = _shrunk(line.candidate, x1 - x0 - 2 * PAD, g.size, self.bold)
        pen.text(x0 + PAD + 1, y + g.row_h * 0.5 + size * 0.36, line.candidate, size=size, font=self.bold)

    def _row(self, line: _Line, g: _Geometry, x0: float, xp: float, xv: float, cols: list, y: float) -> None:
        c, pen, h = self.c, self.pen, g.row_h
        row = line.row
        assert row is not None
        if c.candidate == "repeated":
            if c.fills == "candidate-bars":
                pen.rect(x0, y, xp, y + h, fill=GREY, stroke=False)
            names, fs = self._cand_lines(line.candidate, 1, g.size, g.cand_wrap)
            self._lines_in(names, x0 + PAD, y, y + h, fs, self.font)
        pen.text(xp + PAD, y + h * 0.5 + g.size * 0.36, row["party"], size=g.size, font=self.font)
        self._values(row["votes_text"], row["votes_words"], cols, y, g)

    def _total(self, line: _Line, g: _Geometry, x0: float, xv: float, cols: list, y: float) -> None:
        size = g.size * 0.9
        self.pen.text(x0 + PAD, y + g.row_h * 0.5 + size * 0.36, line.label, size=size, font=self.bold)
        self._values(self.p[f"{line.key}_text"], self.p[f"{line.key}_words"], cols, y, g)

    def _values(self, digits: str, words: str, cols: list, y: float, g: _Geometry) -> None:
        pen, h, ws = self.pen, g.row_h, g.size * 0.92
        base = y + h * 0.5 + g.size * 0.36
        for kind, a, b in cols:
            if kind == "digits":
                nw = self.number_width(digits, g.size)
                self.number(a + (b - a - nw) / 2, y, h, digits, g.size)
            elif kind == "words":
                pen.text(a + PAD + 1, base, words, size=ws, font=self.font)
            elif self.c.order == "digits-words":
                self.number(a + PAD + 1, y, h, digits, g.size)
                pen.text(a + PAD + 1 + self.number_width(digits, g.size) + g.size * 0.8, base, words, size=ws, font=self.font)
            else:
                pen.text(a + PAD + 1, base, words, size=ws, font=self.font)
                self.number(b - PAD - 1 - self.number_width(digits, g.size), y, h, digits, g.size)

    def _row_rules(self, line: _Line, last: bool, g: _Geometry, x0: float, xp: float, xv: float, cols: list,
                   y: float) -> None:
        """Verticals between columns; under each column a rule per row or per group, as the conventions say."""
        c, pen, h, rw = self.c, self.pen, g.row_h, self.c.rule_width
        bottom = y + h
        splits = [xv, *(a for _, a, _ in cols[1:])]
        if g.cand_w and line.kind == "row":
            splits.append(xp)
        for x in splits:
            pen.line(x, y, x, bottom, width=rw)
        if line.kind == "row" and g.cand_w and (c.candidate == "repeated" or last):
            pen.line(x0, bottom, xp, bottom, width=rw)
        label_x0 = xp if line.kind == "row" else x0
        if c.names == "per-row" or last:
            pen.line(label_x0, bottom, xv, bottom, width=rw)
        for kind, a, b in cols:
            if kind != "words" or c.words == "column" or last:
                pen.line(a, bottom, b, bottom, width=rw)

    def _lines_in(self, lines: list[str], x: float, y0: float, y1: float, size: float, font: str) -> None:
        step = size * 1.12
        base = (y0 + y1) / 2 - step * (len(lines) - 1) / 2 + size * 0.36
        for j, s in enumerate(lines):
            self.pen.text(x, base + j * step, s, size=size, font=font)

    def _merged_name(self, name: str, x0: float, xp: float, y0: float, y1: float, g: _Geometry) -> None:
        c, pen = self.c, self.pen
        if c.fills == "candidate-bars":
            pen.rect(x0, y0, xp, y1, fill=GREY, stroke=False)
        rows = round((y1 - y0) / g.row_h)
        if c.candidate == "merged":
            lines, fs = self._cand_lines(name, rows, g.size, g.cand_wrap)
            if rows == 1 and g.cand_wrap:
                fs = min(fs, g.row_h / 2.3)
            self._lines_in(lines, x0 + PAD, y0, y1, fs, self.bold)
            return
        # rotated: one line up the cell when it fits, else two, shrunk until the longest fits the group's height
        room = y1 - y0 - 2 * PAD
        fs = g.size * 0.85
        lines = [name] if text_width(name, size=fs, font=self.bold) <= room else _balanced(name.split(), 2, fs, self.bold)
        while _widest(lines, fs, self.bold) > room and fs > 3.5:
            fs *= 0.95
        step = fs * 1.25
        cx = (x0 + xp) / 2
        for j, s in enumerate(lines):
            bx = cx - step * (len(lines) - 1) / 2 + j * step + fs * 0.36
            length = text_width(s, size=fs, font=self.bold)
            pen.shape.insert_text((bx, (y0 + y1) / 2 + length / 2), s, fontsize=fs, fontname=self.bold,
                                  color=(0, 0, 0), rotate=90)

    # ------------------------------------------------------------ overlays

    def overlays(self) -> None:
        c = self.c
        rng = random.Random(f"overlay-{c.seed}")
        if c.stamp == "stamp":
            self._stamp(rng)
        elif c.stamp == "squiggles":
            self._squiggles(rng)

    def _stamp(self, rng: random.Random) -> None:
        """An inked stamp over a names column (never over the counts' columns), partly over the table."""
        x0, x1, y0, y1 = rng.choice(self.spots.names)
        d = min(rng.uniform(58, 84), max(50.0, (x1 - x0) * 1.1))
        cx = min(max((x0 + x1) / 2 + rng.uniform(-0.15, 0.15) * (x1 - x0), MARGIN + d / 2), self.w - MARGIN - d / 2)
        cy = rng.choice([rng.uniform(y0 + d / 2, max(y0 + d / 2, y1 - d / 2)), y1])
        png = _stamp_png(self.d.stamp_lines, rng.choice(["circle", "rounded"]), rng.choice(INKS),
                         rng.uniform(-25, 25), rng.uniform(0.5, 0.7))
        self.page.insert_image(pymupdf.Rect(cx - d / 2, cy - d / 2, cx + d / 2, cy + d / 2), stream=png)

    def _squiggles(self, rng: random.Random) -> None:
        """Signature scribbles: thin ink strokes across names columns and on the signature lines."""
        shape = self.page.new_shape()
        ink = rng.choice(INKS[:2] + ((0.1, 0.1, 0.12),))
        spots = []
        for x0, x1, y0, y1 in rng.sample(self.spots.names, k=min(len(self.spots.names), rng.randint(1, 2))):
            spots.append((x0 - 6, min(x1, x0 + 150), rng.uniform(y0 + 10, max(y0 + 10, y1 - 10))))
        spots += [s for s in self.spots.sign_lines if rng.random() < 0.8]
        for x0, x1, y in spots:
            _scribble(shape, rng, max(x0, 4.0), x1, y)
        shape.finish(color=ink, width=rng.uniform(0.6, 1.0), closePath=False, stroke_opacity=0.85, lineCap=1)
        shape.commit()


def _scribble(shape: pymupdf.Shape, rng: random.Random, x0: float, x1: float, y: float) -> None:
    """A handwritten-looking run of loops from x0 to x1 around the baseline y."""
    loops = rng.randint(3, 6)
    step = (x1 - x0) / loops
    amp = rng.uniform(5, 11)
    x, yy = x0, y + rng.uniform(-2, 2)
    for _ in range(loops):
        nx, ny = x + step, y + rng.uniform(-3, 3)
        shape.draw_bezier((x, yy), (x + step * rng.uniform(0.6, 1.4), yy - amp * rng.uniform(0.6, 1.3)),
                          (x - step * rng.uniform(0.0, 0.5), ny + amp * rng.uniform(0.3, 1.0)), (nx, ny))
        x, yy = nx, ny


def _stamp_png(lines: tuple[str, ...], shape: str, ink: tuple[float, float, float], angle: float, alpha: float) -> bytes:
    """An ink stamp as a transparent PNG: a double outline and its text, turned by `angle` degrees."""
    side = 360
    image = Image.new("RGBA", (side, side), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    colour = (*(int(v * 255) for v in ink), int(alpha * 255))
    if shape == "circle":
        draw.ellipse((8, 8, side - 8, side - 8), outline=colour, width=9)
        draw.ellipse((30, 30, side - 30, side - 30), outline=colour, width=4)
    else:
        draw.rounded_rectangle((8, 70, side - 8, side - 70), radius=40, outline=colour, width=9)
    font_size = 40
    for i, text in enumerate(lines):
        font = ImageFont.load_default(size=font_size)
        while draw.textlength(text, font=font) > side * 0.72 and font_size > 16:
            font_size -= 2
            font = ImageFont.load_default(size=font_size)
        y = side / 2 + (i - (len(lines) - 1) / 2) * (font_size + 12)
        draw.text((side / 2, y), text, fill=colour, font=font, anchor="mm")
    image = image.rotate(angle, resample=Image.Resampling.BICUBIC)
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return buf.getvalue()


# ---------------------------------------------------------------- the sheet


def _arrange(sheet: _Sheet, top: float) -> tuple[Conventions, _Geometry]:
    """The drawn arrangement if its body stays legible, else the block count (then footer) that prints largest."""
    c = sheet.c
    tried: list[tuple[float, int, Conventions, _Geometry]] = []
    moves = [c]
    if c.signatures_at == "below" or (c.totals == "apart" and c.totals_at == "below"):
        moves.append(replace(c, signatures_at="footer", totals_at="footer" if c.totals == "apart" else c.totals_at))
    for rank, conv in enumerate(moves):
        sheet.c = conv
        bottom = sheet.h - MARGIN - sheet.footer_height() - (sheet.below_height() + 6 if sheet.below_height() else 6)
        order = sorted((1, 2, 3), key=lambda b: (abs(b - conv.blocks), b))  # the drawn count, then its neighbours
        for k, blocks in enumerate(order):
            g = sheet.fit(blocks, top, bottom)
            tried.append((g.size, -(rank * 10 + k), replace(conv, blocks=blocks), g))
            if g.size >= FLOOR:
                return replace(conv, blocks=blocks, size=round(g.size, 2)), g
    size, _, conv, g = max(tried, key=lambda t: (t[0], t[1]))
    return replace(conv, size=round(size, 2)), g


def draw_sheet(page: pymupdf.Page, c: Conventions, printed: dict[str, Any], place: tuple[str, str, str, str],
               qr_png: bytes) -> Conventions:
    """Draw the sheet on `page` (sized by `page_size(c)`); return the conventions as drawn."""
    details = draw_details(c, printed)
    sheet = _Sheet(page, c, {**printed, "_place": place}, details)
    top = sheet.header(qr_png)
    drawn, g = _arrange(sheet, top)
    sheet.c = drawn
    end = sheet.tables(g, top)
    sheet.below(end, g)
    sheet.footer(qr_png)
    sheet.pen.commit()
    sheet.overlays()
    return drawn
