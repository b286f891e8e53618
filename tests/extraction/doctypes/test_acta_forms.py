"""The forms family of sampled tally sheets: printed lines on thermal strips and paper, several pages, receipt
fonts, photos on a table; and the scripted model reading the lines such sheets print."""

from __future__ import annotations

import hashlib
import io
import math
import os
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import numpy as np
import pymupdf
import pytest
from PIL import Image

from extraction.doctypes.acta.layout import DIGIT_WORDS, PARTIES
from extraction.doctypes.acta.qr import decode_qr, parse_qr_payload
from sheetgen.forms import (
    FORM_AXES,
    LINE_STRUCTURES,
    FormConventions,
    draw_form_conventions,
    draw_form_scan,
    is_strip,
)
from sheetgen.generate import render_page
from sheetgen.sampled import SampledActa, generate_sampled, scan_sampled
from tests.support.acta_answers import _parts, correct_answer

ROOT = Path(__file__).resolve().parents[3]
FIRST = 300_000  # the forms family's TUNE seeds (bench/unseen_layouts.py)
DRAWS = range(FIRST, FIRST + 400)
SHEETS = range(FIRST, FIRST + 80)
LEADER_ONLY = re.compile(r"^[.\-_*=·…]+$")


@cache
def sheet(seed: int) -> SampledActa:
    return generate_sampled(seed, family="forms")


@cache
def drawn(seed: int) -> FormConventions:
    return draw_form_conventions(seed)


def first(predicate, seeds=SHEETS) -> int:
    return next(s for s in seeds if predicate(sheet(s)))


def words_in_order(pdf_bytes: bytes) -> list[str]:
    """Every word of the text layer in the order it was printed, page after page."""
    with pymupdf.open(stream=pdf_bytes, filetype="pdf") as doc:
        return [w[4] for page in doc for w in page.get_text("words", sort=False)]


# ---------------------------------------------------------------- conventions


def test_every_value_of_every_axis_is_drawn_over_four_hundred_seeds():
    seen: dict[str, set[str]] = {axis: set() for axis in FORM_AXES}
    for seed in DRAWS:
        summary = drawn(seed).summary()
        for axis in FORM_AXES:
            seen[axis].add(summary[axis])
    for axis, values in FORM_AXES.items():
        assert set(values) <= seen[axis], f"{axis}: never drawn {set(values) - seen[axis]}"


def test_the_drawn_sheets_show_every_page_and_structure_and_more_than_one_page():
    pages, structures, counts = set(), set(), set()
    for seed in SHEETS:
        c = sheet(seed).conventions
        pages.add(c.page)
        structures.add(c.structure)
        counts.add(sheet(seed).pages)
        assert c.pages == sheet(seed).pages  # the conventions record the pages as drawn
    assert pages == set(FORM_AXES["page"]) and structures == set(FORM_AXES["structure"])
    assert {1, 2, 3} <= counts


def test_a_strip_never_holds_a_table_and_a_table_is_drawn_in_the_first_familys_conventions():
    for seed in DRAWS:
        c = drawn(seed)
        if is_strip(c.page):
            assert c.structure in LINE_STRUCTURES and c.table is None and c.columns == 1
        if c.structure == "table":
            assert c.table is not None and f"{c.table.paper}-{c.table.orientation}" == c.page


def test_the_summary_spells_every_axis_and_the_scan_as_short_strings():
    summary = sheet(FIRST).conventions.summary()
    assert set(FORM_AXES) <= set(summary) and summary["structure"] in FORM_AXES["structure"]
    assert all(isinstance(v, str) and v for v in summary.values())


def test_the_scan_draws_come_from_their_own_stream():
    assert drawn(FIRST + 1).scan == draw_form_scan(FIRST + 1)
    assert draw_form_scan(FIRST + 1) != draw_form_scan(FIRST + 2)
    rotations = [abs(draw_form_scan(s).rotation) for s in DRAWS if draw_form_scan(s).style == "photo"]
    assert max(rotations) <= 4.0 and max(rotations) > 3.5


# ---------------------------------------------------------------- the sheet


