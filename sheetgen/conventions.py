"""Conventions of real paper tally sheets, each drawn at random per seed (pure).

The fixed layouts (sheetgen/layouts.py) are a short list somebody wrote down. Here a sheet is not
chosen from a list: each convention that printed election forms vary on is drawn on its own, so the
seeds give hundreds of layouts nobody listed. The values come from how paper forms are printed (tally
sheets, ballots' scrutiny records, administrative forms), not from any detail of the code that reads them.

| axis | what it means on the paper |
| --- | --- |
| numbers | how a count is printed: `plain` (56), `padded` (0056, width 3 or 4), `comb` (one digit per small ruled |
|         | box, box width 1.1-2.0 x the digit height), `spaced` (padded digits letter-spaced: 0 0 5 6) |
| words | where the digit words go: `column` (their own column), `same-cell` (digits and words in one cell), |
|       | `merged-group` (the words column ruled only around each candidate's group; digits ruled per row) |
| order | `digits-words` or `words-digits` (which comes first in a row) |
| names | the party-name column: `per-row` (a ruled cell per party) or `merged-group` (ruled per candidate group) |
| candidate | `merged` (one cell over its parties), `rotated` (name turned 90° in a narrow cell; a group too short |
|           | for it gets a heading row instead), `repeated` (on every row), `heading` (a row above its parties) |
| blocks | 1, 2 or 3 tables side by side, split between candidate groups |
| totals | `inside` (last rows of the last table) or `apart` (a small `table` or labelled `lines`, `below` the |
|        | table or in the `footer`), with labels drawn from real variants |
| paper, orientation | a4 / letter / legal, portrait / landscape |
| fills | `none`, a grey `header` row, grey `candidate-bars`, `alternate` grey rows |
| rules | `thin` (0.25-0.4 pt), `normal` (0.6-1.0 pt) or `missing` (no ruled lines: text on an invisible grid) |
| code_label, code_at | the acta code's label (or none) and place: the `header` lines, a box `top-left` / |
|                     | `top-right`, or alone in the `footer` |
| extras | 0-5 other numbers of the header: table, register, date, time, centre code, parish code |
| signatures | 2-4 members (role, name, ID number) as signature `lines` or a `table`, `below` the table or in the footer |
| stamp | `none`, a `stamp` (semi-transparent ink outline with text) or signature `squiggles` crossing the table |
| font, size | a Base-14 font (sans helv, serif tiro, mono cour; regular, bold, italic, bold italic); body 6.5-9 pt |
| qr_at | the corner of the QR code |
| place_style, titles, title_align, place_labels, headers | how the header and the column titles are worded |
| scan | (scan_sampled only) perspective, rotation, lighting, blur, grain, JPEG quality and resolution |

Some draws meet: with `rules=missing` nothing is ruled, so a comb prints as spaced digits and a merged-group
words or names column is an ordinary column; the conventions record what is drawn, not what was first drawn.
The drawer may also change `blocks` and `size` when the sheet would not fit the page legibly, and records
that in the conventions it returns (`SampledActa.conventions`).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace

__all__ = ["AXES", "Conventions", "ScanConventions", "bold_of", "draw_conventions", "draw_scan_conventions"]

NUMBERS = ("plain", "padded", "comb", "spaced")
WORDS = ("column", "same-cell", "merged-group")
ORDERS = ("digits-words", "words-digits")
NAMES = ("per-row", "merged-group")
CANDIDATES = ("merged", "rotated", "repeated", "heading")
BLOCKS = (1, 2, 3)
TOTALS = ("inside", "apart")
TOTALS_STYLES = ("table", "lines")
TOTALS_AT = ("below", "footer")
PAPERS = ("a4", "letter", "legal")
ORIENTATIONS = ("portrait", "landscape")
FILLS = ("none", "header", "candidate-bars", "alternate")
RULES = ("thin", "normal", "missing")
CODE_AT = ("header", "top-left", "top-right", "footer")
EXTRAS = ("table", "register", "date", "time", "centre-code", "parish-code")
SIGNATURES_AT = ("below", "footer")
SIGNATURES_STYLES = ("lines", "table")
ID_STYLES = ("dotted", "plain")  # "C.I. V-12.345.678" | "V12345678"
STAMPS = ("none", "stamp", "squiggles")
QR_AT = ("bottom-right", "bottom-left", "top-right", "top-left")
PLACE_STYLES = ("lines", "boxes", "compact")
TITLE_ALIGNS = ("center", "left")
LIGHTING = ("even", "gradient", "dark-corner", "gradient+corner")

# Base-14 fonts by family and style; labels use the bold of the body's family and slant.
_FONT_NAMES = {("sans", "regular"): "helv", ("sans", "bold"): "hebo", ("sans", "italic"): "heit",
               ("sans", "bold-italic"): "hebi", ("serif", "regular"): "tiro", ("serif", "bold"): "tibo",
               ("serif", "italic"): "tiit", ("serif", "bold-italic"): "tibi", ("mono", "regular"): "cour",
               ("mono", "bold"): "cobo", ("mono", "italic"): "coit", ("mono", "bold-italic"): "cobi"}
FONTS = tuple(_FONT_NAMES.values())
_BOLD = {"helv": "hebo", "hebo": "hebo", "heit": "hebi", "hebi": "hebi", "tiro": "tibo", "tibo": "tibo",
         "tiit": "tibi", "tibi": "tibi", "cour": "cobo", "cobo": "cobo", "coit": "cobi", "cobi": "cobi"}

CODE_LABELS = ("ACTA", "ACTA Nº", "Nº", "N° DE ACTA", "CODIGO", "CÓDIGO DE ACTA:", "COD. ACTA", "SERIAL", "",
               "ACTA N°:", "CÓDIGO:", "NRO. ACTA", "IDENTIFICADOR DEL ACTA")
VALID_LABELS = ("VOTOS VALIDOS", "VOTOS VÁLIDOS", "TOTAL VOTOS VALIDOS", "VALIDOS", "TOTAL VOTOS VÁLIDOS")
NULL_LABELS = ("VOTOS NULOS", "NULOS", "TOTAL VOTOS NULOS", "VOTOS NULOS Y/O BLANCOS")
TOTAL_LABELS = ("TOTAL VOTOS", "TOTAL DE VOTOS", "VOTOS ESCRUTADOS", "TOTAL VOTOS ESCRUTADOS", "VOTOS TOTALES",
                "TOTAL GENERAL")
TITLES = (
    ("REPUBLICA BOLIVARIANA DE VENEZUELA - CONSEJO NACIONAL ELECTORAL", "ELECCION PRESIDENCIAL 2024",
     "ACTA DE ESCRUTINIO"),
    ("REPÚBLICA BOLIVARIANA DE VENEZUELA", "CONSEJO NACIONAL ELECTORAL", "ELECCIÓN PRESIDENCIAL 2024",
     "ACTA DE ESCRUTINIO"),
    ("CONSEJO NACIONAL ELECTORAL", "ELECCIONES PRESIDENCIALES 2024", "ACTA DE ESCRUTINIO DE MESA"),
    ("REPUBLICA BOLIVARIANA DE VENEZUELA", "CONSEJO NACIONAL ELECTORAL - ELECCION PRESIDENCIAL 2024",
     "ACTA DE ESCRUTINIO - PRESIDENTE(A) DE LA REPUBLICA"),
    ("CNE - PODER ELECTORAL", "ELECCION PRESIDENCIAL 2024", "ACTA DE ESCRUTINIO"),
)
PLACE_LABELS = (("ESTADO", "MUNICIPIO", "PARROQUIA", "CENTRO"),
                ("ENTIDAD", "MUNICIPIO", "PARROQUIA", "CENTRO DE VOTACIÓN"),
                ("EDO.", "MCPIO.", "PQ.", "C.V."),
                ("ESTADO", "MUNICIPIO", "PARROQUIA", "CENTRO DE VOTACION"))
CANDIDATE_HEADERS = ("CANDIDATO", "CANDIDATO(A)", "CANDIDATURA", "CANDIDATOS")
PARTY_HEADERS = ("ORGANIZACIÓN POLÍTICA", "ORGANIZACION", "PARTIDO", "ORG.", "ORGANIZACIONES POLITICAS",
                 "TARJETA")
DIGITS_HEADERS = ("VOTOS", "CIFRA", "NÚMERO", "EN NÚMEROS", "VOTOS EN NUMEROS")
WORDS_HEADERS = ("EN LETRAS", "VOTOS EN LETRAS", "LETRAS")
BOTH_HEADERS = ("VOTOS", "VOTOS (NÚMERO Y LETRAS)", "CIFRA Y LETRAS", "VOTOS OBTENIDOS")


def bold_of(font: str) -> str:
    """The bold Base-14 font of `font`'s family and slant (labels and digits)."""
    return _BOLD[font]


