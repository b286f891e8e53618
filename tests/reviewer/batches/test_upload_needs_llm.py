"""The upload form says, before anything is kept, that a type read only by an LLM cannot be read without one."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from extraction.models import Batch, Document, Upload
from tests.support.paths import ROOT

SAMPLE = next(p for p in sorted((ROOT / "samples" / "actas").glob("*.pdf")))


def _post(client, doctype: str):
    return client.post(reverse("batch_upload"), {
        "name": f"{doctype} batch", "doctype": doctype, "ocr_engine": "pdf-text",
        "files": [SimpleUploadedFile(SAMPLE.name, SAMPLE.read_bytes())]})


@pytest.fixture
def no_llm(monkeypatch):
    for name in ("LLM_BASE_URL", "LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)


def test_without_an_llm_the_upload_page_names_the_types_that_cannot_be_read(client_as, no_llm):
    page = client_as("admin").get(reverse("batch_upload")).content.decode()
    notice = page.split("data-needs-llm>", 1)[1].split("</p>", 1)[0]
    assert "Invoice" in notice and "Receipt" in notice
    assert "Acta" not in notice  # the acta has its own offline reader


def test_an_upload_under_a_type_only_an_llm_reads_is_refused_and_nothing_is_kept(client_as, no_llm, settings):
    response = _post(client_as("admin"), "invoice")
    assert response.status_code == 200
    page = response.content.decode()
    assert "No LLM is configured, and Invoice is read only by one" in page
    assert "nothing was uploaded" in page
    assert not Batch.objects.exists() and not Document.objects.exists() and not Upload.objects.exists()


def test_without_an_llm_a_type_with_an_offline_reader_is_still_uploaded(client_as, no_llm, monkeypatch):
    monkeypatch.setattr("extraction.pipeline.dispatch.documents_queue", lambda ids, **kw: None)
    assert _post(client_as("admin"), "acta").status_code == 302
    assert Batch.objects.get().documents.count() == 1


def test_with_an_llm_configured_the_page_warns_of_nothing_and_the_type_is_uploaded(client_as, monkeypatch):
    monkeypatch.setenv("LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("LLM_MODEL", "any")
    monkeypatch.setattr("extraction.pipeline.dispatch.documents_queue", lambda ids, **kw: None)
    client = client_as("admin")
    assert "data-needs-llm" not in client.get(reverse("batch_upload")).content.decode()
    assert _post(client, "invoice").status_code == 302
    assert Batch.objects.get().doctype == "invoice"

