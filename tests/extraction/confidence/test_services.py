"""Field confidence in the pipeline: every field of a finished extraction is scored; refits are measured
against the model in use and stored as a new version only when asked."""

from __future__ import annotations

import io
import shutil
from collections import Counter

import pytest
from django.core.management import CommandError, call_command

from extraction.confidence.model import MIN_LABELS
from extraction.confidence.selectors import confidence_model_current
from extraction.confidence.services import fieldconfidence_save
from extraction.models import ConfidenceModel, Document, Extraction, FieldValue, Page
from extraction.pipeline.extract import ocr_pages_of
from extraction.reading.prompt import render_prompt
from extraction.rules.violations import RuleContext
from extraction.states import ReviewStatus
from reviewer.confidence.selectors import confidence_labels
from reviewer.confidence.services import NotEnoughLabels, confidence_model_save, confidence_refit
from tests.support.acta_answers import misread
from tests.support.acta_pipeline import acta_pdf, model, process, row_with, when_told

pytestmark = pytest.mark.django_db


def test_a_finished_extraction_scores_every_field_with_the_prior_and_a_misread_field_lowest(llm_env, tmp_path):
    acta, path = acta_pdf(tmp_path, seed=3)
    row = row_with(acta.printed, "5")
    # the model never corrects its misread: the document is flagged, the misread count is the least trusted
    llm_env.always(model(acta.printed, lambda a: misread(a, row, "5", "6")))
    doc = process(path)
    fields = {fv.path: fv for fv in FieldValue.objects.filter(extraction__document=doc)}
    assert fields and all(fv.field_confidence is not None and 0 <= fv.field_confidence <= 1 for fv in fields.values())
    assert {fv.confidence_version for fv in fields.values()} == {0}
    lowest = min(fields.values(), key=lambda fv: fv.field_confidence)
    assert lowest.path in (f"rows[{row}].votes", f"rows[{row}].votes_words")
    assert fields[f"rows[{row}].votes"].signals["twin_disagrees"] == 1
    assert fields["acta_id"].field_confidence > 0.9


def test_a_right_reading_that_was_corrected_in_round_two_keeps_the_change_as_a_signal(llm_env, tmp_path):
    acta, path = acta_pdf(tmp_path, seed=3)
    row = row_with(acta.printed, "5")
    wrong = model(acta.printed, lambda a: misread(a, row, "5", "6"))
    llm_env.script(wrong, when_told(f"rows[{row}].votes", model(acta.printed), wrong))
    doc = process(path)
    assert doc.status == "passed"
    fv = FieldValue.objects.get(extraction__document=doc, path=f"rows[{row}].votes")
    assert fv.signals["rounds_changed"] == 1 and fv.signals["twin_disagrees"] == 0


def _judged_document(llm_env, tmp_path, seed: int) -> Document:
    acta, path = acta_pdf(tmp_path, seed=seed)
    llm_env.always(model(acta.printed))
    doc = process(path)
    Document.objects.filter(pk=doc.pk).update(review_status=ReviewStatus.VERIFIED.value)
    return doc


def test_a_refit_before_there_are_enough_labels_is_refused_and_the_prior_stays(llm_env, tmp_path):
    _judged_document(llm_env, tmp_path, seed=4)
    assert 0 < len(confidence_labels(doctype="acta")) < MIN_LABELS
    with pytest.raises(NotEnoughLabels):
        confidence_refit(doctype="acta")
    with pytest.raises(CommandError, match="prior stays"):
        call_command("refit_confidence", "--type", "acta")
    assert confidence_model_current(doctype="acta")[0] == 0


def _many_labels(doc: Document, copies: int) -> None:
    """Copies of a judged extraction on new documents, a few fields of each corrected by a reviewer."""
    extraction = Extraction.objects.get(document=doc)
    fields = list(FieldValue.objects.filter(extraction=extraction))
    for k in range(copies):
        other = Document.objects.create(batch=doc.batch, filename=f"copy-{k}.pdf", sha256=f"{k:064d}",
                                        status=doc.status, review_status=ReviewStatus.CORRECTED.value)
        copy = Extraction.objects.create(document=other, doctype="acta", answer=extraction.answer)
        FieldValue.objects.bulk_create([
            FieldValue(extraction=copy, path=fv.path, position=fv.position, model_value=fv.model_value,
                       value=fv.value if i % 7 else "changed", corrected=not i % 7,
                       signals={**fv.signals, "ocr_doubt": 0.5 if not i % 7 else 0.0}, field_confidence=0.9)
            for i, fv in enumerate(fields)])


def test_a_refit_is_measured_against_the_model_in_use_and_stored_only_with_save(llm_env, tmp_path):
    doc = _judged_document(llm_env, tmp_path, seed=4)
    _many_labels(doc, copies=12)
    out = io.StringIO()
    call_command("refit_confidence", "--type", "acta", stdout=out)
    text = out.getvalue()
    assert "in use  v0" in text and "refit   v1" in text and "Not saved" in text
    assert not ConfidenceModel.objects.exists()

    out = io.StringIO()
    call_command("refit_confidence", "--type", "acta", "--save", "--note", "first labels", stdout=out)
    row = ConfidenceModel.objects.get()
    assert (row.version, row.note) == (1, "first labels") and row.metrics["new"]["fields"] > 0
    version, fitted = confidence_model_current(doctype="acta")
    assert version == 1 and fitted.source == "fitted"
    assert fitted.weights["ocr_doubt"] < -3.0  # the data's only wrong fields had doubtful OCR


