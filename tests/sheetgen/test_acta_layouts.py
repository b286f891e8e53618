"""The acta layouts: every one is drawn, distinct and deterministic, prints the truth; the tune/measure split is
honest and covers every axis; scans degrade as named; the scripted models read and err as documented."""

from __future__ import annotations

import io
import itertools
import json
import re
import tempfile
from collections import Counter, defaultdict
from functools import cache
from pathlib import Path

import numpy as np
import pymupdf
import pytest
from PIL import Image

from extraction.doctypes.acta.layout import CANDIDATES, PARTIES
from extraction.doctypes.acta.qr import decode_qr
from extraction.doctypes.registry import get_doctype
from extraction.ocr.blocks import SourceDocument
from extraction.ocr.pdf_text import PdfTextEngine
from extraction.reading.feedback import build_messages
from extraction.reading.loop import Attempt
from extraction.reading.prompt import render_prompt
from extraction.rules.violations import Violation
from sheetgen.generate import LAYOUTS, GeneratedActa, generate_acta, render_page, spell_digits
from sheetgen.layouts import LAYOUTS as SPECS
from sheetgen.layouts import MEASURE_LAYOUTS, SCAN_STYLES, TUNE_LAYOUTS
from sheetgen.scans import scan_image
from tests.support import acta_answers as aa
from tests.support.acta_models import ERRING, ActaModel, is_all_zero, wrong_fields

ACTA = get_doctype("acta")


@cache
def acta(layout: str, seed: int = 31) -> GeneratedActa:
    return generate_acta(seed=seed, layout=layout)


@cache
def prompt_text(layout: str, seed: int = 31) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "acta.pdf"
        path.write_bytes(acta(layout, seed).pdf_bytes)
        return render_prompt(PdfTextEngine().read(SourceDocument(path, "pdf", []))).text


def text_words(pdf_bytes: bytes) -> list[str]:
    with pymupdf.open(stream=pdf_bytes, filetype="pdf") as doc:
        return [w[4] for w in doc[0].get_text("words", sort=True)]


# ---------------------------------------------------------------- the generator


def test_there_are_at_least_twelve_layouts_and_every_one_is_drawn():
    assert len(LAYOUTS) >= 12 and set(LAYOUTS) == set(SPECS)
    for name in LAYOUTS:
        generated = acta(name)
        assert generated.layout == name and generated.printed["layout"] == name
        width, height = SPECS[name].paper_size
        with pymupdf.open(stream=generated.pdf_bytes, filetype="pdf") as doc:
            assert (round(doc[0].rect.width), round(doc[0].rect.height)) == (round(width), round(height))


def test_layouts_look_different_from_each_other():
    thumbs = {}
    for name in LAYOUTS:
        image = render_page(acta(name).pdf_bytes, dpi=30).convert("L").resize((90, 110))
        thumbs[name] = np.asarray(image, dtype=np.float64)
    for a, b in itertools.combinations(LAYOUTS, 2):
        # Same content, other geometry: a large share of the thumbnail changes.
        assert np.mean(np.abs(thumbs[a] - thumbs[b]) > 40) > 0.04, (a, b)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_layout_prints_every_row_in_digits_and_words_and_the_real_code(layout):
    generated = acta(layout)
    words = text_words(generated.pdf_bytes)
    joined = " ".join(words)
    assert re.fullmatch(r"\d{9}\.\d{2}", generated.truth.acta_id)
    assert generated.truth.acta_id in joined
    for row, count in zip(generated.printed["rows"], generated.truth.counts, strict=True):
        assert row["votes"] == count == int(row["votes_text"])
        assert row["votes_words"] == spell_digits(row["votes_text"])
        assert row["votes_text"] in words and row["votes_words"] in joined
    for party in PARTIES:
        assert party in joined
    for key in ("valid_votes", "null_votes", "total_votes"):
        assert generated.printed[f"{key}_text"] in words and generated.printed[f"{key}_words"] in joined


