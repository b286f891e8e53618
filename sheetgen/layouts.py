"""The layouts of generated tally sheets, and the split between layouts we tune on and layouts we only measure on.

Real sheets differ from one printer, election and scanner to the next; the generator draws the same content
(38 party rows, three totals, the code, a QR) in many visibly different ways so that nothing downstream can
lean on one layout. Each `Layout` is a point on every axis at once: ruled grid, free lines, striped rows or
boxed rows; one, two or three columns; digits before or after the words; candidates in a cell merged over
their parties, repeated on every row or as a heading above them; where and how the code, the place and the
totals are printed and labelled; fonts, sizes and page formats; and the way its scan is degraded.

THE SPLIT. `TUNE_LAYOUTS` may be looked at while building readers, rules, prompts and thresholds.
`MEASURE_LAYOUTS` are for reporting only: nobody tunes anything on them, reads their failures to fix a
special case, or moves a layout from one side to the other after seeing its figures. Each side covers
every axis (the tests check it), so a figure on MEASURE is a figure on layouts the code was not shaped by.
"""

from __future__ import annotations

from dataclasses import dataclass

# Ways a scan is degraded (sheetgen.scans); the parameters of each are drawn from the seed.
SCAN_STYLES = ("scanner", "rotated", "skewed", "blurred", "jpeg", "low-res", "photo")


@dataclass(frozen=True)
class Layout:
    name: str
    description: str
    paper: str = "a4"  # a4 | letter | legal
    landscape: bool = False
    # grid (ruled cells) | grouped (ruled columns, a rule only around each candidate's rows) | lines (free
    # text) | striped (shaded rows, no rules) | boxes (each row boxed)
    table: str = "grid"
    columns: int = 1  # 1 | 2 | 3
    order: str = "digits-words"  # digits-words | words-digits
    candidate: str = "merged"  # merged (one cell over its parties) | repeated (on every row) | heading
    font: str = "helv"  # helv | tiro | cour (bold variants are used for labels)
    bold_parties: bool = True
    size: float = 8.0  # largest body size; shrunk to fit the page
    code_label: str = "ACTA"  # printed before the code; "" = the code alone
    code_at: str = "header"  # header | top-right (a box) | footer
    place: str = "lines"  # lines | boxes (label over value) | compact (one run of abbreviations)
    place_labels: tuple[str, str, str, str, str] = ("ESTADO", "MUNICIPIO", "PARROQUIA", "CENTRO", "MESA")
    totals_at: str = "below"  # above | below (the table) | footer (beside the QR)
    totals_labels: tuple[str, str, str] = ("VOTOS VALIDOS", "VOTOS NULOS", "TOTAL VOTOS")
    headers: tuple[str, str, str, str] = ("CANDIDATO", "ORGANIZACION", "VOTOS", "VOTOS EN LETRAS")
    qr_at: str = "bottom-right"  # bottom-right | bottom-left | top-right
    title_align: str = "center"  # center | left
    scan: str = "scanner"  # one of SCAN_STYLES

    @property
    def paper_size(self) -> tuple[float, float]:
        import pymupdf

        w, h = pymupdf.paper_size(self.paper)
        return (h, w) if self.landscape else (w, h)


# The two first layouts are drawn by their own code in generate.py (their output is kept byte for byte);
# their entries here describe them for the split and the tests.
CLASSIC = Layout("classic", "one ruled table, candidate merged over its parties, digits then words", paper="a4")
TWO_COLUMN = Layout("two-column", "two columns of boxed rows under shaded candidate bars, words then digits",
                    paper="letter", table="boxes", columns=2, order="words-digits", candidate="heading",
                    font="tiro", scan="rotated")

