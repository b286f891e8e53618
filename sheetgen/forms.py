"""Conventions of printed forms and thermal receipts, the second family of sampled tally sheets (pure).

The first family (sheetgen/conventions.py) draws ruled tables on office paper. The real actas are something
else: a voting machine prints them on a roll of thermal paper 58 or 80 mm wide, in its monospaced font, one
line after another, and the roll is as long as the text (60 to 90 cm). Forms printed on office paper by a
program often look the same: lines, not a table. This family draws, each on its own from the stream
`forms-<seed>`, every convention such printouts vary on:

| axis | what it means on the paper |
| --- | --- |
| page | `a4-portrait`, `a4-landscape`, `letter-portrait`, `letter-landscape`, `legal-portrait`, or a thermal |
|      | `strip-58` / `strip-80` (58 or 80 mm wide, as long as its content) |
| cut | a strip on one long page, or cut over 2 or 3 pages between lines (a printer that ejects a page); the |
|     | QR and the signatures are on the last page. On paper the lines flow over as many pages as they need |
| structure | `table` (the first family's drawer, sheetgen/sampled_draw.py, on paper only: a strip holds no table), or |
|           | printed lines: `same-line` (name, digits, words), `next-line` (name and digits, the words on the next |
|           | line), `words-first` (name, words, digits), `name-alone` (the party's name alone on its line, its |
|           | figures on the following one or two lines) |
| leader | what fills the gap between a name and its figures: dots, dashes, underscores or spaces |
| figures | `right` (the figures end at the right margin), `column` (they start in one column for every row, as a |
|         | monospaced printer aligns them) or `follow` (a leader of a few characters, then the figures) |
| indent | where the words (next-line) or the figures (name-alone) start on their own line: `flush` or `indent` |
|        | (with `figures=right` they end at the right margin instead) |
| figure_lines | name-alone: the digits and the words on one line or on two |
| candidate | a heading per candidate over its parties: `heading`, `heading-rule` (a separator under it), |
|           | `labelled` (`CANDIDATO: ...`), or `none` (the parties alone, in the form's order) |
| separator, separators | the character of separator lines (`-`, `=`, `*`) and where they go: around the `sections` |
|                       | (header, parties, totals, signatures), also between `candidates`, or `none` |
| numbers | `plain` (56) or `padded` (056, 0056): a thermal print has no comb |
| font | today's Base-14 fonts, or a receipt's monospaced font, regular or bold (DejaVu Sans Mono where this |
|      | machine has it, else Courier: the conventions record which) |
| size, cpl, pitch | on a strip the printer's characters per line (58 mm: 32 or 42; 80 mm: 42, 48 or 64) set the size, |
|                  | and its lines are spread over a drawn length of 55-95 cm (a pitch of 1.25-2.4 times the size, |
|                  | then blank feeds between sections; sheetgen/forms_draw.py); on paper the size is drawn (7-10 pt) |
|                  | and the pitch (1.15-1.6 times the size) |
| columns | printed lines on paper: 1-3 columns (fewer when a line would not fit) |
| title_align, code_label, code_at, extras, signatures, id_style | the header and the footer, as in the first family |
| scan | (scans only) `photo`: a photo of the sheet on a table (darker background, curl, rotation up to 4°, |
|      | perspective, faded and uneven print with streaks, a soft shadow, grain, JPEG); `scanner`: the first |
|      | family's scanner degradation. Drawn from `forms-scan-<seed>` |

Draws meet where a page cannot show them; the conventions record what is drawn on the sheet (a `table` on a
strip prints the drawn line structure; `same-line` or `words-first` whose rows do not fit the line print
`next-line`; a leader means nothing to `name-alone`), and `summary()` shows `-` for an axis the sheet does not
use. The values come from printed forms and receipts, not from the code that reads them.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path

from sheetgen.conventions import (
    CODE_LABELS,
    EXTRAS,
    ID_STYLES,
    LIGHTING,
    NULL_LABELS,
    PLACE_LABELS,
    TITLES,
    TOTAL_LABELS,
    VALID_LABELS,
    Conventions,
    _font,
    _short,
    draw_conventions,
)

__all__ = ["FORM_AXES", "FormConventions", "FormScan", "draw_form_conventions", "draw_form_scan", "font_file",
           "is_mono", "is_strip", "strip_width"]

PAGES = ("a4-portrait", "a4-landscape", "letter-portrait", "letter-landscape", "legal-portrait", "strip-58",
         "strip-80")
STRUCTURES = ("table", "same-line", "next-line", "words-first", "name-alone")
LINE_STRUCTURES = STRUCTURES[1:]
LEADERS = (".", "-", "_", " ")
LEADER_NAMES = {".": "dots", "-": "dashes", "_": "underscores", " ": "spaces"}
FIGURES = ("right", "column", "follow")
INDENTS = ("flush", "indent")
CANDIDATE_STYLES = ("heading", "heading-rule", "labelled", "none")
SEPARATORS = ("-", "=", "*")
SEPARATOR_PLACES = ("sections", "candidates", "none")
NUMBERS = ("plain", "padded")
CODE_AT = ("header", "footer")
TITLE_ALIGNS = ("center", "left")
# The printer's characters per line on each strip (font A and font B of common ESC/POS printers).
CPL = {"strip-58": ((32, 42), (65, 35)), "strip-80": ((42, 48, 64), (15, 60, 25))}
MM = 72 / 25.4
STRIP_WIDTHS = {"strip-58": 58 * MM, "strip-80": 80 * MM}
STRIP_PRINTABLE = {"strip-58": 48 * MM, "strip-80": 72 * MM}

# Receipt fonts: a monospaced TTF embedded in the PDF where this machine has one (Debian's fonts-dejavu).
RECEIPT_FONTS = ("rmono", "rmobo")
_RECEIPT_FILES = {"rmono": "DejaVuSansMono.ttf", "rmobo": "DejaVuSansMono-Bold.ttf"}
_RECEIPT_FALLBACK = {"rmono": "cour", "rmobo": "cobo"}
_FONT_DIRS = ("/usr/share/fonts/truetype/dejavu", "/usr/share/fonts/dejavu", "/usr/share/fonts/TTF")
BASE14 = ("helv", "hebo", "heit", "hebi", "tiro", "tibo", "tiit", "tibi", "cour", "cobo", "coit", "cobi")
FORM_FONTS = BASE14 + RECEIPT_FONTS
CANDIDATE_LABELS = ("CANDIDATO:", "CANDIDATO(A):", "CANDIDATURA:")

# Photos of the sheet: the table under it.
BACKGROUNDS = ("wood", "grey", "dark", "green")
SHADOWS = ("none", "side", "corner", "hand")
SCAN_STYLES = ("photo", "scanner")


@functools.cache
def font_file(font: str) -> str | None:
    """The TTF of a receipt font on this machine, or None (then the sheet prints in Courier)."""
    name = _RECEIPT_FILES.get(font)
    for folder in _FONT_DIRS if name else ():
        path = Path(folder) / name
        if path.is_file():
            return str(path)
    return None


def is_mono(font: str) -> bool:
    return font in RECEIPT_FONTS or font in ("cour", "cobo", "coit", "cobi")


def is_strip(page: str) -> bool:
    return page.startswith("strip")


def strip_width(page: str) -> float:
    return STRIP_WIDTHS[page]


@dataclass(frozen=True)
class FormScan:
    """How a sheet of this family is photographed or scanned; drawn from `forms-scan-<seed>`. Every
    parameter is drawn whatever the style, so a style never moves the others."""

    style: str  # photo | scanner
    dpi: int  # 150-220
    rotation: float  # degrees: within 4 for a photo, 3 for a scanner
    perspective: float  # largest corner move, fraction of the side: photo 0.005-0.04, scanner 0-0.03
    background: str  # photo: wood | grey | dark | green
    margin: float  # photo: the table around the page, fraction of the page's narrow side (0.08-0.3)
    curl: float  # photo: 0-1, how far the paper bends (a bow across the width, waves along it)
    fade: float  # photo: 0-0.65, how much the ink is lightened where the print is faintest
    streaks: int  # photo: 0-6 faint lines along the paper (worn dots of a thermal head)
    shadow: str  # photo: none | side | corner | hand
    lighting: str  # scanner: even | gradient | dark-corner | gradient+corner
    blur: float  # Gaussian radius in pixels, 0.3-1.3
    grain: float  # grey-level sigma, 2-8
    jpeg_quality: int  # 45-90

    def summary(self) -> dict[str, str]:
        photo_only = {"background", "margin", "curl", "fade", "streaks", "shadow"}
        out = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if (f.name in photo_only and self.style != "photo") or (f.name == "lighting" and self.style == "photo"):
                value = "-"
            out[f"scan.{f.name}"] = _short(value)
        return out


@dataclass(frozen=True)
class FormConventions:
    """One sheet's conventions in this family, one field per axis (see the module docstring)."""

    seed: int
    page: str
    pages: int  # as drawn: a strip's cut, or the pages the lines flowed over; 1 for a table
    structure: str
    leader: str  # one of LEADERS
    figures: str
    indent: int  # characters; 0 is flush
    figure_lines: int  # name-alone: 1 or 2
    candidate: str
    separator: str
    separators: str
    numbers: str
    pad_width: int
    font: str
    size: float
    pitch: float  # line pitch in sizes
    cpl: int  # a strip's characters per line; 0 on paper
    columns: int  # printed lines on paper; 1 on strips and for a table
    follow: int  # figures=follow: the leader's length in characters
    title_align: str
    code_label: str
    code_at: str
    totals_labels: tuple[str, str, str]
    titles: tuple[str, ...]
    place_labels: tuple[str, str, str, str]
    extras: tuple[str, ...]
    signatures: int
    id_style: str
    qr_share: float  # a strip's QR side, as a share of the printable width
    table: Conventions | None  # structure=table: the first family's conventions the table is drawn in
    scan: FormScan

    @property
    def lines(self) -> bool:
        return self.structure != "table"

    def summary(self) -> dict[str, str]:
        """Axis name -> drawn value as a short string (`-` where the sheet does not use the axis)."""
        lines = self.lines
        out = {
            "page": self.page, "paper": "strip" if is_strip(self.page) else "paper",
            "pages": str(self.pages), "structure": self.structure,
            "leader": LEADER_NAMES[self.leader] if lines and self.structure != "name-alone" else "-",
            "figures": self.figures if lines and (self.structure != "name-alone" or self.figures == "right") else "-",
            "indent": ("indent" if self.indent else "flush")
            if self.structure in ("next-line", "name-alone") and self.figures != "right" else "-",
            "figure_lines": str(self.figure_lines) if self.structure == "name-alone" else "-",
            "candidate": self.candidate if lines else "-",
            "separator": self.separator if lines and self.separators != "none" else "-",
            "separators": self.separators if lines else "-",
            "numbers": self.numbers, "pad_width": str(self.pad_width) if self.numbers == "padded" else "-",
            "font": self.font, "size": _short(self.size), "pitch": _short(self.pitch) if lines else "-",
            "cpl": str(self.cpl) if self.cpl else "-", "columns": str(self.columns) if lines else "-",
            "title_align": self.title_align if lines else "-",
            "code_label": (self.code_label or "(none)") if lines else "-", "code_at": self.code_at if lines else "-",
            "extras": "+".join(self.extras) or "none", "signatures": str(self.signatures),
        }
        if self.table is not None:
            table = self.table.summary()
            for key in ("numbers", "words", "order", "names", "candidate", "blocks", "totals", "fills", "rules",
                        "code_at", "stamp", "qr_at"):
                out[f"table.{key}"] = table[key]
        out.update(self.scan.summary())
        return out


