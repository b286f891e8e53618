"""The rubric judge end to end: an invoice read through the production pipeline, its answer and the judge's
verdict both from the scripted OpenAI-compatible server; people's decisions then measure the judge."""

from __future__ import annotations

import json
from typing import Any

import pytest

from extraction.models import Document, Extraction, Violation
from extraction.pipeline.extract import ocr_pages_of
from extraction.pipeline.ingest import IncomingFile, batch_create_from_files
from extraction.pipeline.process import document_process, document_read
from extraction.reading.prompt import render_prompt
from reviewer.confidence.calibration import judge_agreement
from tests.support.invoice_answers import correct_invoice_answer
from tests.support.invoice_truth import INVOICES, load_truth
from tests.support.llm_server import reply_json

pytestmark = [pytest.mark.django_db,
              pytest.mark.skipif(not INVOICES.is_dir(), reason=f"{INVOICES} is not here (CI has ../shared)")]

NAME = "AmazonWebServices"


def _is_judge(body: dict[str, Any]) -> bool:
    return body["messages"][0]["content"].startswith("You check answers")


def _invoice(llm_env, *, verdict: bool, asked: list) -> Document:
    batch = batch_create_from_files(name=f"judge-{verdict}", doctype="invoice", ocr_engine="pdf-text",
                                    files=[IncomingFile(f"{NAME}.pdf", INVOICES / f"{NAME}.pdf")])
    doc = batch.documents.get()
    document_read(document=doc)
    pages = ocr_pages_of(document=doc)
    answer = correct_invoice_answer(NAME, load_truth(NAME), render_prompt(pages), [b for p in pages for b in p.blocks])

    def step(body: dict[str, Any]):
        if _is_judge(body):
            asked.append(body["messages"][1]["content"])
            return reply_json({"passed": verdict, "reason": "the issuer is the seller" if verdict
                               else "the issuer looks like the customer"})
        return reply_json(answer)

    llm_env.always(step)
    document_process(document_id=doc.id)
    doc.refresh_from_db()
    return doc


def test_the_judge_is_asked_through_the_server_and_its_no_flags_the_document(llm_env):
    asked: list = []
    doc = _invoice(llm_env, verdict=False, asked=asked)
    assert asked and "Question: Is the 'issuer'" in asked[0]
    answer_sent = json.loads(asked[0].split("Answer (JSON):\n", 1)[1])
    assert answer_sent["issuer"]["value"]
    extraction = Extraction.objects.get(document=doc)
    codes = set(Violation.objects.filter(extraction=extraction).values_list("code", flat=True))
    assert doc.status == "flagged" and codes == {"rubric:issuer_is_seller"}


def test_the_judges_verdicts_are_measured_against_the_reviewers(llm_env):
    rejected = _invoice(llm_env, verdict=False, asked=[])
    accepted = _invoice(llm_env, verdict=True, asked=[])
    assert accepted.status == "passed"
    # both were right: reviewers verified both, so the judge's no was a false reject
    Document.objects.filter(pk__in=[rejected.pk, accepted.pk]).update(review_status="verified")
    found = judge_agreement(doctype="invoice")
    assert (found["documents"], found["agree"], found["false_accepts"], found["false_rejects"]) == (2, 1, 0, 1)
