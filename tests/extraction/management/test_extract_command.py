"""`manage.py extract`: the pipeline run synchronously on files, with proofs that point at the right rows."""

from __future__ import annotations

import io
import json
import re

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from extraction.models import Batch, Block
from sheetgen.generate import generate_acta, render_page
from tests.support.acta_answers import correct_answer, data_section, misread
from tests.support.llm_server import reply_json

pytestmark = pytest.mark.django_db

BOX = re.compile(
    r"proof: block (\d+) (\w+) page (\d+) left ([\d.]+) top ([\d.]+) width ([\d.]+) height ([\d.]+)"
)


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("extract", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def party_lines(batch: Batch, party: str) -> list[Block]:
    want = party.split()
    return [b for b in Block.objects.filter(document__batch=batch, type="LINE") if b.text.split()[: len(want)] == want]


def assert_box_on_row(batch: Batch, party: str, block_id: int, box: dict) -> None:
    """The printed box is the cited block's box, and it lies on the printed row of `party`: at the height of
    the party's name and to its right, in the same column of the sheet."""
    block = Block.objects.get(pk=block_id, document__batch=batch)
    assert (block.left, block.top, block.width, block.height) == pytest.approx(
        (box["left"], box["top"], box["width"], box["height"]), abs=1e-4)
    centre = box["top"] + box["height"] / 2
    rows = party_lines(batch, party)
    assert rows and any(
        b.top <= centre <= b.top + b.height and 0 <= box["left"] - b.left < 0.45 for b in rows
    ), (party, box, [(b.left, b.top, b.height) for b in rows])


@pytest.fixture
def scripted(llm_server, monkeypatch):
    monkeypatch.setenv("LLM_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("LLM_MODEL", "scripted")
    monkeypatch.setenv("LLM_MAX_RETRIES", "0")
    monkeypatch.setenv("LLM_INPUT", "text")
    return llm_server


def test_extract_reads_a_scan_with_the_template_reader_and_prints_proofs_on_the_cited_rows(tmp_path):
    acta = generate_acta(seed=21, layout="classic")
    scan = tmp_path / "acta-21.png"
    render_page(acta.pdf_bytes, dpi=150).save(scan)

    report = json.loads(run(str(scan), "--type", "acta", "--engine", "rapidocr", "--json"))

    batch = Batch.objects.get(pk=report["batch"]["id"])
    assert batch.name.startswith("extract ") and batch.ocr_engine == "rapidocr"
    (doc,) = report["documents"]
    assert (doc["status"], doc["reader"], doc["stop_reason"], doc["best_round"]) == ("passed", "template", "passed", 1)
    assert doc["violations"] == [] and doc["truth_differs"] == []
    fields = {f["path"]: f for f in doc["fields"]}
    for i, row in enumerate(acta.printed["rows"]):
        field = fields[f"rows[{i}].votes"]
        assert field["value"] == row["votes"] and field["proofs"]
        for proof in field["proofs"]:
            assert proof["page"] == 1
            assert_box_on_row(batch, row["party"], int(proof["block_id"]), proof["bbox"])


def test_extract_with_a_model_prints_rounds_proofs_violations_usage_and_what_differs_from_the_qr(scripted, tmp_path):
    acta = generate_acta(seed=22, layout="two-column")
    path = tmp_path / "acta-22.pdf"
    path.write_bytes(acta.pdf_bytes)
    row = next(i for i, r in enumerate(acta.printed["rows"]) if "1" in str(r["votes"]))
    party, votes = acta.printed["rows"][row]["party"], acta.printed["rows"][row]["votes"]

    def wrong(body):
        return reply_json(misread(correct_answer(data_section(body), acta.printed), row, "1", "7"), usage=(900, 100))

    scripted.script(wrong)

    text = run(str(path), "--type", "acta", "--engine", "pdf-text", "--max-rounds", "1")

    batch = Batch.objects.latest("id")
    assert "acta-22.pdf: FLAGGED" in text
    assert "reader: llm   stop reason: exhausted   best round: 1   rounds: 1" in text
    assert "[row_digits_words_mismatch]" in text and "[value_grounded]" in text
    assert "usage: 900 prompt + 100 completion tokens" in text
    printed = acta.printed["rows"][row]["votes_text"]
    read = int(printed[: printed.rfind("1")] + "7" + printed[printed.rfind("1") + 1:])
    assert f"truth: 1 field(s) differ from the QR\n    rows[{row}].votes ({party}): read {read}, truth {votes}" in text
    # every printed votes proof: the cited block's own box, on that party's row
    checked = 0
    for i, r in enumerate(acta.printed["rows"]):
        block = text.split(f"\n    rows[{i}].votes = ", 1)[1].split("\n    rows[", 1)[0]
        boxes = BOX.findall(block)
        assert boxes, f"rows[{i}].votes has no printed proof"
        for block_id, _type, page, left, top, width, height in boxes:
            box = {"left": float(left), "top": float(top), "width": float(width), "height": float(height)}
            assert page == "1"
            assert_box_on_row(batch, r["party"], int(block_id), box)
            checked += 1
    assert checked >= 38
    # each field says how far it can be trusted; the misread count least of all
    sure = {m[0]: float(m[1]) for m in re.findall(r"\n    (\S+) = .*?\(confidence ([0-9.]+)\)", text)}
    assert len(sure) >= 80 and min(sure, key=sure.get) in (f"rows[{row}].votes", f"rows[{row}].votes_words")


def test_extract_refuses_a_missing_file(tmp_path):
    with pytest.raises(CommandError, match="does not exist"):
        run(str(tmp_path / "nowhere.pdf"), "--type", "acta")


def test_extract_with_the_template_reader_cites_rows_that_pdf_text_puts_in_a_table(tmp_path):
    acta = generate_acta(seed=23, layout="classic")
    path = tmp_path / "acta-23.pdf"
    path.write_bytes(acta.pdf_bytes)

    report = json.loads(run(str(path), "--type", "acta", "--engine", "pdf-text", "--json"))

    batch = Batch.objects.get(pk=report["batch"]["id"])
    (doc,) = report["documents"]
    fields = {f["path"]: f for f in doc["fields"]}
    for i, row in enumerate(acta.printed["rows"]):
        proofs = fields[f"rows[{i}].votes"]["proofs"]
        assert proofs, f"rows[{i}].votes ({row['party']}) has no proof"
        for proof in proofs:
            assert_box_on_row(batch, row["party"], int(proof["block_id"]), proof["bbox"])
    assert doc["status"] == "passed"
    assert all(0.9 < f["confidence"] <= 1 and f["confidence_version"] == 0 for f in doc["fields"])