# Every value of each categorical axis, as `summary()` spells it (the tests check each occurs).
FORM_AXES: dict[str, tuple[str, ...]] = {
    "page": PAGES, "paper": ("strip", "paper"), "pages": ("1", "2", "3"), "structure": STRUCTURES,
    "leader": tuple(LEADER_NAMES.values()), "figures": FIGURES, "indent": INDENTS, "figure_lines": ("1", "2"),
    "candidate": CANDIDATE_STYLES, "separator": SEPARATORS, "separators": SEPARATOR_PLACES, "numbers": NUMBERS,
    "pad_width": ("3", "4"), "font": FORM_FONTS, "cpl": ("32", "42", "48", "64"), "columns": ("1", "2", "3"),
    "title_align": TITLE_ALIGNS,
    "code_at": CODE_AT, "signatures": ("2", "3", "4"), "scan.style": SCAN_STYLES,
    "scan.background": BACKGROUNDS, "scan.shadow": SHADOWS, "scan.lighting": LIGHTING,
}


def _pick(rng: random.Random, values: Sequence, weights: Sequence[float]):
    return rng.choices(values, weights=weights)[0]


def draw_form_scan(seed: int) -> FormScan:
    """The scan's conventions, from their own stream so the sheet's draws never move when these change."""
    rng = random.Random(f"forms-scan-{seed}")
    style = _pick(rng, SCAN_STYLES, [60, 40])
    photo = style == "photo"
    rotation = rng.uniform(-4.0, 4.0) if photo else rng.uniform(-3.0, 3.0)
    return FormScan(
        style=style, dpi=rng.randint(150, 220), rotation=round(rotation, 2),
        perspective=round(rng.uniform(0.005, 0.04) if photo else rng.uniform(0.0, 0.03), 4),
        background=_pick(rng, BACKGROUNDS, [35, 25, 25, 15]), margin=round(rng.uniform(0.08, 0.3), 3),
        curl=round(rng.uniform(0.0, 1.0), 2), fade=round(rng.uniform(0.0, 0.65), 2), streaks=rng.randint(0, 6),
        shadow=_pick(rng, SHADOWS, [25, 30, 20, 25]), lighting=_pick(rng, LIGHTING, [3, 3, 2, 2]),
        blur=round(rng.uniform(0.3, 1.3), 2), grain=round(rng.uniform(2.0, 8.0), 2), jpeg_quality=rng.randint(45, 90))


