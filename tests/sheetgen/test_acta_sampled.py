"""Sampled tally sheets: conventions drawn per seed, a clean sheet that prints them legibly on one page,
deterministic PDFs and scans, and a text layer that shows every count beside its party."""

from __future__ import annotations

import dataclasses
import io
import re
from collections import Counter
from functools import cache

import numpy as np
import pymupdf
import pytest
from PIL import Image

import sheetgen.conventions as conventions_module
from extraction.doctypes.acta.layout import CANDIDATES, PARTIES
from extraction.doctypes.acta.qr import decode_qr, parse_qr_payload
from sheetgen.conventions import AXES, EXTRAS, Conventions, draw_conventions, draw_scan_conventions
from sheetgen.generate import generate_acta, render_page, spell_digits
from sheetgen.sampled import SampledActa, generate_sampled, scan_sampled
from sheetgen.sampled_draw import FLOOR

SEEDS = range(200)
# Words that start a row's label: after them the previous value run has ended.
LABEL_WORDS = {p.split()[0] for p in PARTIES} | {w for name, _ in CANDIDATES for w in name.split()}


@cache
def sampled(seed: int) -> SampledActa:
    return generate_sampled(seed)


@cache
def drawn(seed: int) -> Conventions:
    return draw_conventions(seed)


def seeds_where(**wanted: str) -> list[int]:
    return [s for s in SEEDS if all(drawn(s).summary()[k] == v for k, v in wanted.items())]


def page_words(pdf_bytes: bytes) -> list[tuple[float, float, float, float, str]]:
    with pymupdf.open(stream=pdf_bytes, filetype="pdf") as doc:
        return [tuple(w[:5]) for w in doc[0].get_text("words")]


def runs_after(words: list, label: str) -> list[list[str]]:
    """For every place `label`'s last word is printed: the words right of it on its line, up to the next label."""
    last = label.split()[-1]
    runs = []
    for x0, y0, _, y1, text in words:
        if text.rstrip(":") != last:
            continue
        mid, height = (y0 + y1) / 2, y1 - y0
        line = sorted((w for w in words if w[0] > x0 and abs((w[1] + w[3]) / 2 - mid) < height * 0.45
                       and w[3] - w[1] < height * 2.5), key=lambda w: w[0])
        run: list[str] = []
        for w in line:
            if w[4] in LABEL_WORDS:
                break
            run.append(w[4])
        runs.append(run)
    return runs


def expected_run(c: Conventions, digits: str, words: str) -> list[str]:
    """The words a count prints as, in the sheet's number style and order."""
    shown = list(digits) if c.numbers in ("comb", "spaced") else [digits]
    return shown + words.split() if c.order == "digits-words" else words.split() + shown


# ---------------------------------------------------------------- conventions


def test_it_draws_every_convention_value_over_the_first_two_hundred_seeds():
    seen: dict[str, set[str]] = {axis: set() for axis in AXES}
    extras, extras_counts = set(), set()
    for seed in SEEDS:
        summary = drawn(seed).summary()
        for axis in AXES:
            seen[axis].add(summary[axis])
        extras |= set(drawn(seed).extras)
        extras_counts.add(len(drawn(seed).extras))
    for axis, values in AXES.items():
        assert seen[axis] == set(values), f"{axis}: never drawn {set(values) - seen[axis]}"
    assert extras == set(EXTRAS) and extras_counts == set(range(6))


def test_a_rules_width_is_that_of_its_kind():
    for seed in SEEDS:
        c = drawn(seed)
        assert {"thin": (0.25, 0.4), "normal": (0.6, 1.0), "missing": (0.0, 0.0)}[c.rules][0] <= c.rule_width
        assert c.rule_width <= {"thin": 0.4, "normal": 1.0, "missing": 0.0}[c.rules]


def test_without_rules_no_comb_and_no_merged_group_column_is_recorded():
    for seed in seeds_where(rules="missing"):
        c = drawn(seed)
        assert c.numbers != "comb" and c.words != "merged-group" and c.names == "per-row"