@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_layout_is_the_same_for_a_seed_and_its_qr_decodes_to_the_truth(layout):
    generated = acta(layout)
    assert generate_acta(seed=31, layout=layout).pdf_bytes == generated.pdf_bytes
    assert generate_acta(seed=32, layout=layout).pdf_bytes != generated.pdf_bytes
    assert decode_qr(render_page(generated.pdf_bytes, dpi=150)) == generated.qr_payload


def test_a_seed_has_the_same_truth_in_every_layout():
    assert len({acta(name).truth for name in LAYOUTS}) == 1


# ---------------------------------------------------------------- the split


def test_the_split_is_disjoint_and_covers_every_layout():
    assert set(TUNE_LAYOUTS).isdisjoint(MEASURE_LAYOUTS)
    assert set(TUNE_LAYOUTS) | set(MEASURE_LAYOUTS) == set(LAYOUTS)
    assert abs(len(TUNE_LAYOUTS) - len(MEASURE_LAYOUTS)) <= 2


@pytest.mark.parametrize("side", [TUNE_LAYOUTS, MEASURE_LAYOUTS], ids=["tune", "measure"])
def test_each_side_of_the_split_covers_every_axis(side):
    specs = [SPECS[name] for name in side]
    assert {s.columns for s in specs} == {1, 2, 3}
    assert {s.order for s in specs} == {"digits-words", "words-digits"}
    assert {s.candidate for s in specs} == {"merged", "repeated", "heading"}
    tables = {s.table for s in specs}
    assert {"lines", "boxes"} <= tables and tables & {"grid", "grouped"}
    assert {s.scan for s in specs} == set(SCAN_STYLES)
    assert len({s.paper_size for s in specs}) >= 3 and any(s.landscape for s in specs)
    assert len({s.font for s in specs}) >= 2
    assert len({s.code_label for s in specs}) >= 3 and "" in {s.code_label for s in specs}  # or no label
    assert len({s.code_at for s in specs}) >= 2 and len({s.totals_at for s in specs}) >= 2


# ---------------------------------------------------------------- scans


@pytest.mark.parametrize("style", SCAN_STYLES)
def test_each_scan_style_is_deterministic_differs_by_seed_and_keeps_the_qr_readable(style):
    pdf = acta("lines-one").pdf_bytes
    scan = scan_image(pdf, seed=3, style=style)
    assert scan == scan_image(pdf, seed=3, style=style) != scan_image(pdf, seed=4, style=style)
    assert Image.open(io.BytesIO(scan)).format == "JPEG"
    assert decode_qr(scan) == acta("lines-one").qr_payload


def test_low_resolution_scans_are_smaller_and_photos_show_the_desk_around_the_page():
    pdf = acta("classic").pdf_bytes
    normal = Image.open(io.BytesIO(scan_image(pdf, seed=5, style="scanner")))
    low = Image.open(io.BytesIO(scan_image(pdf, seed=5, style="low-res")))
    photo = Image.open(io.BytesIO(scan_image(pdf, seed=5, style="photo"))).convert("RGB")
    assert low.width < normal.width * 0.85
    corner = np.asarray(photo)[:10, :10].mean(axis=(0, 1))
    assert corner.max() < 140 and photo.width > normal.width  # a dark desk, the page smaller than the frame


def test_an_unknown_scan_style_is_refused():
    with pytest.raises(ValueError, match="unknown scan style"):
        scan_image(acta("classic").pdf_bytes, seed=1, style="fax")


# ---------------------------------------------------------------- the scripted models


@pytest.mark.parametrize("layout", TUNE_LAYOUTS)  # never MEASURE_LAYOUTS: nobody tunes on them
def test_the_right_models_answer_on_a_pdf_is_what_is_printed_with_a_proof_for_every_value(layout):
    printed = acta(layout).printed
    answer = aa.correct_answer(prompt_text(layout), printed)
    assert wrong_fields(answer, printed) == []
    proofs = [answer["acta_id"]["proof"]] + [row[k]["proof"] for row in answer["rows"] for k in ("votes", "votes_words")]
    assert all(proofs)