def test_the_same_seed_gives_the_same_pdf_bytes_and_another_seed_another_sheet():
    assert generate_sampled(FIRST + 3, family="forms").pdf_bytes == sheet(FIRST + 3).pdf_bytes
    assert sheet(FIRST + 3).pdf_bytes != sheet(FIRST + 4).pdf_bytes


def test_the_same_seed_gives_the_same_bytes_in_another_process_whatever_its_hash_seed():
    seed = first(lambda a: a.conventions.font in ("rmono", "rmobo") and a.pages > 1)  # embedded fonts, pages
    code = ("import hashlib; from sheetgen.sampled import generate_sampled; "
            f"print(hashlib.sha256(generate_sampled({seed}, family='forms').pdf_bytes).hexdigest())")
    for hash_seed in ("1", "2"):
        out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONHASHSEED": hash_seed},
                             capture_output=True, text=True, check=True, cwd=ROOT).stdout.strip()
        assert out == hashlib.sha256(sheet(seed).pdf_bytes).hexdigest()


def test_an_unknown_family_is_refused_and_the_default_is_the_tables_family():
    with pytest.raises(ValueError, match="unknown family"):
        generate_sampled(1, family="receipts")
    assert generate_sampled(1).family == "tables" and generate_sampled(1).printed["layout"] == "sampled-1"


def test_todays_sampled_sheets_and_scans_keep_their_bytes():
    # Pinned before the forms family was added: the tables family draws exactly what it drew.
    pinned = {3: ("57deffa1e988f171dd9895ded711c089b01e3226d231742e3a7a9baa09f50904",
                  "6eca2e13a64c7c3f2e4867f7af5a1f865cbd5135660af6dc777457ca046ffd02"),
              100000: ("c54f3bd3fe8c43076c03498e5e34d5e08af504e82cb3b98537492a857ec05c15",
                       "6d87c347a88177596d32afefc73b65bb4f9ba9ce8827fbdfe422b94cb97f92f3")}
    for seed, (pdf, scan) in pinned.items():
        acta = generate_sampled(seed)
        assert acta.family == "tables"
        assert hashlib.sha256(acta.pdf_bytes).hexdigest() == pdf
        assert hashlib.sha256(scan_sampled(acta, seed=seed)).hexdigest() == scan


def test_a_strip_is_58_or_80_mm_wide_and_one_long_page_is_taller_than_1500_pt():
    strips = [s for s in SHEETS if is_strip(sheet(s).conventions.page)]
    assert len(strips) > 20
    for seed in strips:
        with pymupdf.open(stream=sheet(seed).pdf_bytes, filetype="pdf") as doc:
            widths = {round(page.rect.width) for page in doc}
            assert widths in ({164}, {227})
            assert widths == {164 if sheet(seed).conventions.page == "strip-58" else 227}
            if doc.page_count == 1:
                assert doc[0].rect.height > 1500
            else:
                assert len({round(page.rect.height) for page in doc}) == 1  # a printer's page length


def test_every_row_and_total_prints_words_that_spell_its_digits():
    for seed in SHEETS[:10]:
        p = sheet(seed).printed
        assert [r["party"] for r in p["rows"]] == PARTIES and p["layout"] == f"forms-{seed}"
        for row, count in zip(p["rows"], sheet(seed).truth.counts, strict=True):
            assert row["votes"] == count == int(row["votes_text"])
            assert row["votes_words"].split() == [DIGIT_WORDS[int(d)] for d in row["votes_text"]]
        assert p["valid_votes"] == sum(r["votes"] for r in p["rows"])


def _line_seeds() -> list[int]:
    """Sheets of printed lines covering every structure, leader, page and figure alignment."""
    chosen: list[int] = []
    for axis in ("structure", "leader", "page", "figures", "font"):
        for value in FORM_AXES[axis]:
            if axis == "structure" and value == "table":
                continue
            have = any(sheet(s).conventions.summary()[axis] == value for s in chosen)
            candidates = [s for s in SHEETS if sheet(s).conventions.lines
                          and sheet(s).conventions.summary()[axis] == value]
            if not have and candidates:
                chosen.append(candidates[0])
    return chosen


