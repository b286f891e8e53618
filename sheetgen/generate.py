"""Generated election tally sheets (actas) with known truth, for tests and benchmarks (pure).

``generate_acta`` draws a one-page PDF with PyMuPDF: a header, the 38 party rows (votes in digits,
zero-padded, and the same number spelled digit by digit in Spanish words), the totals, a
signatures area and a QR code carrying the truth, in one of many layouts (sheetgen/layouts.py,
which also declares the split between layouts tuned on and layouts only measured on; all but the first
two are drawn by sheetgen/layout_draw.py). Poll-worker errors can be injected: the PRINTED
sheet then differs from the truth while the QR keeps the truth. ``render_scan`` turns the PDF
into a degraded scan image (sheetgen/scans.py has more ways to degrade it). Everything is
deterministic for a seed.
"""

from __future__ import annotations

import io
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pymupdf
import qrcode
from PIL import Image, ImageFilter

from extraction.doctypes.acta.layout import CANDIDATES, DIGIT_WORDS, ROWS
from extraction.doctypes.acta.qr import ActaTruth, format_qr_payload
from sheetgen.layout_draw import draw_layout
from sheetgen.layouts import LAYOUTS as LAYOUT_SPECS
from sheetgen.layouts import MEASURE_LAYOUTS, TUNE_LAYOUTS, Layout
from sheetgen.pen import Pen, signatures

__all__ = ["ActaTruth", "GeneratedActa", "LAYOUTS", "MEASURE_LAYOUTS", "TUNE_LAYOUTS", "ERRORS", "generate_acta",
           "render_page", "render_scan", "spell_digits"]

LAYOUTS: tuple[str, ...] = tuple(LAYOUT_SPECS)
# A seed without a layout keeps drawing one of the first two, so existing callers get the sheets they had.
DEFAULT_LAYOUTS = ("classic", "two-column")
ERRORS = ("digits_words_mismatch", "sum_mismatch", "total_mismatch")
ELECTION = "ELECCION PRESIDENCIAL 2024"

# (state, municipality, parish, centre) — plausible names; codes are drawn from the seed.
_PLACES = [
    ("ZULIA", "MARACAIBO", "PQ. CHIQUINQUIRA", "U.E. NACIONAL RAFAEL URDANETA"),
    ("MIRANDA", "SUCRE", "PQ. PETARE", "ESCUELA BASICA JOSE FELIX RIBAS"),
    ("CARABOBO", "VALENCIA", "PQ. SAN JOSE", "LICEO PEDRO GUAL"),
    ("LARA", "IRIBARREN", "PQ. CATEDRAL", "U.E. COLEGIO LA SALLE"),
    ("ANZOATEGUI", "SOTILLO", "PQ. PUERTO LA CRUZ", "ESCUELA ESTADAL CARLOS SOUBLETTE"),
    ("MERIDA", "LIBERTADOR", "PQ. EL LLANO", "U.E. SIMON BOLIVAR"),
    ("DTTO. CAPITAL", "LIBERTADOR", "PQ. CATEDRAL", "ESCUELA BASICA ANDRES BELLO"),
]

# Relative weight of each candidate's vote share (low, high) and of each party inside a candidate.
_CANDIDATE_WEIGHT = [(2.0, 6.0), (0.05, 0.4), (0.05, 0.3), (0.02, 0.15), (0.05, 0.3),
                     (0.02, 0.1), (0.01, 0.1), (3.0, 8.0), (0.05, 0.3), (0.02, 0.15)]
_MAIN_PARTY = {"PSUV": 12.0, "AD": 3.0, "EL CAMBIO": 1.0, "PV": 2.0, "LAPIZ": 3.0,
               "VPA": 2.0, "UNTC": 3.0, "MUD": 5.0, "MPV": 0.6}