def _form_font(rng: random.Random) -> str:
    if rng.random() < 0.4:
        return _pick(rng, RECEIPT_FONTS, [60, 40])
    return _font(rng)


def draw_form_conventions(seed: int) -> FormConventions:
    """Every convention of one sheet of this family, each drawn on its own from the seed (weights: how common
    it looks; the strips most, they are what the real actas are). What the page cannot show is resolved in
    `_as_drawn`; the drawer (sheetgen/forms_draw.py) records the rest (pages, columns, a structure that did
    not fit)."""
    rng = random.Random(f"forms-{seed}")
    page = _pick(rng, PAGES, [12, 5, 10, 5, 6, 22, 40])
    cut = _pick(rng, (1, 2, 3), [60, 25, 15])
    structure = _pick(rng, STRUCTURES, [20, 30, 25, 12, 13])
    line_structure = _pick(rng, LINE_STRUCTURES, [35, 30, 15, 20])  # what a strip prints for a table
    leader = _pick(rng, LEADERS, [40, 20, 15, 25])
    figures = _pick(rng, FIGURES, [45, 35, 20])
    indent = _pick(rng, (0, 2, 3, 4, 6), [45, 15, 15, 15, 10])
    figure_lines = _pick(rng, (1, 2), [55, 45])
    candidate = _pick(rng, CANDIDATE_STYLES, [35, 25, 20, 20])
    separator = _pick(rng, SEPARATORS, [50, 30, 20])
    separators = _pick(rng, SEPARATOR_PLACES, [45, 40, 15])
    numbers = _pick(rng, NUMBERS, [40, 60])
    pad_width = rng.choice([3, 4])
    font = _form_font(rng)
    cpl_58 = _pick(rng, *CPL["strip-58"])
    cpl_80 = _pick(rng, *CPL["strip-80"])
    cpl = {"strip-58": cpl_58, "strip-80": cpl_80}.get(page, 0)
    paper_size = round(rng.uniform(7.0, 10.0) * 4) / 4
    pitch = round(rng.uniform(1.15, 1.6), 2)
    columns = _pick(rng, (1, 2, 3), [45, 40, 15])
    follow = rng.randint(2, 6)
    conventions = FormConventions(
        seed=seed, page=page, pages=cut, structure=structure, leader=leader, figures=figures, indent=indent,
        figure_lines=figure_lines, candidate=candidate, separator=separator, separators=separators,
        numbers=numbers, pad_width=pad_width, font=font, size=paper_size, pitch=pitch, cpl=cpl, columns=columns,
        follow=follow, title_align=_pick(rng, TITLE_ALIGNS, [70, 30]), code_label=rng.choice(CODE_LABELS),
        code_at=_pick(rng, CODE_AT, [65, 35]), totals_labels=(rng.choice(VALID_LABELS), rng.choice(NULL_LABELS),
                                                              rng.choice(TOTAL_LABELS)),
        titles=rng.choice(TITLES), place_labels=rng.choice(PLACE_LABELS),
        extras=tuple(rng.sample(EXTRAS, rng.randint(0, 5))), signatures=rng.randint(2, 4),
        id_style=rng.choice(ID_STYLES), qr_share=round(rng.uniform(0.55, 0.8), 2), table=None,
        scan=draw_form_scan(seed))
    return _as_drawn(conventions, line_structure)