LAYOUTS: dict[str, Layout] = {layout.name: layout for layout in [
    # ---- TUNE ----
    CLASSIC,
    TWO_COLUMN,
    Layout("grid-repeated", "one ruled table, the candidate repeated on every row, words then digits, "
           "code boxed top right, totals above the table", paper="letter", table="grid", candidate="repeated",
           order="words-digits", font="tiro", code_label="CODIGO:", code_at="top-right",
           totals_at="above", totals_labels=("VOTOS VÁLIDOS", "VOTOS NULOS", "TOTAL DE VOTOS"),
           headers=("CANDIDATO(A)", "PARTIDO", "NUMERO", "EN LETRAS"), scan="blurred"),
    Layout("lines-three", "three columns of free lines under candidate headings, landscape, totals beside the QR",
           paper="a4", landscape=True, table="lines", columns=3, candidate="heading", size=7.5,
           code_label="Nº", code_at="footer", place="compact",
           place_labels=("EDO.", "MCPIO.", "PQ.", "C.V.", "MESA"), totals_at="footer",
           totals_labels=("VALIDOS", "NULOS", "TOTAL"), title_align="left", scan="low-res"),
    Layout("striped-two", "two columns of shaded rows, candidate printed once beside its parties, courier, "
           "legal paper, the code alone in a box", paper="legal", table="striped", columns=2,
           candidate="merged", order="words-digits", font="cour", code_label="", code_at="top-right",
           qr_at="bottom-left", headers=("CANDIDATO", "ORG.", "VOTOS", "LETRAS"), scan="jpeg"),
    Layout("boxes-one", "one column of boxed rows under candidate bars, Times, place in labelled boxes",
           paper="a4", table="boxes", columns=1, candidate="heading", font="tiro", code_label="ACTA Nº",
           place="boxes", scan="skewed"),
    Layout("grid-three", "three tables side by side, ruled around each candidate's rows only, candidates merged, "
           "words then digits, landscape letter, QR at the top", paper="letter", landscape=True, table="grouped",
           columns=3, candidate="merged",
           order="words-digits", size=7.0, code_label="COD. ACTA:", qr_at="top-right",
           totals_labels=("VOTOS VALIDOS", "VOTOS NULOS", "VOTOS TOTALES"), scan="photo"),
    # ---- MEASURE ----
    Layout("grid-two", "two tables ruled around each candidate's rows only, candidates merged, courier, legal "
           "paper, totals beside the QR, code in the footer", paper="legal", table="grouped", columns=2,
           candidate="merged", font="cour",
           code_label="CODIGO", code_at="footer", totals_at="footer",
           totals_labels=("TOTAL VOTOS VALIDOS", "TOTAL VOTOS NULOS", "TOTAL VOTOS ESCRUTADOS"),
           headers=("CANDIDATO", "ORGANIZACION POLITICA", "CIFRA", "EN LETRAS"), scan="scanner"),
    Layout("lines-one", "free lines, one column, the candidate on every row, words then digits, the code "
           "alone at the top right, totals first", paper="letter", table="lines", candidate="repeated",
           order="words-digits", font="tiro", bold_parties=False, code_label="", code_at="top-right",
           place="compact", totals_at="above", totals_labels=("VALIDOS", "NULOS", "TOTAL"),
           title_align="left", scan="photo"),
    Layout("boxes-three", "three columns of boxed rows under candidate bars, landscape legal",
           paper="legal", landscape=True, table="boxes", columns=3, candidate="heading", size=8.5,
           code_label="Nº", place="boxes", place_labels=("ENTIDAD", "MUNICIPIO", "PARROQUIA",
                                                         "CENTRO DE VOTACION", "MESA N°"),
           qr_at="bottom-left", scan="rotated"),
    Layout("grid-headings", "one ruled table with a row per candidate above its parties, words then digits, "
           "legal paper, bold", paper="legal", table="grid", candidate="heading", order="words-digits",
           size=9.0, code_label="ACTA:", code_at="top-right",
           totals_labels=("VOTOS VÁLIDOS", "VOTOS NULOS", "TOTAL VOTOS"), scan="low-res"),
    Layout("striped-three", "three columns of shaded rows, the candidate on every row, courier, landscape A4",
           paper="a4", landscape=True, table="striped", columns=3, candidate="repeated", order="words-digits",
           font="cour", size=7.0, code_label="CÓDIGO DE ACTA", place="compact", title_align="left",
           scan="skewed"),
    Layout("lines-two", "two columns of free lines, candidate printed once beside its parties, Times, totals "
           "beside the QR", paper="letter", table="lines", columns=2, candidate="merged", font="tiro",
           code_label="ACTA N°", code_at="footer", totals_at="footer", place="boxes",
           place_labels=("ENTIDAD", "MUNICIPIO", "PARROQUIA", "CENTRO DE VOTACION", "MESA N°"), scan="blurred"),
    Layout("boxes-repeated", "two columns of boxed rows, the candidate on every row, words then digits, "
           "courier bold, totals first, QR at the top", paper="a4", table="boxes", columns=2,
           candidate="repeated", order="words-digits", font="cour", size=7.5, code_label="",
           totals_at="above", qr_at="top-right", scan="jpeg"),
]}

# Nobody tunes on MEASURE_LAYOUTS: they are for reporting only (see the module docstring).
TUNE_LAYOUTS: tuple[str, ...] = ("classic", "two-column", "grid-repeated", "lines-three", "striped-two",
                                 "boxes-one", "grid-three")
MEASURE_LAYOUTS: tuple[str, ...] = ("grid-two", "lines-one", "boxes-three", "grid-headings", "striped-three",
                                    "lines-two", "boxes-repeated")

assert set(TUNE_LAYOUTS).isdisjoint(MEASURE_LAYOUTS)
assert set(TUNE_LAYOUTS) | set(MEASURE_LAYOUTS) == set(LAYOUTS)