@dataclass(frozen=True)
class GeneratedActa:
    pdf_bytes: bytes
    truth: ActaTruth
    qr_payload: str
    # What is PRINTED on the sheet (differs from truth where errors were injected):
    # {"acta_id", "layout", "errors", "rows": [{"party", "votes", "votes_text", "votes_words"}] x 38,
    #  "valid_votes", "valid_votes_text", "valid_votes_words", same for "null_votes" and "total_votes"}.
    # "votes" is the printed digits as an int; "votes_text" the digits as printed ("0056").
    printed: dict[str, Any]
    layout: str


def spell_digits(text: str) -> str:
    """'0056' -> 'CERO CERO CINCO SEIS' (digit by digit, as the sheets spell numbers)."""
    return " ".join(DIGIT_WORDS[int(d)] for d in text)


def _pad(n: int, width: int) -> str:
    return str(n).zfill(width)


def _counts(rng: random.Random) -> tuple[list[int], int, int]:
    """Skewed party counts (two big candidates, a long tail of small parties and zeros), null, extra."""
    weights: list[float] = []
    for (_, parties), (lo, hi) in zip(CANDIDATES, _CANDIDATE_WEIGHT, strict=True):
        share = rng.uniform(lo, hi)
        inner = [_MAIN_PARTY.get(p, rng.expovariate(1.0) * 0.25) for p in parties]
        weights += [share * w / sum(inner) for w in inner]
    voters = rng.randint(120, 650)
    drawn = Counter(rng.choices(range(len(ROWS)), weights=weights, k=voters))
    counts = [drawn.get(i, 0) for i in range(len(ROWS))]
    null_votes = rng.choices([0, 1, 2, 3, 4, 5, 8], weights=[35, 20, 15, 10, 8, 7, 5])[0]
    extra = rng.choices([0, 1, 2], weights=[85, 10, 5])[0]
    return counts, null_votes, extra


def _acta_id(rng: random.Random, place_index: int) -> str:
    """The code as the real sheets print it (DESIGN.md: 9 digits, a dot, 2 digits, e.g. 050201001.01).
    Drawn here as state, municipality, parish (2 digits each), centre (3) and table (mesa): an assumption
    of the generator only; no rule or reader relies on what the digits mean."""
    state = place_index * 3 + 2
    code = f"{state:02d}{rng.randint(1, 21):02d}{rng.randint(1, 9):02d}{rng.randint(1, 60):03d}.{rng.randint(1, 6):02d}"
    rng.randint(1, 9999)  # a draw the old code form used: kept so every seed keeps its counts
    return code


def _other_number(rng: random.Random, text: str) -> str:
    """The same width of digits with one digit changed (a poll worker's slip)."""
    i = rng.randrange(len(text))
    digit = rng.choice([d for d in "0123456789" if d != text[i]])
    return text[:i] + digit + text[i + 1:]


def _printed(truth: ActaTruth, *, width: int, errors: Sequence[str], rng: random.Random, layout: str
             ) -> dict[str, Any]:
    rows = []
    for (_, party), votes in zip(ROWS, truth.counts, strict=True):
        text = _pad(votes, width)
        rows.append({"party": party, "votes": votes, "votes_text": text, "votes_words": spell_digits(text)})
    valid, null = truth.valid_votes, truth.null_votes
    if "sum_mismatch" in errors:
        # The printed valid total does not close with the rows; total stays valid + null as printed,
        # so only the sum rule breaks.
        valid = max(0, valid + rng.choice([-10, -3, -1, 1, 2, 10]))
    total = valid + null
    if "total_mismatch" in errors:
        total = max(0, total + rng.choice([-5, -1, 1, 4, 10]))
    if "digits_words_mismatch" in errors:
        row = rows[rng.randrange(len(rows))]
        row["votes_words"] = spell_digits(_other_number(rng, row["votes_text"]))
    printed: dict[str, Any] = {"acta_id": truth.acta_id, "layout": layout, "errors": list(errors),
                               "rows": rows}
    for key, n in (("valid_votes", valid), ("null_votes", null), ("total_votes", total)):
        text = _pad(n, width)
        printed[key], printed[f"{key}_text"], printed[f"{key}_words"] = n, text, spell_digits(text)
    return printed


