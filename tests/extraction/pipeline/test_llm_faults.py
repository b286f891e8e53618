"""Faults of the model's endpoint through the production pipeline: each ends in a clear, retryable state."""

from __future__ import annotations

import pytest
from django.urls import reverse

from extraction.models import Round
from tests.support.acta_pipeline import acta_pdf, model, process
from tests.support.llm_server import (
    openai_error_body,
    reply_drop,
    reply_refusal,
    reply_status,
    reply_text,
)

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("steps", "says"),
    [
        ([reply_status(500, openai_error_body("upstream exploded"))] * 2, "500"),
        ([reply_status(503, openai_error_body("overloaded"))] * 2, "503"),
        ([reply_drop(), reply_drop()], "could not reach"),
        ([reply_status(429, openai_error_body("slow down"), headers={"Retry-After": "0"})] * 2, "429"),
        ([reply_refusal("I cannot read election material.")], "refus"),
    ],
    ids=["500", "503", "connection-reset", "429", "refusal"],
)
def test_an_endpoint_fault_fails_the_document_clearly_and_a_retry_succeeds(
    llm_env, tmp_path, client_as, steps, says
):
    acta, path = acta_pdf(tmp_path, seed=61)
    llm_env.script(*steps)
    doc = process(path)
    assert doc.status == "failed" and doc.error_code == "llm"
    assert says.lower() in doc.error_message.lower(), doc.error_message
    assert Round.objects.filter(extraction__document=doc, state="failed").count() == 1  # the attempt is on record

    llm_env.script(model(acta.printed))
    response = client_as("admin").post(reverse("document_retry", args=[doc.id]))
    assert response.status_code == 302
    from extraction.pipeline.process import document_process

    document_process(document_id=doc.id)
    doc.refresh_from_db()
    assert doc.status == "passed", doc.error_message
    assert doc.extractions.count() == 2  # the failed run is kept beside the new one


def test_an_answer_that_is_never_valid_json_fails_the_document_after_every_round(llm_env, tmp_path, settings):
    settings.MAX_ROUNDS = 2
    _, path = acta_pdf(tmp_path, seed=62)
    llm_env.script(reply_text('{"acta_id": {"value": "2013'), reply_text("not json at all"))
    doc = process(path)
    assert doc.status == "failed" and doc.error_code == "llm_answer"
    assert "2 rounds" in doc.error_message and "not valid JSON" in doc.error_message
    rounds = Round.objects.filter(extraction__document=doc).order_by("number")
    assert [r.violations[0]["code"] for r in rounds] == ["parse_error", "parse_error"]
    assert rounds[0].raw_answer.startswith('{"acta_id"')