def _as_drawn(c: FormConventions, line_structure: str) -> FormConventions:
    """Where two draws meet, what the sheet can actually show (see the module docstring)."""
    changes: dict = {}
    if c.font in RECEIPT_FONTS and font_file(c.font) is None:
        changes["font"] = _RECEIPT_FALLBACK[c.font]
    if is_strip(c.page):
        printable = STRIP_PRINTABLE[c.page]
        changes.update(size=round(printable / (c.cpl * 0.6), 2), columns=1)
        if c.structure == "table":
            changes["structure"] = line_structure
    else:
        changes["pages"] = 1  # on paper the drawer records the pages the lines flow over
    c = replace(c, **changes)
    if c.structure == "table":
        c = replace(c, table=_table(c), columns=1, pages=1)
    return c


def _table(c: FormConventions) -> Conventions:
    """The first family's conventions for a table of this family: its own draws (stream `forms-table-<seed>`),
    with this family's page, font and number style (a receipt font prints as Courier in a table)."""
    paper, orientation = c.page.split("-")
    font = _RECEIPT_FALLBACK.get(c.font, c.font)
    drawn = draw_conventions(c.seed, stream=f"forms-table-{c.seed}")
    numbers = "padded" if c.numbers == "padded" else "plain"
    return replace(drawn, paper=paper, orientation=orientation, font=font, numbers=numbers, pad_width=c.pad_width)