def _qr_png(payload: str) -> bytes:
    code = qrcode.QRCode(error_correction=qrcode.constants.ERROR_CORRECT_M, box_size=8, border=2)
    code.add_data(payload)
    code.make(fit=True)
    buf = io.BytesIO()
    code.make_image(fill_color="black", back_color="white").save(buf, format="PNG")
    return buf.getvalue()


# ---------------------------------------------------------------- drawing


def _header_lines(place: tuple[str, str, str, str], acta_id: str, mesa: str) -> list[str]:
    state, municipality, parish, centre = place
    return [f"ESTADO: {state}    MUNICIPIO: {municipality}", f"PARROQUIA: {parish}",
            f"CENTRO: {centre}    MESA: {mesa}", f"ACTA {acta_id}"]


def _draw_classic(page: pymupdf.Page, p: dict[str, Any], place: tuple, mesa: str, qr_png: bytes) -> None:
    """One table: CANDIDATO (merged over its party rows) | ORGANIZACION | VOTOS | VOTOS EN LETRAS."""
    pen, left, right = Pen(page), 36.0, page.rect.width - 36
    pen.text(left, 40, "REPUBLICA BOLIVARIANA DE VENEZUELA - CONSEJO NACIONAL ELECTORAL", size=7,
             align="center", width=right - left)
    pen.text(left, 58, ELECTION, size=13, font="hebo", align="center", width=right - left)
    pen.text(left, 72, "ACTA DE ESCRUTINIO", size=9, font="hebo", align="center", width=right - left)
    for i, s in enumerate(_header_lines(place, p["acta_id"], mesa)):
        pen.text(left, 92 + i * 12, s, size=8, font="hebo" if s.startswith("ACTA") else "helv")
    cols = [left, 190, 300, 360, right]
    y, head_h, row_h = 148.0, 14.0, 12.5
    pen.rect(left, y, right, y + head_h, fill=(0.85, 0.85, 0.85))
    for x0, x1, title in zip(cols[:-1], cols[1:], ["CANDIDATO", "ORGANIZACION", "VOTOS", "VOTOS EN LETRAS"],
                             strict=True):
        pen.text(x0, y + 10, title, size=7, font="hebo", align="center", width=x1 - x0)
    y += head_h
    rows = iter(p["rows"])
    for candidate, parties in CANDIDATES:
        top = y
        for _ in parties:
            row = next(rows)
            for x in cols[1:]:
                pen.line(x, y, x, y + row_h)
            pen.line(cols[1], y + row_h, right, y + row_h)
            pen.text(cols[1] + 5, y + 9, row["party"], size=8, font="hebo")
            pen.text(cols[2], y + 9, row["votes_text"], size=8.5, font="hebo", align="center",
                     width=cols[3] - cols[2])
            pen.text(cols[3] + 5, y + 9, row["votes_words"], size=7.5)
            y += row_h
        pen.rect(left, top, right, y)
        pen.text(left + 4, (top + y) / 2 + 3, candidate, size=7.5, font="hebo")
    y += 6
    for label, key in (("VOTOS VALIDOS", "valid_votes"), ("VOTOS NULOS", "null_votes"),
                       ("TOTAL VOTOS", "total_votes")):
        pen.rect(cols[1], y, right, y + 14)
        pen.line(cols[2], y, cols[2], y + 14)
        pen.line(cols[3], y, cols[3], y + 14)
        pen.text(cols[1] + 5, y + 10, label, size=8, font="hebo")
        pen.text(cols[2], y + 10, p[f"{key}_text"], size=8.5, font="hebo", align="center",
                 width=cols[3] - cols[2])
        pen.text(cols[3] + 5, y + 10, p[f"{key}_words"], size=7.5)
        y += 14
    signatures(pen, left, y + 12, 380)
    pen.commit()
    page.insert_image(pymupdf.Rect(right - 112, y + 14, right, y + 126), stream=qr_png)