def test_the_scan_draws_do_not_move_the_sheet_draws(monkeypatch):
    assert draw_conventions(7).scan == draw_scan_conventions(7)
    before = dataclasses.replace(draw_conventions(7), scan=None)
    other = draw_scan_conventions(99)
    monkeypatch.setattr(conventions_module, "draw_scan_conventions", lambda seed: other)
    after = conventions_module.draw_conventions(7)
    assert after.scan == other
    assert dataclasses.replace(after, scan=None) == before


def test_the_summary_spells_every_axis_as_a_short_string():
    summary = sampled(3).conventions.summary()
    assert set(AXES) <= set(summary)
    assert all(isinstance(v, str) and v for v in summary.values())
    assert summary["blocks"] in {"1", "2", "3"} and summary["page"].count("-") == 1


# ---------------------------------------------------------------- the sheet


def test_the_same_seed_gives_the_same_pdf_bytes_and_another_seed_another_sheet():
    assert generate_sampled(5).pdf_bytes == generate_sampled(5).pdf_bytes
    assert generate_sampled(5).pdf_bytes != generate_sampled(6).pdf_bytes


def test_the_printed_sheet_has_the_structure_of_the_fixed_generator():
    fixed = generate_acta(seed=11).printed
    for seed in (11, 12, 13):
        printed = sampled(seed).printed
        assert printed.keys() == fixed.keys()
        assert [r.keys() for r in printed["rows"]] == [r.keys() for r in fixed["rows"]]
        assert printed["layout"] == f"sampled-{seed}" and printed["errors"] == []


def test_a_seed_prints_the_same_counts_and_code_as_the_fixed_generator():
    for seed in (0, 1, 2):
        assert sampled(seed).truth == generate_acta(seed=seed).truth


@pytest.mark.parametrize("numbers", AXES["numbers"])
def test_every_row_prints_words_that_spell_its_digits_and_totals_that_add_up(numbers):
    for seed in seeds_where(numbers=numbers)[:3]:
        acta = sampled(seed)
        p, truth = acta.printed, acta.truth
        assert [r["party"] for r in p["rows"]] == PARTIES
        for row, count in zip(p["rows"], truth.counts, strict=True):
            assert row["votes"] == count == int(row["votes_text"])
            assert row["votes_words"] == spell_digits(row["votes_text"])
        widths = {len(r["votes_text"]) for r in p["rows"]}
        if numbers == "plain":
            assert len(widths) > 1  # 0, 7, 145: no padding
        else:
            assert widths == {len(p["total_votes_text"])} and widths <= {3, 4}
        assert p["valid_votes"] == sum(r["votes"] for r in p["rows"])
        assert p["total_votes"] == p["valid_votes"] + p["null_votes"]
        for key in ("valid_votes", "null_votes", "total_votes"):
            assert p[f"{key}_words"] == spell_digits(p[f"{key}_text"]) and int(p[f"{key}_text"]) == p[key]


def _text_layer_seeds() -> list[int]:
    """A few seeds covering every number style, words placement, candidate style and totals placement."""
    chosen: list[int] = []
    for axis in ("numbers", "words", "candidate", "totals", "order"):
        for value in AXES[axis]:
            if not any(drawn(s).summary()[axis] == value for s in chosen):
                chosen.append(seeds_where(**{axis: value})[0])
    return chosen


@pytest.mark.parametrize("seed", _text_layer_seeds())
def test_the_text_layer_shows_every_count_beside_its_label(seed):
    acta = sampled(seed)
    c, p = acta.conventions, acta.printed
    words = page_words(acta.pdf_bytes)
    for row in p["rows"]:
        want = expected_run(c, row["votes_text"], row["votes_words"])
        assert want in runs_after(words, row["party"]), (row["party"], runs_after(words, row["party"]))
    for label, key in zip(c.totals_labels, ("valid_votes", "null_votes", "total_votes"), strict=True):
        want = expected_run(c, p[f"{key}_text"], p[f"{key}_words"])
        assert want in runs_after(words, label), (label, runs_after(words, label))


def test_comb_and_spaced_digits_come_as_separate_words():
    for style in ("comb", "spaced"):
        acta = sampled(seeds_where(numbers=style)[0])
        words = [w[4] for w in page_words(acta.pdf_bytes)]
        assert acta.printed["rows"][0]["votes_text"] not in words
        assert Counter(words)["0"] >= 38  # every count is padded: a zero per row at least


