"""Re-runs: failed documents or a whole batch again with other settings, as new extractions beside the old."""

from __future__ import annotations

from unittest import mock

import pytest
from django.test import Client
from django.urls import reverse

from extraction.models import Document, Extraction, ReviewEvent
from extraction.pipeline import rerun
from extraction.pipeline.ingest import IncomingFile, batch_create_from_files
from extraction.pipeline.process import document_process
from reviewer.batches.selectors import batch_dashboard, batch_runs
from sheetgen.generate import generate_acta
from tests.support.dashboard_data import (
    make_batch,
    make_doc,
)

pytestmark = pytest.mark.django_db

ROLES = ["anonymous", "outsider", "reviewer", "supervisor", "admin"]


@pytest.fixture
def delays():
    """The document ids handed to the broker (the run's settings live on the document), instead of a broker."""
    with mock.patch("extraction.pipeline.tasks.process_document.apply_async") as send:
        yield send


def sent_ids(send) -> list[int]:
    return [c.args[0][0] for c in send.call_args_list]


def mixed_batch():
    batch = make_batch("mixed")
    docs = {
        "passed": make_doc(batch),
        "flagged": make_doc(batch, status="flagged", rounds=[["sum_valid_votes"]], review_status="corrected"),
        "failed": make_doc(batch, status="failed", extraction=False),
        "processing": make_doc(batch, status="processing", extraction=False, seconds=None),
    }
    dup = make_doc(batch, status="failed", extraction=False)
    Document.objects.filter(pk=dup.pk).update(duplicate_of=docs["failed"])
    return batch, docs


@pytest.mark.parametrize(("kwargs", "expected"), [
    ({}, {}),
    ({"llm_model": " gpt-4o-mini ", "llm_input": "vision", "max_rounds": "4"},
     {"llm_model": "gpt-4o-mini", "llm_input": "vision", "max_rounds": 4}),
    ({"llm_model": "Qwen/Qwen2.5-32B-Instruct"}, {"llm_model": "Qwen/Qwen2.5-32B-Instruct"}),
])
def test_rerun_options_keep_only_what_was_given(kwargs, expected):
    assert rerun.rerun_options(**kwargs, llm=True) == expected


def test_llm_settings_without_an_llm_are_refused_rather_than_silently_ignored():
    assert rerun.rerun_options(ocr_engine="tesseract", llm=False) == {"ocr_engine": "tesseract"}
    with pytest.raises(rerun.RerunError, match="offline template reader reads each document once"):
        rerun.rerun_options(max_rounds="2", llm=False)
    with pytest.raises(rerun.RerunError):
        rerun.rerun_options(ocr_engine="abbyy", llm=True)


@pytest.mark.parametrize("kwargs", [{"llm_input": "audio"}, {"max_rounds": "0"}, {"max_rounds": "11"},
                                    {"max_rounds": "two"}, {"llm_model": "a b"}, {"llm_model": "x" * 101}])
def test_bad_rerun_options_are_refused(kwargs):
    with pytest.raises(rerun.RerunError):
        rerun.rerun_options(**kwargs, llm=True)


def test_rerunning_failed_documents_queues_only_those_with_the_new_settings(users, delays,
                                                                           django_capture_on_commit_callbacks):
    batch, docs = mixed_batch()
    options = {"llm_model": "other-model", "max_rounds": 2}
    with django_capture_on_commit_callbacks(execute=True):
        result = rerun.batch_rerun(batch=batch, user=users["admin"], scope="failed", options=options)
    assert result.queued == [docs["failed"].id] and result.skipped == 0  # the duplicate is never re-run
    assert sent_ids(delays) == [docs["failed"].id]
    assert Document.objects.get(pk=docs["failed"].id).status == "queued"
    assert Document.objects.get(pk=docs["failed"].id).run_options == options  # a re-sent message keeps them
    event = ReviewEvent.objects.get(kind="rerun")
    assert event.user == users["admin"] and event.after["options"] == options and event.before["status"] == "failed"