def _draw_two_column(page: pymupdf.Page, p: dict[str, Any], place: tuple, mesa: str, qr_png: bytes) -> None:
    """Candidates in two columns, each a shaded name bar over its parties; words BEFORE digits."""
    pen, left, right = Pen(page), 30.0, page.rect.width - 30
    pen.rect(left, 28, right, 84, fill=(0.93, 0.93, 0.93))
    pen.text(left + 8, 46, ELECTION, size=14, font="tibo")
    pen.text(left + 8, 60, "CONSEJO NACIONAL ELECTORAL - ACTA DE ESCRUTINIO", size=8, font="tiro")
    state, municipality, parish, centre = place
    pen.text(left + 8, 76, f"ACTA {p['acta_id']}", size=9, font="cobo")
    pen.text(left, 100, f"ESTADO: {state}", size=8, font="tiro")
    pen.text(left + 190, 100, f"MUNICIPIO: {municipality}", size=8, font="tiro")
    pen.text(left + 380, 100, f"MESA: {mesa}", size=8, font="tiro")
    pen.text(left, 114, f"PARROQUIA: {parish}", size=8, font="tiro")
    pen.text(left + 190, 114, f"CENTRO: {centre}", size=8, font="tiro")
    gap, unit = 14.0, 16.0
    col_w = (right - left - gap) / 2
    columns = [CANDIDATES[:4], CANDIDATES[4:]]
    rows = iter(p["rows"])
    bottoms = []
    for c, candidates in enumerate(columns):
        x0 = left + c * (col_w + gap)
        x1 = x0 + col_w
        y = 132.0
        for candidate, parties in candidates:
            pen.rect(x0, y, x1, y + unit, fill=(0.8, 0.8, 0.8))
            pen.text(x0 + 6, y + 11.5, candidate, size=8.5, font="hebo")
            y += unit
            for _ in parties:
                row = next(rows)
                pen.rect(x0, y, x1, y + unit, width=0.4)
                pen.text(x0 + 6, y + 11.5, row["party"], size=8.5, font="tibo")
                pen.text(x0 + 72, y + 11.5, row["votes_words"], size=8, font="tiro")
                pen.rect(x1 - 44, y + 2, x1 - 4, y + unit - 2, width=0.6)
                pen.text(x1 - 44, y + 11.5, row["votes_text"], size=9, font="cobo", align="center", width=40)
                y += unit
        bottoms.append(y)
    x0 = left + col_w + gap
    x1 = x0 + col_w
    y = bottoms[1] + 16
    for label, key in (("VOTOS VALIDOS", "valid_votes"), ("VOTOS NULOS", "null_votes"),
                       ("TOTAL VOTOS", "total_votes")):
        pen.rect(x0, y, x1, y + unit, width=0.8)
        pen.text(x0 + 6, y + 11.5, label, size=8, font="hebo")
        pen.text(x0 + 92, y + 11.5, p[f"{key}_words"], size=7.5, font="tiro")
        pen.text(x1 - 44, y + 11.5, p[f"{key}_text"], size=9, font="cobo", align="center", width=40)
        y += unit
    page.insert_image(pymupdf.Rect(x0 + 70, y + 14, x0 + 190, y + 134), stream=qr_png)
    signatures(pen, left, max(bottoms[0], y + 134) + 8, right - left, n=4)
    pen.commit()


# The two first layouts keep their own drawing code (their sheets stay byte for byte what they were).
_DRAW = {"classic": _draw_classic, "two-column": _draw_two_column}