@dataclass(frozen=True)
class ScanConventions:
    """How a sheet is scanned or photographed; drawn from its own random stream (`scan-<seed>`)."""

    dpi: int  # 150-220
    perspective: float  # largest corner move, fraction of the page side, 0-0.03
    rotation: float  # degrees, within +-3
    lighting: str  # even | gradient | dark-corner | gradient+corner
    blur: float  # Gaussian radius in pixels, 0.3-1.5
    grain: float  # grey-level sigma, 2-8
    jpeg_quality: int  # 40-90

    def summary(self) -> dict[str, str]:
        return {f"scan.{f.name}": _short(getattr(self, f.name)) for f in fields(self)}


@dataclass(frozen=True)
class Conventions:
    """One sheet's conventions, one field per axis (see the module docstring)."""

    seed: int
    numbers: str
    pad_width: int  # 3 | 4: padded, comb and spaced numbers
    comb_ratio: float  # comb box width / digit height
    digit_gap: float  # spaced numbers: gap between digits, in ems
    words: str
    order: str
    names: str
    candidate: str
    blocks: int
    totals: str
    totals_style: str  # apart only
    totals_at: str  # apart only
    totals_labels: tuple[str, str, str]
    paper: str
    orientation: str
    fills: str
    rules: str
    rule_width: float  # 0 when rules are missing
    code_label: str
    code_at: str
    extras: tuple[str, ...]  # kinds, in print order
    signatures: int  # members, 2-4
    signatures_style: str
    signatures_at: str
    id_style: str
    stamp: str
    font: str
    size: float  # body size before it is shrunk to fit (as drawn: after)
    qr_at: str
    place_style: str
    place_labels: tuple[str, str, str, str]
    titles: tuple[str, ...]
    title_align: str
    headers: tuple[str, str, str, str, str]  # candidate, party, digits, words, digits-and-words
    scan: ScanConventions

    @property
    def ruled(self) -> bool:
        return self.rules != "missing"

    def summary(self) -> dict[str, str]:
        """Axis name -> drawn value as a short string, for reports that group sheets by convention."""
        out = {f.name: _short(getattr(self, f.name)) for f in fields(self) if f.name not in ("seed", "scan")}
        out["extras"] = "+".join(self.extras) or "none"
        out["code_label"] = self.code_label or "(none)"
        out["page"] = f"{self.paper}-{self.orientation}"
        if self.totals == "inside":
            out["totals_style"] = out["totals_at"] = "-"
        out.update(self.scan.summary())
        return out