def test_a_refit_measured_against_a_version_that_was_replaced_meanwhile_is_refused(llm_env, tmp_path):
    doc = _judged_document(llm_env, tmp_path, seed=4)
    _many_labels(doc, copies=12)
    first, second = confidence_refit(doctype="acta"), confidence_refit(doctype="acta")
    confidence_model_save(refit=first)
    with pytest.raises(ValueError, match="refit again"):
        confidence_model_save(refit=second)
    assert ConfidenceModel.objects.count() == 1


def test_a_pass_whose_least_confident_field_is_under_the_chosen_threshold_goes_to_the_reviewers(llm_env, tmp_path):
    from extraction.confidence.services import suspicious_threshold_set
    from reviewer.desk.selectors import queue_documents_open

    acta, path = acta_pdf(tmp_path, seed=5)
    llm_env.always(model(acta.printed))
    suspicious_threshold_set(doctype="acta", threshold=0.999)  # above what any field of a clean sheet gets
    doc = process(path)
    extraction = Extraction.objects.get(document=doc)
    assert doc.status == "flagged" and extraction.stop_reason == "passed"
    [violation] = extraction.violations.all()
    scores = dict(FieldValue.objects.filter(extraction=extraction).values_list("path", "field_confidence"))
    assert violation.code == "suspicious_pass" and scores[violation.fields[0]] == min(scores.values())
    assert doc in queue_documents_open()


def test_without_a_chosen_threshold_or_above_it_a_pass_stays_a_pass(llm_env, tmp_path):
    from extraction.confidence.services import suspicious_threshold_set

    acta, path = acta_pdf(tmp_path, seed=5)
    llm_env.always(model(acta.printed))
    assert process(path).status == "passed"
    suspicious_threshold_set(doctype="acta", threshold=0.2)
    acta, path = acta_pdf(tmp_path, seed=6)
    llm_env.always(model(acta.printed))
    assert process(path).status == "passed"
    with pytest.raises(ValueError):
        suspicious_threshold_set(doctype="acta", threshold=1.5)


def test_correction_rates_per_field_kind_follow_new_reviews_at_once():
    from extraction.confidence.selectors import corrected_rates
    from tests.support.dashboard_data import make_batch, make_doc

    batch = make_batch()
    first = make_doc(batch, review_status="verified")
    assert corrected_rates(doctype="acta")["rows[].votes"] == 0
    second = make_doc(batch, review_status="corrected")
    FieldValue.objects.filter(extraction__document=second, path="rows[0].votes").update(value=-1)
    rates = corrected_rates(doctype="acta")
    rows = FieldValue.objects.filter(extraction__document__in=[first, second], path__endswith="].votes").count()
    assert rates["rows[].votes"] == pytest.approx(1 / rows) and rates["acta_id"] == 0


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract is not installed (make test installs it)")
def test_a_second_engine_reads_every_page_again_and_where_it_reads_a_value_otherwise_that_field_is_less_sure(
        llm_env, tmp_path, settings):
    settings.OCR_SECOND_ENGINE = "tesseract"
    acta, path = acta_pdf(tmp_path, seed=5)
    llm_env.always(model(acta.printed))
    doc = process(path)
    page = Page.objects.get(document=doc)
    assert page.engine == "pdf-text" and page.second_engine == "tesseract" and len(page.second_words) > 100
    fields = {fv.path: fv for fv in FieldValue.objects.filter(extraction__document=doc)}
    verdicts = Counter(fv.signals["engine_disagrees"] for fv in fields.values())
    assert verdicts[0.0] >= 0.9 * len(fields)  # on a clean page the two engines read nearly every place alike
    # the same reading scored again where the second engine saw other digits in one cited place
    row = row_with(acta.printed, "5")
    target = fields[f"rows[{row}].votes"]
    box = target.proofs[0]["bbox"]
    Page.objects.filter(pk=page.pk).update(second_words=[
        w for w in page.second_words
        if not (box["left"] <= w[1] + w[3] / 2 <= box["left"] + box["width"]
                and box["top"] <= w[2] + w[4] / 2 <= box["top"] + box["height"])
    ] + [["9999", box["left"], box["top"], box["width"], box["height"]]])
    extraction = Extraction.objects.get(document=doc)
    ctx = RuleContext(prompt=render_prompt(ocr_pages_of(document=doc)),
                      blocks=[b for p in ocr_pages_of(document=doc) for b in p.blocks], word_numbers=True)
    before = target.field_confidence
    fieldconfidence_save(extraction=extraction, answer=extraction.answer, violations=[], ctx=ctx,
                         team_id=doc.batch.team_id)
    target.refresh_from_db()
    assert target.signals["engine_disagrees"] == 1 and target.field_confidence < before


def test_a_second_engine_that_fails_leaves_the_document_read_and_the_signal_neutral(llm_env, tmp_path, settings,
                                                                                    monkeypatch):
    from extraction.ocr.blocks import OcrError
    from extraction.pipeline import process as pipeline

    class Broken:
        def read(self, document):
            raise OcrError("the second engine is down")

    real = pipeline.engine_for
    monkeypatch.setattr(pipeline, "engine_for", lambda name: Broken() if name == "tesseract" else real(name))
    settings.OCR_SECOND_ENGINE = "tesseract"
    acta, path = acta_pdf(tmp_path, seed=6)
    llm_env.always(model(acta.printed))
    doc = process(path)
    assert doc.status == "passed"
    assert Page.objects.get(document=doc).second_engine == ""
    assert {fv.signals["engine_disagrees"] for fv in FieldValue.objects.filter(extraction__document=doc)} == {0.0}
