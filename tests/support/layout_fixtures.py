"""Small PDFs, drawn with PyMuPDF, that test whether OCR blocks follow the rows of a page.

Tally-sheet-like tables (38 party rows under 10 candidates, votes in zero-padded digits and spelled
digit by digit in Spanish words, valid/null/total votes) in layouts the engines' own heuristics get
wrong: a candidate cell merged over its parties with no ruled line between the party rows (or only some),
two and three columns of candidates side by side, the same text with no grid at all; plus an invoice
table whose description wraps inside one ruled cell. Every party row's digits and party name are unique
on the sheet, so a block showing parts of two rows is caught by `blocks_joining_rows`.

Measure (blocks that join two rows, per fixture and engine):
    .venv/bin/python -m tests.support.layout_fixtures [--engines pdf-text,rapidocr,tesseract] [--degrees 1.5]
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import pymupdf

from extraction.ocr.blocks import BlockType, OcrBlock, OcrPage

DIGIT_WORDS = ["CERO", "UNO", "DOS", "TRES", "CUATRO", "CINCO", "SEIS", "SIETE", "OCHO", "NUEVE"]
CANDIDATES = ["ANA PEREZ", "LUIS DIAZ", "JOSE ROJAS", "MARIA SUAREZ", "PEDRO GIL", "CARMEN LEON",
              "RAFAEL MORA", "ELENA CASTRO", "JUAN TORRES", "ROSA MENDEZ"]
PARTIES_PER_CANDIDATE = [6, 4, 3, 5, 2, 4, 3, 5, 1, 5]  # 38 rows
PARTY_NAMES = ["PAC", "UNE", "MRV", "FDP", "ALN", "PSR", "MIN", "CDE", "PRV", "NVA", "UPR", "LIB", "ACR",
               "MPD", "IND", "RDC", "PUL", "SOL", "NRT", "AVZ", "CRS", "DMV", "FRT", "GEN", "HRZ", "JUS",
               "LUZ", "MAR", "NAC", "OLA", "PAZ", "RUT", "SUR", "TAL", "UNI", "VOZ", "YAR", "ZON"]
TOTALS = ["VOTOS VALIDOS", "VOTOS NULOS", "TOTAL VOTOS"]


@dataclass(frozen=True)
class PartyRow:
    candidate: str
    party: str
    digits: str  # zero-padded votes, unique on the sheet
    words: str  # the digits spelled one by one


@dataclass(frozen=True)
class Sheet:
    pdf: bytes
    rows: list[PartyRow]  # 38 party rows, then the three totals (candidate "")


def spell(digits: str) -> str:
    return " ".join(DIGIT_WORDS[int(d)] for d in digits)


def _rows(seed: int) -> list[PartyRow]:
    rng = random.Random(seed)
    numbers = rng.sample(range(1, 999), len(PARTY_NAMES) + len(TOTALS))
    rows, names = [], iter(PARTY_NAMES)
    counts = iter(numbers)
    for candidate, n in zip(CANDIDATES, PARTIES_PER_CANDIDATE, strict=True):
        for _ in range(n):
            digits = f"{next(counts):04d}"
            rows.append(PartyRow(candidate, next(names), digits, spell(digits)))
    for label in TOTALS:
        digits = f"{next(counts):04d}"
        rows.append(PartyRow("", label, digits, spell(digits)))
    return rows


def _groups(rows: list[PartyRow]) -> list[tuple[str, list[PartyRow]]]:
    groups: list[tuple[str, list[PartyRow]]] = []
    for row in rows:
        if row.candidate and (not groups or groups[-1][0] != row.candidate):
            groups.append((row.candidate, []))
        if row.candidate:
            groups[-1][1].append(row)
    return groups


def merged_candidate_sheet(*, rules: str = "none", grid: bool = True, seed: int = 1) -> Sheet:
    """One table: CANDIDATO (merged over its parties) | PARTIDO | VOTOS | VOTOS EN LETRAS.

    `rules`: "none" draws no line between the party rows of a candidate, "some" after every second
    party, "all" after each. `grid=False` draws the same text without any line.
    """
    rows = _rows(seed)
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    shape = page.new_shape()
    cols = [40.0, 150.0, 240.0, 300.0, 555.0]
    pitch, size = 12.5, 8.0
    page.insert_text((40, 40), "ACTA DE ESCRUTINIO - MESA 03", fontsize=12, fontname="hebo")
    y = 70.0
    for x0, title in zip(cols, ["CANDIDATO", "PARTIDO", "VOTOS", "VOTOS EN LETRAS"], strict=False):
        page.insert_text((x0 + 4, y + 10), title, fontsize=7, fontname="hebo")
    if grid:
        shape.draw_rect(pymupdf.Rect(cols[0], y, cols[-1], y + 14))
        for x in cols[1:-1]:
            shape.draw_line((x, y), (x, y + 14))
    y += 14
    for candidate, parties in _groups(rows):
        top = y
        for k, row in enumerate(parties):
            page.insert_text((cols[1] + 4, y + 9), row.party, fontsize=size, fontname="hebo")
            page.insert_text((cols[2] + 12, y + 9), row.digits, fontsize=size)
            page.insert_text((cols[3] + 4, y + 9), row.words, fontsize=7)
            y += pitch
            last = k == len(parties) - 1
            if grid and not last and (rules == "all" or (rules == "some" and k % 2 == 1)):
                shape.draw_line((cols[1], y), (cols[-1], y))
        page.insert_text((cols[0] + 4, (top + y) / 2 + 3), candidate, fontsize=7.5, fontname="hebo")
        if grid:
            shape.draw_rect(pymupdf.Rect(cols[0], top, cols[-1], y))
            for x in cols[1:-1]:
                shape.draw_line((x, top), (x, y))
    y += 8
    top = y
    for row in rows[-len(TOTALS):]:
        page.insert_text((cols[1] + 4, y + 9), row.party, fontsize=size, fontname="hebo")
        page.insert_text((cols[2] + 12, y + 9), row.digits, fontsize=size)
        page.insert_text((cols[3] + 4, y + 9), row.words, fontsize=7)
        y += pitch
    if grid:
        shape.draw_rect(pymupdf.Rect(cols[1], top, cols[-1], y))
        for x in cols[2:-1]:
            shape.draw_line((x, top), (x, y))
    shape.finish(color=(0, 0, 0), width=0.6)
    shape.commit()
    return Sheet(pdf=doc.tobytes(), rows=rows)


def columns_sheet(*, columns: int, grid: bool = True, gutter: float = 12.0, seed: int = 2) -> Sheet:
    """Candidates in `columns` side-by-side columns: a name bar over party | words | digits rows."""
    rows = _rows(seed)
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    shape = page.new_shape()
    left, right = 30.0, 565.0
    width = (right - left - gutter * (columns - 1)) / columns
    size = 8.0 if columns == 2 else 6.5
    pitch = 14.0 if columns == 2 else 12.0
    groups = _groups(rows)
    per_column = -(-len(groups) // columns)
    page.insert_text((30, 40), "ACTA DE ESCRUTINIO", fontsize=12, fontname="tibo")
    bottoms = []
    for c in range(columns):
        x0 = left + c * (width + gutter)
        x1 = x0 + width
        y = 60.0
        for candidate, parties in groups[c * per_column:(c + 1) * per_column]:
            if grid:
                shape.draw_rect(pymupdf.Rect(x0, y, x1, y + pitch))
            page.insert_text((x0 + 4, y + pitch - 4), candidate, fontsize=size, fontname="hebo")
            y += pitch
            for row in parties:
                if grid:
                    shape.draw_rect(pymupdf.Rect(x0, y, x1, y + pitch))
                page.insert_text((x0 + 4, y + pitch - 4), row.party, fontsize=size, fontname="tibo")
                page.insert_text((x0 + width * 0.22, y + pitch - 4), row.words, fontsize=size - 1)
                page.insert_text((x1 - 4 - pymupdf.get_text_length(row.digits, fontsize=size), y + pitch - 4),
                                 row.digits, fontsize=size)
                y += pitch
        bottoms.append(y)
    x0 = left + (columns - 1) * (width + gutter)
    y = bottoms[-1] + pitch
    for row in rows[-len(TOTALS):]:
        if grid:
            shape.draw_rect(pymupdf.Rect(x0, y, x0 + width, y + pitch))
        page.insert_text((x0 + 4, y + pitch - 4), row.party, fontsize=size - 1, fontname="hebo")
        page.insert_text((x0 + width * 0.45, y + pitch - 4), row.words, fontsize=size - 1.5)
        page.insert_text((x0 + width - 4 - pymupdf.get_text_length(row.digits, fontsize=size), y + pitch - 4),
                         row.digits, fontsize=size)
        y += pitch
    shape.finish(color=(0, 0, 0), width=0.5)
    shape.commit()
    return Sheet(pdf=doc.tobytes(), rows=rows)


WRAPPED = ["Consulting services for the migration", "of the ledger to the new accounting",
           "system, with training of four staff"]


def wrapped_cell_invoice() -> bytes:
    """An invoice table with ruled rows; the second item's description wraps onto three lines."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    shape = page.new_shape()
    cols = [40.0, 300.0, 360.0, 450.0, 555.0]
    items = [(["Hosting, one year"], "1", "120.00", "120.00"), (WRAPPED, "3", "450.00", "1350.00"),
             (["Domain name"], "2", "15.00", "30.00")]
    y = 80.0
    edges = [y]
    for x0, title in zip(cols, ["Description", "Qty", "Unit price", "Amount"], strict=False):
        page.insert_text((x0 + 4, y + 11), title, fontsize=9, fontname="hebo")
    y += 16
    edges.append(y)
    for lines, qty, unit, amount in items:
        top = y
        for k, text in enumerate(lines):
            page.insert_text((cols[0] + 4, top + 11 + 12 * k), text, fontsize=9)
        for x0, text in zip(cols[1:], [qty, unit, amount], strict=False):
            page.insert_text((x0 + 4, top + 11), text, fontsize=9)
        y += 6 + 12 * len(lines)
        edges.append(y)
    for e in edges:
        shape.draw_line((cols[0], e), (cols[-1], e))
    for x in cols:
        shape.draw_line((x, edges[0]), (x, edges[-1]))
    shape.finish(color=(0, 0, 0), width=0.6)
    shape.commit()
    return doc.tobytes()