def _short(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.2f}".rstrip("0").rstrip(".")
    if isinstance(value, tuple):
        return "|".join(_short(v) for v in value)
    return str(value)


# Every value of each categorical axis, as `summary()` spells it (the tests check each occurs).
AXES: dict[str, tuple[str, ...]] = {
    "numbers": NUMBERS, "pad_width": ("3", "4"), "words": WORDS, "order": ORDERS, "names": NAMES,
    "candidate": CANDIDATES, "blocks": tuple(map(str, BLOCKS)), "totals": TOTALS, "paper": PAPERS,
    "orientation": ORIENTATIONS, "fills": FILLS, "rules": RULES,
    "code_label": tuple(label or "(none)" for label in CODE_LABELS), "code_at": CODE_AT,
    "signatures": ("2", "3", "4"), "signatures_style": SIGNATURES_STYLES, "signatures_at": SIGNATURES_AT,
    "id_style": ID_STYLES, "stamp": STAMPS, "font": FONTS, "qr_at": QR_AT, "place_style": PLACE_STYLES,
    "title_align": TITLE_ALIGNS, "scan.lighting": LIGHTING,
}


def _pick(rng: random.Random, values: Sequence, weights: Sequence[float]):
    return rng.choices(values, weights=weights)[0]


def draw_scan_conventions(seed: int) -> ScanConventions:
    """The scan's conventions, from their own stream so the sheet's draws never move when these change."""
    rng = random.Random(f"scan-{seed}")
    return ScanConventions(
        dpi=rng.randint(150, 220), perspective=round(rng.uniform(0.0, 0.03), 4),
        rotation=round(rng.uniform(-3.0, 3.0), 2), lighting=_pick(rng, LIGHTING, [3, 3, 2, 2]),
        blur=round(rng.uniform(0.3, 1.5), 2), grain=round(rng.uniform(2.0, 8.0), 2),
        jpeg_quality=rng.randint(40, 90))