@pytest.mark.parametrize("seed", _line_seeds())
def test_the_text_layer_prints_every_partys_votes_after_its_name_as_printed_says(seed):
    acta = sheet(seed)
    c, p = acta.conventions, acta.printed
    words = [w for w in words_in_order(acta.pdf_bytes) if not LEADER_ONLY.match(w)]
    at = 0
    for row in p["rows"]:
        name = row["party"].split()
        at = next(i for i in range(at, len(words)) if words[i:i + len(name)] == name) + len(name)
        figures = [row["votes_text"], *row["votes_words"].split()]
        if c.structure == "words-first":
            figures = [*row["votes_words"].split(), row["votes_text"]]
        assert words[at:at + len(figures)] == figures, (row["party"], c.structure, words[at - 2:at + 8])


@pytest.mark.parametrize("page", ["strip", "paper"])
def test_a_sheet_of_several_pages_puts_the_qr_on_the_last_page_and_it_decodes_to_the_truth(page):
    seed = first(lambda a: a.pages > 1 and (is_strip(a.conventions.page) == (page == "strip")))
    acta = sheet(seed)
    with pymupdf.open(stream=acta.pdf_bytes, filetype="pdf") as doc:
        images = [len(p.get_images()) for p in doc]
    assert images[-1] == 1 and sum(images[:-1]) == 0
    last = render_page(acta.pdf_bytes, dpi=150, page=acta.pages)
    assert parse_qr_payload(decode_qr(last)) == acta.truth


def test_a_receipt_font_is_embedded_monospaced_and_its_lines_are_one_string():
    seed = first(lambda a: a.conventions.font == "rmono" and a.conventions.structure in ("same-line", "next-line"))
    with pymupdf.open(stream=sheet(seed).pdf_bytes, filetype="pdf") as doc:
        fonts = {f[3] for page in doc for f in page.get_fonts()}
        spans = [s for b in doc[0].get_text("dict")["blocks"] for line in b.get("lines", []) for s in line["spans"]]
    assert any("DejaVu Sans Mono" in f for f in fonts)
    row = next(s["text"] for s in spans if s["text"].startswith("PSUV"))
    assert row.split()[0] == "PSUV" and len(row.split()) > 1  # the name and what follows it, one string


# ---------------------------------------------------------------- the scans