# --------------------------------------------------------------------------------------------- checks


def rows_shown(text: str, rows: list[PartyRow]) -> set[int]:
    """Indices of the rows whose digits or party name the text shows, as whole words."""
    padded = f" {' '.join(text.split())} "
    return {k for k, row in enumerate(rows) if f" {row.digits} " in padded or f" {row.party} " in padded}


def blocks_joining_rows(blocks: list[OcrBlock], rows: list[PartyRow]) -> list[OcrBlock]:
    """LINE and CELL blocks that show the digits or the party name of two or more rows."""
    return [b for b in blocks if b.type in (BlockType.LINE, BlockType.CELL) and len(rows_shown(b.text, rows)) > 1]


def fixtures() -> dict[str, Sheet]:
    return {
        "merged candidate, no rules": merged_candidate_sheet(rules="none"),
        "merged candidate, some rules": merged_candidate_sheet(rules="some"),
        "merged candidate, all rules": merged_candidate_sheet(rules="all"),
        "no grid at all": merged_candidate_sheet(grid=False),
        "two columns": columns_sheet(columns=2),
        "two columns, touching, no grid": columns_sheet(columns=2, grid=False, gutter=0.0),
        "three columns": columns_sheet(columns=3),
        "three columns, 2 pt apart": columns_sheet(columns=3, gutter=2.0),
        "three columns, no grid": columns_sheet(columns=3, grid=False),
    }