def _font(rng: random.Random) -> str:
    family = _pick(rng, ("sans", "serif", "mono"), [45, 30, 25])
    style = _pick(rng, ("regular", "bold", "italic", "bold-italic"), [40, 25, 20, 15])
    return _FONT_NAMES[family, style]


def _rules(rng: random.Random) -> tuple[str, float]:
    rules = _pick(rng, RULES, [35, 45, 20])
    width = {"thin": rng.uniform(0.25, 0.4), "normal": rng.uniform(0.6, 1.0), "missing": 0.0}[rules]
    return rules, round(width, 2)


def draw_conventions(seed: int, *, stream: str | None = None) -> Conventions:
    """Every convention of one sheet, each drawn on its own from the seed (weights: how common it looks).

    `stream` names another random stream to draw them from (another family of sheets drawing a table of its
    own, sheetgen/forms.py); by default `conventions-<seed>`, the sampled sheets' own."""
    rng = random.Random(stream or f"conventions-{seed}")
    numbers = _pick(rng, NUMBERS, [25, 30, 25, 20])
    words = _pick(rng, WORDS, [50, 25, 25])
    names = _pick(rng, NAMES, [60, 40])
    rules, rule_width = _rules(rng)
    extras = rng.sample(EXTRAS, rng.randint(0, 5))
    conventions = Conventions(
        seed=seed, numbers=numbers, pad_width=rng.choice([3, 4]), comb_ratio=round(rng.uniform(1.1, 2.0), 2),
        digit_gap=round(rng.uniform(0.35, 0.8), 2), words=words, order=_pick(rng, ORDERS, [65, 35]), names=names,
        candidate=_pick(rng, CANDIDATES, [35, 15, 20, 30]), blocks=_pick(rng, BLOCKS, [40, 40, 20]),
        totals=rng.choice(TOTALS), totals_style=rng.choice(TOTALS_STYLES), totals_at=rng.choice(TOTALS_AT),
        totals_labels=(rng.choice(VALID_LABELS), rng.choice(NULL_LABELS), rng.choice(TOTAL_LABELS)),
        paper=_pick(rng, PAPERS, [45, 35, 20]), orientation=_pick(rng, ORIENTATIONS, [75, 25]),
        fills=_pick(rng, FILLS, [35, 30, 20, 15]), rules=rules, rule_width=rule_width,
        code_label=rng.choice(CODE_LABELS), code_at=_pick(rng, CODE_AT, [40, 20, 25, 15]), extras=tuple(extras),
        signatures=rng.randint(2, 4), signatures_style=rng.choice(SIGNATURES_STYLES),
        signatures_at=rng.choice(SIGNATURES_AT), id_style=rng.choice(ID_STYLES),
        stamp=_pick(rng, STAMPS, [50, 25, 25]), font=_font(rng), size=round(rng.uniform(6.5, 9.0) * 4) / 4,
        qr_at=_pick(rng, QR_AT, [35, 30, 20, 15]), place_style=rng.choice(PLACE_STYLES),
        place_labels=rng.choice(PLACE_LABELS), titles=rng.choice(TITLES), title_align=_pick(rng, TITLE_ALIGNS, [70, 30]),
        headers=(rng.choice(CANDIDATE_HEADERS), rng.choice(PARTY_HEADERS), rng.choice(DIGITS_HEADERS),
                 rng.choice(WORDS_HEADERS), rng.choice(BOTH_HEADERS)),
        scan=draw_scan_conventions(seed),
    )
    return _as_drawn(conventions)


def _as_drawn(c: Conventions) -> Conventions:
    """Where two draws meet, what the sheet can actually show (see the module docstring)."""
    if c.ruled:
        return c
    return replace(c, numbers="spaced" if c.numbers == "comb" else c.numbers,
                   words="column" if c.words == "merged-group" else c.words, names="per-row")
