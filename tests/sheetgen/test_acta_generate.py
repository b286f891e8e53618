"""Generated tally sheets: truth, QR payload, QR decode and mask, injected errors, determinism."""

from __future__ import annotations

import io
import re
from functools import cache

import pymupdf
import pytest
from PIL import Image

from extraction.doctypes.acta.layout import DIGIT_WORDS, PARTIES
from extraction.doctypes.acta.qr import ActaTruth, decode_qr, format_qr_payload, mask_qr, parse_qr_payload
from sheetgen.generate import (
    DEFAULT_LAYOUTS,
    ERRORS,
    LAYOUTS,
    GeneratedActa,
    generate_acta,
    render_page,
    render_scan,
    spell_digits,
)


@cache
def acta(seed: int, layout: str, errors: tuple[str, ...] = ()) -> GeneratedActa:
    return generate_acta(seed=seed, layout=layout, errors=errors)


def pdf_text(pdf_bytes: bytes) -> str:
    with pymupdf.open(stream=pdf_bytes, filetype="pdf") as doc:
        return doc[0].get_text()


def words_to_number(words: str) -> int:
    return int("".join(str(DIGIT_WORDS.index(w)) for w in words.split()))


def test_the_payload_round_trips_through_format_and_parse():
    truth = acta(1, "classic").truth
    assert parse_qr_payload(format_qr_payload(truth)) == truth