def _three_rows(lines: list[str]) -> dict:
    """What a sheet prints in its first three rows (PSUV 12, PCV 5, TUPAMARO 0, padded to 4), and a prompt of
    `lines` that shows them."""
    printed = acta("classic").printed
    rows = [{"party": p, "votes": v, "votes_text": f"{v:04d}", "votes_words": aa.spell_digits(f"{v:04d}")}
            for p, v in (("PSUV", 12), ("PCV", 5), ("TUPAMARO", 0))]
    return {**printed, "rows": rows + printed["rows"][3:]}, "\n".join(f"L{i} {t}" for i, t in enumerate(lines, 1))


def test_the_right_model_reads_a_count_printed_one_digit_per_box_as_one_number_and_cites_it_whole():
    printed, prompt = _three_rows(["PSUV 0 0 1 2 CERO CERO UNO DOS", "PCV 0 0 0 5 CERO CERO CERO CINCO",
                                   "TUPAMARO 0 0 0 0 CERO CERO CERO CERO"])
    answer = aa.correct_answer(prompt, printed, strict=False)
    assert answer["rows"][0]["votes"] == {"value": 12, "proof": [{"type": "WORD", "line": 1, "value": "0 0 1 2"}]}
    assert answer["rows"][1]["votes_words"]["proof"] == [{"type": "LINE", "id": 2}]


def test_the_right_model_finds_the_values_of_a_row_whose_name_the_text_lost_between_its_neighbours():
    # a signature across PCV's name: the OCR gave its values and no name
    printed, prompt = _three_rows(["PSUV 0012 CERO CERO UNO DOS", "0005 CERO CERO CERO CINCO",
                                   "TUPAMARO 0000 CERO CERO CERO CERO"])
    answer = aa.correct_answer(prompt, printed, strict=False)
    assert answer["rows"][1]["votes"]["proof"] == [{"type": "WORD", "line": 2, "value": "0005"}]
    assert answer["rows"][1]["votes_words"]["proof"] == [{"type": "LINE", "id": 2}]


def body_for(layout: str, answer=None, violations: tuple[Violation, ...] = ()) -> dict:
    attempt = Attempt(round=2 if answer else 1, previous_answer=answer, previous_violations=violations)
    return {"messages": build_messages(doctype=ACTA, prompt_text=prompt_text(layout), images=[], attempt=attempt)}


def answer_of(reply) -> dict:
    return json.loads(reply.body["choices"][0]["message"]["content"])


def merged(previous: dict, reply: dict) -> dict:
    """The answer a round's reply amounts to: a patch merged into the previous answer, or the reply itself."""
    if "changes" not in reply:
        return reply
    from extraction.reading.patches import apply_patch, parse_patch

    fields = [c["field"] for c in reply["changes"]]
    return apply_patch(previous, parse_patch(reply, involved=fields, answer=previous))


def run(kind: str, layout: str = "classic", seed: int = 31, feedback: tuple[Violation, ...] = ()):
    model = ActaModel(kind, acta(layout).printed, seed=seed)
    first = answer_of(model.step(body_for(layout)))
    second = merged(first, answer_of(model.step(body_for(layout, first, feedback or (Violation("x", "m"),)))))
    return model, first, second


def counts(answer: dict) -> list[int]:
    return [row["votes"]["value"] for row in answer["rows"]]


def test_the_misread_digit_model_misreads_one_row_then_corrects_it_only_when_told():
    model, first, second = run("misread_digit")
    printed = acta("classic").printed
    wrong = wrong_fields(first, printed)
    assert len(wrong) == 1 and wrong[0].startswith("rows[") and wrong[0].endswith(".votes")
    assert second == first  # not told about that field: the same reading
    told = (Violation("row_digits_words_mismatch", "m", fields=(wrong[0], wrong[0] + "_words")),)
    _, _, fixed = run("misread_digit", feedback=told)
    assert wrong_fields(fixed, printed) == []


