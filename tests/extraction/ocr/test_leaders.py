"""Leaders painted over before the text detector reads a page (extraction/ocr/leaders.py): the dots and dashes
between a name and its figures go, letters, digits, full stops, hyphens and the dot of an i stay, on a page of
any shape at any resolution; and rows of leaders a line apart are read as rows."""

from __future__ import annotations

import numpy as np
import pymupdf
import pytest

from extraction.ocr.leaders import erase_leaders, leader_mask

NAMES = ["PSUV", "PCV", "TUPAMARO", "PPT", "MSV", "PODEMOS", "MEP", "APC", "ORA", "UPV"]
WORDS = ["CERO", "UNO", "DOS", "TRES", "CUATRO", "CINCO", "SEIS", "SIETE", "OCHO", "NUEVE"]
# (page width, height) in points: A4 portrait, A4 landscape, an 80 mm strip a metre long
SHAPES = [(595, 842), (842, 595), (227, 2835)]


def _rows(count: int) -> list[tuple[str, str, str]]:
    out = []
    for k in range(count):
        votes = (37 * k + 5) % 1000
        out.append((NAMES[k % len(NAMES)], f"{votes:03d}", " ".join(WORDS[int(d)] for d in f"{votes:03d}")))
    return out


def _sheet(shape: tuple[int, int], *, leader: str, pitch: float = 1.25, size: float = 8.0, rows: int = 10):
    """A page printing `rows` party lines `NAME <leader> 012 CERO UNO DOS` in Courier at `pitch` line heights,
    and one line of text with points, hyphens and i's; with the rects of each leader and each word."""
    width, height = shape
    doc = pymupdf.open()
    page = doc.new_page(width=width, height=height)
    advance = 0.6 * size
    cpl = int((width - 24) / advance)
    y = 30.0
    leaders, words = [], []
    for name, digits, spelled in _rows(rows):
        room = cpl - len(name) - len(digits) - len(spelled) - 4
        text = f"{name} {leader * room} {digits} {spelled}"
        page.insert_text((12, y), text, fontsize=size, fontname="cour")
        start = 12 + (len(name) + 1) * advance
        leaders.append(pymupdf.Rect(start, y - size, start + room * advance, y + 0.3 * size))
        words.append(pymupdf.Rect(12, y - size, 12 + len(name) * advance, y + 0.3 * size))
        after = start + (room + 1) * advance
        words.append(pymupdf.Rect(after, y - size, after + (len(digits) + 1 + len(spelled)) * advance, y + 0.3 * size))
        y += pitch * size
    prose = "i.e. 28-07-2024: 1.234,56 minimization"[: cpl]
    page.insert_text((12, y + size), prose, fontsize=size, fontname="cour")
    words.append(pymupdf.Rect(12, y, 12 + len(prose) * advance, y + 1.3 * size))
    return doc, leaders, words


def _image(doc: pymupdf.Document, dpi: int) -> tuple[np.ndarray, float]:
    pix = doc[0].get_pixmap(dpi=dpi)
    return np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.width, pix.n)[:, :, :3].copy(), dpi / 72


def _pixels(mask: np.ndarray, rect: pymupdf.Rect, scale: float) -> int:
    return int(mask[int(rect.y0 * scale):int(rect.y1 * scale) + 1, int(rect.x0 * scale):int(rect.x1 * scale) + 1].sum())


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dpi", [150, 220])
@pytest.mark.parametrize("leader", [".", "-"])
def test_a_leader_is_painted_over_and_no_letter_digit_point_or_hyphen_is_on_a_page_of_any_shape(shape, dpi, leader):
    doc, leaders, words = _sheet(shape, leader=leader)
    image, scale = _image(doc, dpi)
    grey = image.min(axis=2)
    mask, _ = leader_mask(grey)
    assert all(_pixels(mask, rect, scale) > 0 for rect in leaders)
    assert mask.sum() == sum(_pixels(mask, rect, scale) for rect in leaders)  # nothing outside the leaders
    assert all(_pixels(mask, rect, scale) == 0 for rect in words)
    cleaned, painted = erase_leaders(image)
    assert painted == mask.sum()
    ink = cleaned.min(axis=2) < 128
    assert all(_pixels(ink, rect, scale) == 0 for rect in leaders)  # the paper shows where the leader was


def test_a_page_without_leaders_is_returned_as_it_is():
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((40, 60), "Invoice 2024-117 ... total 1.234,56 EUR; i.e. paid.", fontsize=10, fontname="helv")
    image, _ = _image(doc, 150)
    cleaned, painted = erase_leaders(image)
    assert painted == 0 and cleaned is image
    blank = np.full((400, 300, 3), 255, dtype=np.uint8)
    assert erase_leaders(blank)[1] == 0


def test_rows_of_dotted_leaders_a_line_apart_are_read_one_row_at_a_time(tmp_path):
    # A scanned letter page of the forms family (a TUNE seed): party lines under dotted leaders across the page.
    # Read as printed, the detector joined rows of leaders into regions several lines tall and read one line of
    # each, or none: 3 of these 13 parties (RapidOcrEngine(leaders=True)).
    from extraction.ocr.blocks import BlockType, PageImage
    from extraction.ocr.rapid import RapidOcrEngine
    from extraction.pipeline.render import render_document
    from sheetgen.sampled import generate_sampled, scan_sampled

    acta = generate_sampled(300019, family="forms")
    scan = tmp_path / "scan.pdf"
    scan.write_bytes(scan_sampled(acta, seed=300019))
    [first, *_] = render_document(source=scan, kind="pdf", out_dir=tmp_path / "pages", dpi=150)
    page = RapidOcrEngine().read_image(PageImage(1, first.path, first.width, first.height))
    words = {w for b in page.blocks if b.type is BlockType.LINE for w in b.text.replace(".", " ").split()}
    parties = [row["party"] for row in acta.printed["rows"][:13]]  # the first candidate's, all on page 1
    assert [p for p in parties if p in words] == parties


@pytest.mark.parametrize("shape", SHAPES)
def test_a_rule_of_dots_or_dashes_between_lines_stays_a_separator(shape):
    width, _ = shape
    doc = pymupdf.open()
    page = doc.new_page(width=width, height=shape[1])
    cpl = int((width - 24) / 4.8)
    for k, line in enumerate(["TOTAL 25.15", "-" * cpl, "PAY 25.15", "." * cpl, "=" * cpl, "CHANGE 0.00"]):
        page.insert_text((12, 40 + 14 * k), line, fontsize=8, fontname="cour")
    image, _ = _image(doc, 150)
    mask, _ = leader_mask(image.min(axis=2))
    assert mask.sum() == 0