def test_rerunning_a_whole_batch_takes_every_finished_document_and_resets_reviews(users, delays,
                                                                                django_capture_on_commit_callbacks):
    batch, docs = mixed_batch()
    with django_capture_on_commit_callbacks(execute=True):
        result = rerun.batch_rerun(batch=batch, user=users["admin"], scope="all", options={})
    assert sorted(result.queued) == sorted(docs[k].id for k in ("passed", "flagged", "failed"))
    assert sorted(sent_ids(delays)) == sorted(result.queued)
    assert list(Document.objects.filter(pk__in=result.queued).values_list("run_options", flat=True)) == [{}] * 3
    flagged = Document.objects.get(pk=docs["flagged"].id)
    assert (flagged.status, flagged.review_status) == ("queued", "unreviewed")
    assert Document.objects.get(pk=docs["processing"].id).status == "processing"  # never taken from a worker
    assert Extraction.objects.filter(document=docs["flagged"]).count() == 1  # the earlier run is kept


def test_an_unknown_scope_is_refused(users):
    with pytest.raises(rerun.RerunError):
        rerun.batch_rerun(batch=make_batch(), user=users["admin"], scope="everything", options={})


def test_a_real_acta_rerun_adds_an_extraction_and_keeps_the_first_for_comparison(users, tmp_path, delays,
                                                                                django_capture_on_commit_callbacks):
    path = tmp_path / "acta.pdf"
    path.write_bytes(generate_acta(seed=31, errors=["digits_words_mismatch"]).pdf_bytes)
    batch = batch_create_from_files(name="real", doctype="acta", ocr_engine="pdf-text",
                                    files=[IncomingFile(filename="acta.pdf", path=path)])
    doc = batch.documents.get()
    assert document_process(document_id=doc.id) == "flagged"
    first = Extraction.objects.get(document=doc)
    first_answer = first.answer

    with django_capture_on_commit_callbacks(execute=True):
        rerun.batch_rerun(batch=batch, user=users["admin"], scope="flagged", options={"max_rounds": 2})
    assert sent_ids(delays) == [doc.id]
    doc.refresh_from_db()
    assert doc.run_options == {"max_rounds": 2}
    assert document_process(document_id=doc.id) == "flagged"

    runs = list(Extraction.objects.filter(document=doc).order_by("started_at", "id"))
    assert len(runs) == 2 and runs[0].pk == first.pk and runs[0].answer == first_answer
    compared = batch_runs(batch=batch)
    assert sum(r["n"] for r in compared["runs"]) == 2
    assert compared["documents"][0]["id"] == doc.id and len(compared["documents"][0]["runs"]) == 2
    assert [r["id"] for r in compared["documents"][0]["runs"]] == [runs[0].id, runs[1].id]
    assert compared["documents"][0]["runs"][0]["truth_wrong"] == 0  # the QR truth: the sheet misprints words only
    assert batch_dashboard(batch=batch)["finished"] == 1  # the dashboard counts the current run only


def test_runs_are_grouped_by_their_settings_with_cost_summed_per_group():
    batch = make_batch("groups")
    for _ in range(2):
        make_doc(batch, tokens=(10, 5), cost="0.5", reader="llm", settings={"model": "a", "input": "text",
                                                                              "max_rounds": 3})
    make_doc(batch, rounds=[["x"], ["x"]], tokens=(30, 5), cost="1", reader="llm",
             settings={"model": "b", "input": "vision", "max_rounds": 2})
    runs = {r["model"]: r for r in batch_runs(batch=batch)["runs"]}
    assert runs["a"]["n"] == 2 and runs["a"]["tokens"] == 30 and str(runs["a"]["cost"]) == "1.000000"
    assert runs["a"]["pass"]["percent"] == 100.0 and runs["b"]["pass"]["percent"] == 0.0
    assert runs["b"]["mean_rounds"] == 2 and runs["b"]["input"] == "vision"