def test_the_forced_sum_model_drops_a_digit_then_adds_the_missing_votes_to_another_row():
    told = (Violation("sum_valid_votes", "m", fields=(*(f"rows[{i}].votes" for i in range(38)), "valid_votes")),)
    model, first, second = run("forced_sum", feedback=told)
    printed = acta("classic").printed
    assert sum(counts(first)) < printed["valid_votes"]
    assert sum(counts(second)) == printed["valid_votes"]  # the sum closes ...
    assert len([f for f in wrong_fields(second, printed) if f.endswith(".votes")]) == 2  # ... on two wrong rows


def test_the_all_zero_model_answers_zeros_after_a_failed_round():
    _, first, second = run("all_zero")
    assert len(wrong_fields(first, acta("classic").printed)) == 1
    assert is_all_zero(second) and set(counts(second)) == {0}
    assert all(row["votes_words"]["value"].split() == ["CERO"] * len(row["votes_words"]["value"].split())
               for row in second["rows"])


def test_the_moved_vote_model_moves_votes_within_one_candidate_and_keeps_every_total():
    _, first, second = run("moved_vote")
    printed = acta("classic").printed
    wrong = [int(f[5:f.index("]")]) for f in wrong_fields(first, printed) if f.endswith(".votes")]
    assert len(wrong) == 2 and second == first
    candidate_of = [c for c, parties in CANDIDATES for _ in parties]
    assert candidate_of[wrong[0]] == candidate_of[wrong[1]]
    assert sum(counts(first)) == printed["valid_votes"] and first["total_votes"]["value"] == printed["total_votes"]


def test_the_misread_total_model_misreads_a_total_only():
    _, first, _ = run("misread_total")
    wrong = wrong_fields(first, acta("classic").printed)
    assert len(wrong) == 1 and wrong[0] in ("valid_votes", "null_votes", "total_votes")


@pytest.mark.parametrize("kind", ERRING)
def test_injection_sites_are_drawn_from_the_seed_among_many_places(kind):
    sites = set()
    for seed in range(12):
        model = ActaModel(kind, acta("classic").printed, seed=seed)
        model.step(body_for("classic"))
        assert model.injected
        sites.add(model.site)
    assert len(sites) >= (3 if kind == "misread_total" else 4), sites  # three totals offer few places


# ---------------------------------------------------------------- the bench, end to end


def test_the_bench_reads_one_pdf_through_the_scripted_server_and_the_right_model_passes(tmp_path, monkeypatch):
    import bench.unseen_layouts as bench
    from tests.support.acta_models import model_step
    from tests.support.llm_server import ScriptedLLMServer

    monkeypatch.setattr(bench, "CACHE", tmp_path)
    doc = bench.Doc("classic", 5000, "pdf")
    pages, seconds = bench._ocr(doc)
    assert seconds > 0 and list(tmp_path.glob("classic-5000-pdf-*.pkl"))
    assert bench._ocr(doc)[1] == 0.0  # the second read comes from the cache
    _, _, printed = bench.document_bytes(doc)
    current: list = [None]
    by_model: dict = defaultdict(Counter)
    rounds: list = []
    with ScriptedLLMServer() as server:
        server.always(bench.metered(model_step(lambda: current[0]), rounds))
        tally = bench.run_doc(doc, pages, printed, server, current, ["right"], by_model, [], rounds)
        assert len(server.requests) == 1  # one round: it passed
    assert (tally.docs, tally.clean_pass, tally.wrong_pass, tally.zero_kept) == (1, 1, 0, 0)
    assert tally.stops == {"passed": 1} and tally.failed == []
    [[(prompt, completion)]] = tally.rounds  # one reading of one round, its tokens counted
    assert prompt > 1000 and completion > 1000