def _pages(sheet: Sheet, folder: Path, engines: list[str], degrees: float) -> dict[str, OcrPage]:
    from PIL import Image

    from extraction.ocr.blocks import PageImage, SourceDocument
    from extraction.ocr.pdf_text import PdfTextEngine
    from extraction.ocr.rapid import RapidOcrEngine
    from extraction.ocr.tesseract import TesseractEngine

    pdf = folder / "sheet.pdf"
    pdf.write_bytes(sheet.pdf)
    pages = {}
    if "pdf-text" in engines:
        [pages["pdf-text"]] = PdfTextEngine().read(SourceDocument(pdf, "pdf", []))
    with pymupdf.open(pdf) as doc:
        pix = doc[0].get_pixmap(dpi=150)
    image = Image.frombytes("RGB", (pix.width, pix.height), pix.samples).convert("L")
    if degrees:
        image = image.rotate(degrees, resample=Image.Resampling.BICUBIC, fillcolor=255)
    png = folder / "sheet.png"
    image.save(png)
    scan = SourceDocument(png, "image", [PageImage(1, png, image.width, image.height)])
    for name, engine in (("rapidocr", RapidOcrEngine), ("tesseract", TesseractEngine)):
        if name in engines:
            [pages[name]] = engine().read(scan)
    return pages


def main() -> None:
    import argparse
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engines", default="pdf-text", help="comma-separated: pdf-text,rapidocr,tesseract")
    parser.add_argument("--degrees", type=float, default=0.0, help="turn the rendered page (OCR engines only)")
    args = parser.parse_args()
    engines = args.engines.split(",")
    print("| fixture | engine | LINE blocks | LINEs joining two rows | CELL blocks | CELLs joining two rows |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, sheet in fixtures().items():
            for engine, page in _pages(sheet, Path(tmp), engines, args.degrees).items():
                bad = blocks_joining_rows(page.blocks, sheet.rows)
                count = {t: sum(b.type is t for b in page.blocks) for t in (BlockType.LINE, BlockType.CELL)}
                print(f"| {name} | {engine} | {count[BlockType.LINE]} | "
                      f"{sum(b.type is BlockType.LINE for b in bad)} | {count[BlockType.CELL]} | "
                      f"{sum(b.type is BlockType.CELL for b in bad)} |", flush=True)


if __name__ == "__main__":
    main()