def generate_acta(*, seed: int, errors: Sequence[str] = (), layout: str | None = None) -> GeneratedActa:
    """A one-page tally sheet PDF with known truth; ``errors`` are poll-worker slips on the PRINTED sheet."""
    unknown = [e for e in errors if e not in ERRORS]
    if unknown:
        raise ValueError(f"unknown acta error(s) {unknown}; known: {list(ERRORS)}")
    rng = random.Random(seed)
    drawn = DEFAULT_LAYOUTS[rng.randrange(len(DEFAULT_LAYOUTS))]  # always drawn: a seed's truth is the same
    chosen = layout or drawn  # in any layout
    if chosen not in LAYOUT_SPECS:
        raise ValueError(f"unknown acta layout {chosen!r}; known: {list(LAYOUTS)}")
    place_index = rng.randrange(len(_PLACES))
    counts, null_votes, extra = _counts(rng)
    truth = ActaTruth(acta_id=_acta_id(rng, place_index), counts=tuple(counts), null_votes=null_votes,
                      extra=extra)
    width = max(rng.choice([3, 4]), len(str(truth.total_votes + 20)))
    printed = _printed(truth, width=width, errors=list(errors), rng=rng, layout=chosen)
    payload = format_qr_payload(truth)
    spec: Layout = LAYOUT_SPECS[chosen]
    doc = pymupdf.open()
    width_pt, height_pt = spec.paper_size
    page = doc.new_page(width=width_pt, height=height_pt)
    place, mesa = _PLACES[place_index], truth.acta_id.split(".")[1]
    if chosen in _DRAW:
        _DRAW[chosen](page, printed, place, mesa, _qr_png(payload))
    else:
        draw_layout(page, spec, printed, place, mesa, _qr_png(payload))
    # Fixed dates and no fresh file id: the same seed gives the same bytes.
    doc.set_metadata({"title": f"ACTA {truth.acta_id}", "creator": "proofdesk acta generator",
                      "creationDate": "D:20240728180000", "modDate": "D:20240728180000"})
    pdf_bytes = doc.tobytes(garbage=3, deflate=True, no_new_id=True)
    doc.close()
    return GeneratedActa(pdf_bytes=pdf_bytes, truth=truth, qr_payload=payload, printed=printed, layout=chosen)


def render_page(pdf_bytes: bytes, *, dpi: int = 150, page: int = 1) -> Image.Image:
    """A clean RGB render of one page (1-based)."""
    with pymupdf.open(stream=pdf_bytes, filetype="pdf") as doc:
        pix = doc[page - 1].get_pixmap(dpi=dpi, alpha=False)
        return Image.frombytes("RGB", (pix.width, pix.height), pix.samples)


def render_scan(pdf_bytes: bytes, *, seed: int, dpi: int = 150, blur: float | None = None,
                jpeg_quality: int | None = None, rotation_deg: float | None = None,
                noise: float | None = None) -> bytes:
    """JPEG bytes of a degraded scan of page 1: slight rotation, blur, grey noise, JPEG artefacts.

    Parameters left as None are drawn from the seed (blur 0.3-0.9 px, quality 35-65, rotation
    within +-1.2 degrees, noise sigma 3-8 grey levels).
    """
    rng = random.Random(seed)
    blur = rng.uniform(0.3, 0.9) if blur is None else blur
    jpeg_quality = rng.randint(35, 65) if jpeg_quality is None else jpeg_quality
    rotation_deg = rng.uniform(-1.2, 1.2) if rotation_deg is None else rotation_deg
    noise = rng.uniform(3.0, 8.0) if noise is None else noise
    image = render_page(pdf_bytes, dpi=dpi).convert("L")
    # Paper is never pure white: a faint grey cast before rotation fills the corners alike.
    image = image.point(lambda v: int(v * 0.94) + 4)
    image = image.rotate(rotation_deg, resample=Image.Resampling.BICUBIC, expand=False, fillcolor=244)
    if blur > 0:
        image = image.filter(ImageFilter.GaussianBlur(blur))
    if noise > 0:
        grain = np.random.default_rng(seed).normal(0.0, noise, (image.height, image.width))
        image = Image.fromarray(np.clip(np.asarray(image, dtype=np.float64) + grain, 0, 255).astype(np.uint8))
    buf = io.BytesIO()
    image.save(buf, format="JPEG", quality=jpeg_quality)
    return buf.getvalue()