def test_a_published_style_payload_parses_with_null_votes_and_extra():
    counts = [140, 7, 10] + [1] * 35
    text = "050201001.01!" + ",".join(map(str, counts)) + "!3!2"
    truth = parse_qr_payload(text)
    assert truth.acta_id == "050201001.01"
    assert truth.counts[:3] == (140, 7, 10) and len(truth.counts) == 38
    assert (truth.null_votes, truth.extra) == (3, 2)
    assert truth.valid_votes == 192 and truth.total_votes == 195


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ("050201001.01!1,2,3!0!0", "expected 38 party counts, found 3"),
        ("050201001.01!" + ",".join(["1"] * 38) + "!0", "expected 4 fields"),
        ("ACTA-1!" + ",".join(["1"] * 38) + "!0!0", "acta id"),
        ("050201001.01!" + ",".join(["1"] * 37 + ["x"]) + "!0!0", "count 38 (CONDE)"),
        ("050201001.01!" + ",".join(["1"] * 38) + "!-1!0", "null-votes"),
    ],
)
def test_a_bad_payload_raises_a_clear_error(payload, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_qr_payload(payload)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_the_sheet_prints_the_header_rows_and_totals(layout):
    generated = acta(3, layout)
    text = pdf_text(generated.pdf_bytes)
    assert "ELECCION PRESIDENCIAL 2024" in text
    assert generated.truth.acta_id in text and re.fullmatch(r"\d{9}\.\d{2}", generated.truth.acta_id)
    for party in PARTIES:
        assert party in text
    for key in ("valid_votes", "null_votes", "total_votes"):
        assert generated.printed[f"{key}_text"] in text
        assert generated.printed[f"{key}_words"] in text
    assert generated.layout == layout


def test_a_clean_sheet_prints_the_truth_in_digits_and_words():
    generated = acta(4, "classic")
    truth, printed = generated.truth, generated.printed
    assert [r["votes"] for r in printed["rows"]] == list(truth.counts)
    for row in printed["rows"]:
        assert int(row["votes_text"]) == row["votes"] and len(row["votes_text"]) in (3, 4)
        assert words_to_number(row["votes_words"]) == row["votes"]
    assert printed["valid_votes"] == truth.valid_votes == sum(truth.counts)
    assert printed["total_votes"] == truth.total_votes == truth.valid_votes + truth.null_votes
    assert generated.qr_payload == format_qr_payload(truth)


def test_spell_digits_spells_each_digit_in_spanish():
    assert spell_digits("0056") == "CERO CERO CINCO SEIS"


def test_counts_are_skewed_with_zeros_and_a_few_large_parties():
    counts = [c for seed in range(20) for c in acta(seed, "classic").truth.counts]
    assert counts.count(0) > len(counts) // 4
    assert max(counts) > 50
    assert sorted(counts)[len(counts) // 2] <= 3  # the median party is tiny


def test_the_same_seed_gives_the_same_sheet_and_another_seed_does_not():
    a, b = generate_acta(seed=11), generate_acta(seed=11)
    assert a.pdf_bytes == b.pdf_bytes and a.truth == b.truth and a.printed == b.printed
    assert generate_acta(seed=12).truth != a.truth


def test_a_seed_has_the_same_truth_in_every_layout():
    assert acta(14, "classic").truth == acta(14, "two-column").truth == generate_acta(seed=14).truth


def test_without_a_layout_a_seed_draws_one_of_the_first_two_as_it_always_did():
    assert {generate_acta(seed=s).layout for s in range(12)} == set(DEFAULT_LAYOUTS)


def test_unknown_errors_and_layouts_are_refused():
    with pytest.raises(ValueError, match="unknown acta error"):
        generate_acta(seed=1, errors=["typo"])
    with pytest.raises(ValueError, match="unknown acta layout"):
        generate_acta(seed=1, layout="three-column")


def test_a_digits_words_mismatch_changes_one_rows_words_only():
    clean, wrong = acta(5, "classic"), acta(5, "classic", ("digits_words_mismatch",))
    assert wrong.truth == clean.truth and wrong.qr_payload == clean.qr_payload
    changed = [(c, w) for c, w in zip(clean.printed["rows"], wrong.printed["rows"], strict=True) if c != w]
    assert len(changed) == 1
    before, after = changed[0]
    assert after["votes_text"] == before["votes_text"]
    assert words_to_number(after["votes_words"]) != after["votes"]
    assert after["votes_words"] in pdf_text(wrong.pdf_bytes)


def test_a_sum_mismatch_prints_a_valid_total_that_does_not_close():
    generated = acta(6, "two-column", ("sum_mismatch",))
    printed, truth = generated.printed, generated.truth
    assert printed["valid_votes"] != sum(r["votes"] for r in printed["rows"]) == truth.valid_votes
    assert printed["total_votes"] == printed["valid_votes"] + printed["null_votes"]
    assert printed["valid_votes_text"] in pdf_text(generated.pdf_bytes)
    assert parse_qr_payload(generated.qr_payload).valid_votes == truth.valid_votes


def test_a_total_mismatch_prints_a_total_other_than_valid_plus_null():
    generated = acta(7, "classic", ("total_mismatch",))
    printed = generated.printed
    assert printed["valid_votes"] == generated.truth.valid_votes
    assert printed["total_votes"] != printed["valid_votes"] + printed["null_votes"]
    assert words_to_number(printed["total_votes_words"]) == printed["total_votes"]


def test_every_error_can_be_injected_at_once_and_the_qr_keeps_the_truth():
    generated = acta(8, "two-column", tuple(ERRORS))
    assert parse_qr_payload(decode_qr(render_page(generated.pdf_bytes))) == acta(8, "two-column").truth


@pytest.mark.parametrize("layout", LAYOUTS)
def test_the_qr_decodes_from_the_clean_render(layout):
    generated = acta(9, layout)
    assert decode_qr(render_page(generated.pdf_bytes, dpi=150)) == generated.qr_payload


@pytest.mark.parametrize("layout", LAYOUTS)
def test_the_qr_decodes_from_a_degraded_scan(layout):
    generated = acta(10, layout)
    scan = render_scan(generated.pdf_bytes, seed=10, blur=1.0, jpeg_quality=35, rotation_deg=1.2)
    assert decode_qr(scan) == generated.qr_payload


def test_a_scan_is_a_degraded_jpeg_of_the_page():
    generated = acta(12, "classic")
    scan = Image.open(io.BytesIO(render_scan(generated.pdf_bytes, seed=12)))
    clean = render_page(generated.pdf_bytes, dpi=150)
    assert scan.format == "JPEG" and scan.size == clean.size
    assert render_scan(generated.pdf_bytes, seed=12) == render_scan(generated.pdf_bytes, seed=12)
    assert render_scan(generated.pdf_bytes, seed=12) != render_scan(generated.pdf_bytes, seed=13)


@pytest.mark.parametrize("degraded", [False, True], ids=["clean", "scan"])
@pytest.mark.parametrize("layout", DEFAULT_LAYOUTS)
def test_masking_hides_the_qr_and_reports_its_box(layout, degraded):
    generated = acta(13, layout)
    image: Image.Image | bytes = render_page(generated.pdf_bytes)
    if degraded:
        image = render_scan(generated.pdf_bytes, seed=13, blur=0.9, jpeg_quality=40, rotation_deg=-1.0)
    masked, boxes = mask_qr(image)
    assert decode_qr(masked) is None
    assert len(boxes) == 1
    box = boxes[0]
    # The code sits in the lower half of the page and is a small square-ish patch.
    assert box.top > 0.5 and 0.1 < box.width < 0.35 and 0.08 < box.height < 0.3


def test_masking_a_page_without_a_qr_changes_nothing():
    blank = Image.new("RGB", (600, 800), "white")
    masked, boxes = mask_qr(blank)
    assert boxes == [] and masked.tobytes() == blank.tobytes()


def test_truth_totals_are_derived_from_counts():
    truth = ActaTruth(acta_id="1.1", counts=tuple([2] * 38), null_votes=3, extra=9)
    assert truth.valid_votes == 76 and truth.total_votes == 79