def test_the_acta_code_is_printed_once_and_no_header_number_has_its_form():
    decoys = 0
    for seed in seeds_where(code_at="header")[:4] + seeds_where(code_at="footer")[:3] + [
            s for s in SEEDS if "centre-code" in drawn(s).extras][:8]:
        acta = sampled(seed)
        words = [w[4] for w in page_words(acta.pdf_bytes)]
        assert [w for w in words if re.fullmatch(r"\d{9}\.\d{2}", w)] == [acta.printed["acta_id"]]
        with pymupdf.open(stream=acta.pdf_bytes, filetype="pdf") as doc:
            assert doc[0].get_text().count(acta.printed["acta_id"]) == 1
        decoys += sum(bool(re.fullmatch(r"\d{9}", w)) for w in words)
    assert decoys >= 4  # centre codes of the same nine digits were printed, and did not pass for the code


@pytest.mark.parametrize("seed", range(0, 40, 3))
def test_everything_fits_one_page_legibly_without_two_words_overlapping(seed):
    acta = sampled(seed)
    with pymupdf.open(stream=acta.pdf_bytes, filetype="pdf") as doc:
        assert doc.page_count == 1
        page = doc[0]
        boxes = [pymupdf.Rect(w[:4]) for w in page.get_text("words")]
        spans = [s for b in page.get_text("dict")["blocks"] for line in b.get("lines", []) for s in line["spans"]]
        assert all(box in page.rect for box in boxes)
    # Boxes shrunk to their ink (a font's box runs into the next line's): no two may share more than a hair.
    box = np.array([tuple(b) for b in boxes])
    margin = 0.22 * np.minimum(box[:, 2] - box[:, 0], box[:, 3] - box[:, 1])
    ink = box + np.stack([margin, margin, -margin, -margin], axis=1)
    for i in range(len(ink) - 1):
        rest = ink[i + 1:]
        wide = np.minimum(ink[i, 2], rest[:, 2]) - np.maximum(ink[i, 0], rest[:, 0])
        tall = np.minimum(ink[i, 3], rest[:, 3]) - np.maximum(ink[i, 1], rest[:, 1])
        assert not np.any((wide > 0.3) & (tall > 0.3)), boxes[i]
    digits = [s["size"] for s in spans if re.fullmatch(r"\d+", s["text"].split(" ")[0])]
    assert min(digits) >= FLOOR - 0.05 and acta.conventions.size >= FLOOR - 0.05


def test_a_sheet_that_would_print_too_small_takes_another_number_of_blocks_and_says_so():
    moved = [s for s in range(0, 40, 3) if sampled(s).conventions.blocks != drawn(s).blocks]
    assert moved  # landscape single tables and narrow triple tables do not fit legibly
    for seed in moved:
        assert sampled(seed).conventions.size >= FLOOR
        assert dataclasses.replace(sampled(seed).conventions, blocks=drawn(seed).blocks, size=drawn(seed).size,
                                   signatures_at=drawn(seed).signatures_at, totals_at=drawn(seed).totals_at) == drawn(seed)


@pytest.mark.parametrize("corner", AXES["qr_at"])
def test_the_qr_code_in_any_corner_carries_the_truth(corner):
    acta = sampled(seeds_where(qr_at=corner)[0])
    page = render_page(acta.pdf_bytes, dpi=150)
    assert parse_qr_payload(decode_qr(page)) == acta.truth


# ---------------------------------------------------------------- the scan


def test_a_scan_is_a_deterministic_jpeg_of_the_drawn_resolution():
    acta = sampled(12)
    scan = scan_sampled(acta, seed=12)
    assert scan == scan_sampled(acta, seed=12) and scan != scan_sampled(acta, seed=13)
    image = Image.open(io.BytesIO(scan))
    assert image.format == "JPEG" and 40_000 < len(scan) < 3_000_000
    dpi = acta.conventions.scan.dpi
    with pymupdf.open(stream=acta.pdf_bytes, filetype="pdf") as doc:
        rect = doc[0].rect
    assert abs(image.width - rect.width * dpi / 72) <= 2 and abs(image.height - rect.height * dpi / 72) <= 2