# --- the page -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("role", ROLES)
def test_only_admins_open_the_rerun_page(client_as, role):
    batch, _ = mixed_batch()
    response = client_as(role).get(reverse("batch_rerun", args=[batch.id]))
    if role == "anonymous":
        assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    else:
        assert response.status_code == (200 if role == "admin" else 403)


@pytest.mark.parametrize("role", ROLES)
def test_only_admins_rerun(client_as, role, delays):
    batch, docs = mixed_batch()
    response = client_as(role).post(reverse("batch_rerun", args=[batch.id]), {"scope": "failed"})
    status = Document.objects.get(pk=docs["failed"].id).status
    if role == "admin":
        assert response.status_code == 302 and response["Location"] == reverse("batch_dashboard", args=[batch.id])
        assert status == "queued"
    else:
        assert response.status_code in (302, 403) and status == "failed"


@pytest.mark.parametrize("rounds", ["99", "\u2462"])  # too many; a digit int() does not read (circled three)
def test_a_bad_setting_is_shown_and_nothing_is_queued(client_as, delays, monkeypatch, rounds):
    monkeypatch.setenv("LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("LLM_MODEL", "m0")
    batch, docs = mixed_batch()
    response = client_as("admin").post(reverse("batch_rerun", args=[batch.id]),
                                       {"scope": "all", "max_rounds": rounds, "llm_model": "m1"})
    assert response.status_code == 400 and b"Rounds must be a whole number" in response.content
    assert b'value="m1"' in response.content
    assert not Document.objects.filter(status="queued").exists()


def test_the_rerun_page_counts_each_choice_and_warns_about_reviewed_documents(client_as):
    batch, _ = mixed_batch()
    page = client_as("admin").get(reverse("batch_rerun", args=[batch.id])).content.decode()
    assert "failed (1)" in page and "flagged (1)" in page and "the whole batch (3)" in page
    assert "1 reviewed document would go back" in page
    assert '<option value="failed" selected>' in page  # the first choice with documents is chosen


def test_the_rerun_page_never_defaults_to_an_empty_choice_and_offers_no_rounds_without_an_llm(client_as):
    batch, docs = mixed_batch()
    Document.objects.filter(pk=docs["failed"].id).update(status="passed")
    page = client_as("admin").get(reverse("batch_rerun", args=[batch.id])).content.decode()
    assert "failed (0)" in page and '<option value="flagged" selected>' in page
    assert 'name="max_rounds"' not in page and "reads each document" in page
    assert 'name="ocr_engine"' in page and 'value="tesseract"' in page


def test_a_rerun_post_without_the_csrf_token_is_refused(users):
    batch, docs = mixed_batch()
    client = Client(enforce_csrf_checks=True)
    client.force_login(users["admin"])
    assert client.post(reverse("batch_rerun", args=[batch.id]), {"scope": "failed"}).status_code == 403
    assert Document.objects.get(pk=docs["failed"].id).status == "failed"


def test_a_rerun_with_another_ocr_engine_reads_the_pages_again_with_it(users, tmp_path):
    path = tmp_path / "acta.pdf"
    path.write_bytes(generate_acta(seed=83).pdf_bytes)
    batch = batch_create_from_files(name="ocr", doctype="acta", ocr_engine="pdf-text",
                                    files=[IncomingFile(path.name, path)], queue=False)
    doc = batch.documents.get()
    document_process(document_id=doc.id)
    assert set(doc.pages.values_list("engine", flat=True)) == {"pdf-text"}
    options = rerun.rerun_options(ocr_engine="tesseract", llm=False)
    rerun.batch_rerun(batch=batch, user=users["admin"], scope="all", options=options)
    document_process(document_id=doc.id, options=options)
    assert set(doc.pages.values_list("engine", flat=True)) == {"tesseract"}
    newest = doc.extractions.order_by("-started_at", "-id").first()
    assert newest.settings["ocr"] == "tesseract" and doc.extractions.count() == 2
