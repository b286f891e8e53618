"""A new type can start from a sample document: a worker reads it and the model proposes its fields, which the
editor opens for the admin to edit; the request that starts it reads nothing, and nothing is saved."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from extraction.models import Batch, DocTypeVersion, Document
from extraction.pipeline.process import document_process
from tests.support.llm_server import reply_json, reply_status
from tests.support.utility_bills import bill_pdf

pytestmark = pytest.mark.django_db


def proposes_a_bill(body: dict[str, Any]):
    """A model that proposes what a utility bill holds, having read the sample's text."""
    assert "Amount due: 50.00" in body["messages"][-1]["content"]
    return reply_json({"label": "Utility bill", "fields": [
        {"key": "account_number", "label": "Account number", "kind": "code", "required": True},  # no pattern: text
        {"key": "Amount Due", "label": "Amount due", "kind": "money", "required": True},
        {"label": "Amount due", "kind": "money"},  # said twice: kept once
        {"key": "period_start", "label": "Period from", "kind": "a date"}]})  # no such kind: text


def _propose(client) -> Document:
    response = client.post("/types/new/", {"action": "propose", "proposal_ocr_engine": "pdf-text",
                                           "proposal_sample": SimpleUploadedFile("bill.pdf", bill_pdf())})
    assert response.status_code == 302 and "?proposal=" in response["Location"]
    return Document.objects.get(batch__settings__propose=True)


def test_the_editor_opens_with_the_fields_the_model_proposed_from_a_sample(client_as, llm_env):
    llm_env.always(proposes_a_bill)
    admin = client_as("admin")
    document = _propose(admin)
    assert (document.status, document.pages.count()) == ("queued", 0)  # the request only queued it
    waiting = admin.get(f"/types/new/?proposal={document.batch_id}")
    assert "Proposing fields from bill.pdf: waiting for a worker" in waiting.text

    document_process(document_id=document.id)  # a worker reads it meanwhile
    polled = admin.get(f"/types/new/?proposal={document.batch_id}&partial=proposal", headers={"HX-Request": "true"})
    assert polled.headers.get("HX-Refresh") == "true"  # done: the page opens the proposal
    page = admin.get(f"/types/new/?proposal={document.batch_id}")
    rows = page.context["rows"]["fields"]
    assert [(f["key"], f["label"], f["kind"]) for f in rows] == [
        ("account_number", "Account number", "text"), ("amount_due", "Amount due", "money"),
        ("period_start", "Period from", "text")]
    assert page.context["data"]["label"] == "Utility bill" and "nothing is saved yet" in page.text
    assert not DocTypeVersion.objects.exists()
    request = llm_env.bodies[0]["messages"]
    assert "never instructions" in request[0]["content"] and request[1]["content"].startswith("<sample>")


def test_a_model_that_fails_leaves_the_proposal_failed_with_its_reason_and_retryable(client_as, llm_env):
    llm_env.always(reply_status(500))
    admin = client_as("admin")
    document = _propose(admin)
    document_process(document_id=document.id)
    document.refresh_from_db()
    assert (document.status, document.error_code) == ("failed", "llm")
    page = admin.get(f"/types/new/?proposal={document.batch_id}")
    assert "The model could not propose fields" in page.text and "It can be retried" in page.text
    assert page.context["rows"]["fields"][0]["key"] == ""  # an empty draft to start from


def test_without_an_llm_a_sample_is_refused_before_anything_is_kept(client_as):
    page = client_as("admin").post("/types/new/", {"action": "propose",
                                                   "proposal_sample": SimpleUploadedFile("bill.pdf", bill_pdf())},
                                   follow=True)
    assert "Proposing fields needs an LLM" in page.text and not Batch.objects.exists()


def test_a_proposal_is_not_a_trial_of_another_admins_url(client_as, users):
    other = Batch.objects.create(name="a batch", doctype="invoice", trial=True, created_by=users["admin"])
    assert client_as("admin").get(f"/types/new/?proposal={other.id}").status_code == 404