def test_a_photo_scan_is_deterministic_and_lies_on_a_darker_table():
    strips = [s for s in SHEETS if sheet(s).pages == 1 and draw_form_scan(s).style == "photo"
              and is_strip(sheet(s).conventions.page)]
    seed = min(strips, key=lambda s: (sheet(s).conventions.page, draw_form_scan(s).dpi))  # a quick one: 58 mm
    acta = sheet(seed)
    scan = scan_sampled(acta, seed=seed)
    assert scan == scan_sampled(acta, seed=seed) and scan[:2] == b"\xff\xd8"
    grey = np.asarray(Image.open(io.BytesIO(scan)).convert("L"), dtype=np.float64)
    h, w = grey.shape
    paper = np.median(grey[h // 3: 2 * h // 3, w // 2 - 5: w // 2 + 5])
    corners = [grey[:20, :20], grey[:20, -20:], grey[-20:, :20], grey[-20:, -20:]]
    assert all(corner.mean() < paper - 60 for corner in corners)
    dpi = draw_form_scan(seed).dpi
    with pymupdf.open(stream=acta.pdf_bytes, filetype="pdf") as doc:
        page_w = doc[0].rect.width * dpi / 72
    assert w > page_w * 1.1  # the table shows on both sides of the strip


def test_a_scan_of_several_pages_is_a_pdf_of_one_image_per_page():
    seed = first(lambda a: a.pages > 1 and draw_form_scan(a.conventions.seed).style == "scanner")
    acta = sheet(seed)
    scan = scan_sampled(acta, seed=seed)
    with pymupdf.open(stream=scan, filetype="pdf") as doc:
        assert doc.page_count == acta.pages
        assert all(len(page.get_images()) == 1 and not page.get_text().strip() for page in doc)


# ---------------------------------------------------------------- the scripted model


def prompt(*lines: str) -> str:
    return "# page 1\n" + "\n".join(f"L{i} {text}" for i, text in enumerate(lines, start=1))


def printed_of(seed: int) -> dict:
    return sheet(seed).printed


def test_a_word_glued_to_a_leader_is_read_as_its_parts_and_other_words_as_they_are():
    assert _parts("PSUV.......056") == ["PSUV", "056"]
    assert _parts("PSUV-----CERO") == ["PSUV", "CERO"]
    assert _parts("______0245") == ["0245"]
    for word in ("C.I.", "V-12.345.678", "------", "PSUV", "28-07-2024", "...", "PV."):
        assert _parts(word) == [word]


@pytest.mark.parametrize("structure", ["next-line", "name-alone", "words-first", "glued"])
def test_the_model_reads_each_structure_of_printed_lines_and_cites_what_it_read(structure):
    p = printed_of(FIRST)
    lines = [f"ACTA {p['acta_id']}"]
    for row in p["rows"]:
        d, w = row["votes_text"], row["votes_words"]
        lines += {"next-line": [f"{row['party']} ........ {d}", w],
                  "name-alone": [row["party"], d, w],
                  "words-first": [f"{row['party']} ---- {w} {d}"],
                  "glued": [f"{row['party']}.......{d} {w}"]}[structure]
    for label, key in (("VOTOS VALIDOS", "valid_votes"), ("VOTOS NULOS", "null_votes"), ("TOTAL VOTOS", "total_votes")):
        lines += [f"{label} ____ {p[key + '_text']}", p[key + "_words"]]
    answer = correct_answer(prompt(*lines), p)  # strict: every value is found
    first_row = answer["rows"][0]
    assert first_row["votes"]["value"] == p["rows"][0]["votes"]
    if structure == "next-line":
        assert first_row["votes"]["proof"] == [{"type": "WORD", "line": 2, "value": p["rows"][0]["votes_text"]}]
        assert first_row["votes_words"]["proof"] == [{"type": "LINE", "id": 3}]
    if structure == "name-alone":
        assert first_row["votes"]["proof"] == [{"type": "LINE", "id": 3}]
    if structure == "glued":
        assert first_row["votes"]["proof"] == [
            {"type": "WORD", "line": 2, "value": f"PSUV.......{p['rows'][0]['votes_text']}"}]


def test_the_model_reads_a_row_cut_over_two_pages():
    p = printed_of(FIRST)
    lines = [f"ACTA {p['acta_id']}"]
    for row in p["rows"]:
        lines += [row["party"], f"{row['votes_text']} {row['votes_words']}"]
    for label, key in (("VOTOS VALIDOS", "valid_votes"), ("VOTOS NULOS", "null_votes"), ("TOTAL VOTOS", "total_votes")):
        lines += [label, f"{p[key + '_text']} {p[key + '_words']}"]
    text = prompt(*lines)
    cut = text.index("\nL5 ") + 1  # PCV's name (L4) on page 1, its figures (L5) on page 2
    answer = correct_answer(text[:cut] + "# page 2\n" + text[cut:], p)
    assert answer["rows"][1]["votes"]["proof"] == [{"type": "WORD", "line": 5, "value": p["rows"][1]["votes_text"]}]
    assert answer["rows"][1]["votes_words"]["value"] == p["rows"][1]["votes_words"]


@pytest.mark.parametrize("length", [1200, 6000])
def test_a_scanned_strips_lines_tilt_as_a_pages_do_whatever_its_length(length):
    # The corner moves of a scanner's perspective, measured along a strip a metre long, sheared its lines by ten
    # degrees and more; measured over a part as long as one and a half widths, a line tilts as on a page.
    from sheetgen.photo import tilt_depth
    from sheetgen.scans import degrade_scan

    w = 640
    page = Image.new("L", (w, length), 255)
    page.paste(0, (20, 300, w - 20, 304))  # one printed rule across the strip
    jpeg = degrade_scan(page, seed=7, perspective=0.03, rotation=0.0, lighting="even", blur=0.0, grain=0.0,
                        jpeg_quality=95, depth=tilt_depth(length, w))
    grey = np.asarray(Image.open(io.BytesIO(jpeg)).convert("L"))
    ends = [np.argmin(grey[:600, x]) for x in (60, w - 60)]
    assert abs(ends[0] - ends[1]) / (w - 120) < math.tan(math.radians(3))
