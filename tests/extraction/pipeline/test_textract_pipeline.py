"""Textract through the production pipeline: a stubbed AWS client, and an attached precomputed response."""

from __future__ import annotations

import json

import boto3
import pytest
from botocore.stub import ANY, Stubber
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils.html import escape

from extraction.models import Batch, Block
from extraction.ocr.textract import TextractEngine
from extraction.pipeline import process as pipeline
from extraction.pipeline.process import document_process
from tests.support.paths import shared_data


def _upload(client, path, *, engine: str) -> Batch:
    response = client.post(
        reverse("batch_upload"),
        {"name": f"tx-{path.stem}", "doctype": "acta", "ocr_engine": engine,
         "files": [SimpleUploadedFile(path.name, path.read_bytes())]},
    )
    assert response.status_code == 302
    return Batch.objects.get(name=f"tx-{path.stem}")


def _line_counts(response: dict) -> int:
    return sum(1 for b in response["Blocks"] if b["BlockType"] == "LINE")


def test_a_batch_read_by_textract_stores_the_recorded_blocks(client_as, monkeypatch):
    image = shared_data("textract", "paystub.jpg")
    recorded = json.loads(shared_data("textract", "paystub.textract.json").read_text())
    client = boto3.client("textract", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    stubber = Stubber(client)
    stubber.add_response("analyze_document", recorded, {"Document": {"Bytes": ANY}, "FeatureTypes": ["TABLES"]})
    stubber.activate()
    monkeypatch.setattr(pipeline, "engine_for", lambda name: TextractEngine(client, region="us-east-1", bucket=None))

    batch = _upload(client_as("admin"), image, engine="textract")
    doc = batch.documents.get()
    document_process(document_id=doc.id)
    stubber.assert_no_pending_responses()
    assert doc.pages.get().engine == "textract"
    lines = Block.objects.filter(document=doc, type="LINE")
    assert lines.count() == _line_counts(recorded)
    assert Block.objects.filter(document=doc, type="TABLE").count() == 7
    net = lines.get(text__contains="291.90") if lines.filter(text__contains="291.90").count() == 1 else lines.filter(
        text__contains="291.90").first()
    assert 0 <= net.left <= 1 and 0 < net.width < 1
    assert Block.objects.filter(document=doc, type="WORD", parent__type="LINE").count() > 0


def test_an_admin_can_attach_a_textract_json_instead_of_running_ocr(client_as):
    image = shared_data("textract", "financial-document.png")
    data = shared_data("textract", "financial-document.textract.json").read_bytes()
    client = client_as("admin")
    batch = _upload(client, image, engine="rapidocr")
    doc = batch.documents.get()
    response = client.post(
        reverse("document_textract", args=[doc.id]),
        {"textract_json": SimpleUploadedFile("financial.json", data, content_type="application/json")},
    )
    assert response.status_code == 302
    doc.refresh_from_db()
    assert doc.textract_import and doc.status == "queued"
    document_process(document_id=doc.id)  # no OCR engine runs: the blocks come from the JSON
    assert doc.pages.get().engine == "textract"
    assert Block.objects.filter(document=doc, type="LINE").count() == _line_counts(json.loads(data))


def _page_block(box: dict) -> bytes:
    return json.dumps({"Blocks": [{"Id": "p1", "BlockType": "PAGE", "Geometry": {"BoundingBox": box}}]}).encode()


@pytest.mark.parametrize("payload", [
    b"not json", b'{"hello": "world"}', b"[]",
    b"[" * 100_000 + b"]" * 100_000,  # deeper than any parser's stack
    _page_block({"Left": "a lot", "Top": 0, "Width": 1, "Height": 1}),
    _page_block({"Left": [0.1], "Top": 0, "Width": 1, "Height": 1}),
    b'{"Blocks": [{"Id": "p1", "BlockType": "PAGE", "Geometry": {"BoundingBox": {"Left": NaN}}}]}',
], ids=["text", "other-json", "empty-list", "deeply-nested", "box-not-a-number", "box-a-list", "box-nan"])
def test_something_attached_that_is_not_textract_json_is_kept_unread_and_fails_its_document_in_the_worker(
        client_as, tmp_path, monkeypatch, payload):
    from extraction.ocr import textract_json
    from tests.support import badfiles

    client = client_as("admin")
    batch = _upload(client, badfiles.make_png(tmp_path), engine="rapidocr")
    doc = batch.documents.get()
    parsed = []
    monkeypatch.setattr(textract_json, "load_textract_json", parsed.append)  # a spy: the web must not parse
    response = client.post(
        reverse("document_textract", args=[doc.id]), {"textract_json": SimpleUploadedFile("x.json", payload)}, follow=True
    )
    assert response.status_code == 200 and b"will be read from the attached Textract response" in response.content
    assert parsed == []  # a 40 MB response is the worker's to parse, never the web request's
    monkeypatch.undo()
    doc.refresh_from_db()
    assert doc.status == "queued" and doc.textract_import.read() == payload  # kept as it came

    assert document_process(document_id=doc.id) == "failed"  # the worker parses it: a clear error on that document
    doc.refresh_from_db()
    assert doc.error_code == "ocr" and doc.error_message.startswith("The attached "), doc.error_message
    assert "Textract" in doc.error_message or "not JSON" in doc.error_message, doc.error_message
    page = client.get(reverse("batch_detail", args=[batch.id])).content.decode()
    assert escape(doc.error_message) in page


def test_only_admins_may_attach_textract_json_or_retry(client_as, tmp_path):
    from tests.support import badfiles

    batch = _upload(client_as("admin"), badfiles.make_png(tmp_path), engine="rapidocr")
    doc = batch.documents.get()
    for role in ("reviewer", "supervisor", "outsider"):
        c = client_as(role)
        assert c.post(reverse("document_textract", args=[doc.id])).status_code == 403
        assert c.post(reverse("document_retry", args=[doc.id])).status_code == 403


def test_an_ocr_fault_fails_the_document_clearly_and_an_admin_can_retry_it(client_as, tmp_path, monkeypatch):
    from extraction.ocr.blocks import OcrError
    from tests.support import badfiles

    class Broken:
        name = "broken"

        def read(self, document):
            raise OcrError("the OCR service is unavailable (connection refused)")

    client = client_as("admin")
    batch = _upload(client, badfiles.make_png(tmp_path), engine="rapidocr")
    doc = batch.documents.get()
    monkeypatch.setattr(pipeline, "engine_for", lambda name: Broken())
    assert document_process(document_id=doc.id) == "failed"
    doc.refresh_from_db()
    assert (doc.status, doc.error_code) == ("failed", "ocr") and "connection refused" in doc.error_message
    page = client.get(reverse("batch_detail", args=[batch.id]))
    assert b"connection refused" in page.content and b"Re-run" in page.content

    assert client.post(reverse("document_retry", args=[doc.id])).status_code == 302
    doc.refresh_from_db()
    assert doc.status == "queued" and doc.error_message == ""
    monkeypatch.undo()
    assert document_process(document_id=doc.id) in ("passed", "flagged")
