"""Exactly-once processing: claims with a lease, fenced ends, a reaper that spares live workers."""

from __future__ import annotations

import threading
import time
from datetime import timedelta
from pathlib import Path

import pymupdf
import pytest
from django.contrib.messages import get_messages
from django.db import connection
from django.db.models import F
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from extraction.models import Batch, Document, Extraction, FieldValue, Page, Round
from extraction.ocr.blocks import OcrPage
from extraction.pipeline import process as pipeline
from extraction.pipeline import render
from extraction.pipeline.extract import _end
from extraction.pipeline.ingest import IncomingFile, batch_create_from_files
from extraction.pipeline.lease import ClaimLost, document_lease
from extraction.pipeline.process import document_process, documents_requeue_stuck
from extraction.pipeline.transitions import document_claim_for_processing
from extraction.states import Status
from sheetgen.generate import generate_acta
from tests.support.acta_answers import misread
from tests.support.acta_pipeline import acta_pdf, model, row_with


def _doc(**fields) -> Document:
    batch = Batch.objects.create(name="r", doctype="acta")
    return Document.objects.create(batch=batch, filename="a.pdf", sha256="1" * 64, **{"kind": "pdf", **fields})


def _stale(doc: Document, seconds: int = 3600) -> None:
    Document.objects.filter(pk=doc.pk).update(heartbeat_at=timezone.now() - timedelta(seconds=seconds))


@pytest.fixture
def sent(monkeypatch):
    """The ids the reaper hands to the broker (the broker itself is tested with a real worker)."""
    ids: list[int] = []
    monkeypatch.setattr("extraction.pipeline.process.documents_dispatch", lambda batch: ids.extend(batch) or batch)
    monkeypatch.setattr("extraction.pipeline.process.documents_dispatch_pending", lambda **kw: 0)
    return ids


def test_a_claim_returns_a_fencing_token_and_only_the_same_task_may_take_back_an_expired_lease(db):
    doc = _doc()
    assert document_claim_for_processing(document_id=doc.id, task_id="task-1") == 1
    assert document_claim_for_processing(document_id=doc.id, task_id="task-2") is None  # another message: no-op
    assert document_claim_for_processing(document_id=doc.id, task_id="") is None
    # Its worker is alive (the lease is fresh): the same message delivered again does not take it.
    assert document_claim_for_processing(document_id=doc.id, task_id="task-1") is None
    _stale(doc)  # its worker died: the lease ran out
    assert document_claim_for_processing(document_id=doc.id, task_id="task-2") is None
    assert document_claim_for_processing(document_id=doc.id, task_id="task-1") == 2
    doc.refresh_from_db()
    assert doc.status == "processing" and doc.attempts == 2


def test_a_finished_document_is_not_processed_again_by_a_late_redelivery(db):
    doc = _doc()
    assert document_claim_for_processing(document_id=doc.id, task_id="t")
    Document.objects.filter(pk=doc.id).update(status="flagged")
    _stale(doc)
    assert not document_claim_for_processing(document_id=doc.id, task_id="t")


def test_taking_back_a_document_closes_the_run_and_the_round_its_dead_worker_left_open(db):
    doc = _doc()
    document_claim_for_processing(document_id=doc.id, task_id="t")
    orphan = Extraction.objects.create(document=doc, doctype="acta")
    done = Round.objects.create(extraction=orphan, number=1, state=Round.State.COMPLETED)
    calling = Round.objects.create(extraction=orphan, number=2)  # killed during this LLM call
    _stale(doc)
    document_claim_for_processing(document_id=doc.id, task_id="t")
    orphan.refresh_from_db()
    calling.refresh_from_db()
    done.refresh_from_db()
    assert orphan.stop_reason == "error" and "worker" in orphan.error and orphan.finished_at
    assert calling.state == "failed" and calling.finished_at and "worker" in calling.error
    assert done.state == "completed"


def test_the_reaper_takes_back_only_expired_leases_and_closes_their_rounds(db, settings, sent):
    settings.PROCESSING_LEASE_SECONDS = 60
    long_running = _doc(status="processing", attempts=1, task_id="alive",
                        processing_started_at=timezone.now() - timedelta(hours=2), heartbeat_at=timezone.now())
    dead = _doc(status="processing", attempts=1, task_id="dead", run_options={"max_rounds": 2},
                processing_started_at=timezone.now() - timedelta(minutes=5))
    _stale(dead, seconds=61)
    legacy = _doc(status="processing", attempts=1, processing_started_at=timezone.now() - timedelta(hours=1))
    left_open = Round.objects.create(extraction=Extraction.objects.create(document=dead, doctype="acta"), number=1)

    assert documents_requeue_stuck() == 2
    assert sorted(sent) == sorted([dead.id, legacy.id])
    long_running.refresh_from_db()
    dead.refresh_from_db()
    left_open.refresh_from_db()
    assert long_running.status == "processing"  # processed for two hours, but its worker renews the lease
    assert (dead.status, dead.task_id, dead.run_options) == ("queued", "", {"max_rounds": 2})
    assert left_open.state == "failed"


def test_a_held_lease_is_renewed_so_the_reaper_leaves_a_slow_document_alone(transactional_db, settings, sent):
    settings.PROCESSING_LEASE_SECONDS = 2
    doc = _doc()
    claim = document_claim_for_processing(document_id=doc.id, task_id="t")
    with document_lease(document_id=doc.id, claim=claim) as lease:
        for _ in range(8):  # twice the lease, the reaper running all along
            time.sleep(0.5)
            documents_requeue_stuck()
        assert not lease.lost
    doc.refresh_from_db()
    assert doc.status == "processing" and doc.attempts == 1 and sent == []
    time.sleep(2.2)  # the worker stopped renewing (it died): the lease runs out
    assert documents_requeue_stuck() == 1
    doc.refresh_from_db()
    assert doc.status == "queued"


def test_a_worker_whose_document_was_taken_back_loses_its_lease_and_cannot_end_it(transactional_db, settings, sent):
    settings.PROCESSING_LEASE_SECONDS = 2
    doc = _doc()
    first = document_claim_for_processing(document_id=doc.id, task_id="a")
    stopped = []
    with document_lease(document_id=doc.id, claim=first) as lease:
        lease.on_lost(lambda: stopped.append(True))
        # The first worker stalls past its lease; the reaper hands the document to another task.
        Document.objects.filter(pk=doc.id).update(heartbeat_at=timezone.now() - timedelta(seconds=3))
        assert documents_requeue_stuck() == 1
        second = document_claim_for_processing(document_id=doc.id, task_id="b")
        assert second == first + 1
        deadline = time.monotonic() + 5
        while not lease.lost and time.monotonic() < deadline:
            time.sleep(0.1)
        assert lease.lost and stopped == [True]  # the in-flight LLM call is closed by this callback
        with pytest.raises(ClaimLost):
            lease.check()
        with pytest.raises(ClaimLost):
            _end(document_id=doc.id, to=Status.PASSED, claim=first)
    doc.refresh_from_db()
    assert (doc.status, doc.attempts) == ("processing", second)  # still the second worker's
    _end(document_id=doc.id, to=Status.PASSED, claim=second)
    doc.refresh_from_db()
    assert doc.status == "passed"


def test_processing_a_document_twice_in_a_row_runs_the_loop_once(db, tmp_path):
    path = tmp_path / "acta.pdf"
    path.write_bytes(generate_acta(seed=21).pdf_bytes)
    batch = batch_create_from_files(name="once", doctype="acta", ocr_engine="pdf-text",
                                    files=[IncomingFile(path.name, path)], queue=False)
    doc = batch.documents.get()
    assert document_process(document_id=doc.id, task_id="a") in ("passed", "flagged")
    assert document_process(document_id=doc.id, task_id="a") == "not claimed"
    assert document_process(document_id=doc.id, task_id="b") == "not claimed"
    assert Extraction.objects.filter(document=doc).count() == 1


def test_queued_documents_never_sent_or_lost_by_the_broker_are_sent_again_and_no_others(db, monkeypatch):
    from extraction.pipeline import dispatch

    now = timezone.now()
    never_sent = _doc(status="queued")  # the broker was down when its batch was uploaded
    just_queued = _doc(status="queued")  # its send is still on its way (the upload's commit)
    lost = _doc(status="queued", dispatched_at=now - timedelta(minutes=10))  # sent, then the broker restarted
    waiting = _doc(status="queued", dispatched_at=now - timedelta(seconds=5))
    Document.objects.filter(pk__in=[never_sent.pk, lost.pk, waiting.pk]).update(
        status_changed_at=now - timedelta(minutes=10))
    sent: list[int] = []
    monkeypatch.setattr(dispatch, "documents_dispatch", lambda ids: sent.extend(ids) or ids)

    monkeypatch.setattr(dispatch, "broker_queue_size", lambda: 3)  # messages still wait: nothing is lost
    assert dispatch.documents_dispatch_pending(now=now) == 1
    assert sent == [never_sent.id]

    sent.clear()
    monkeypatch.setattr(dispatch, "broker_queue_size", lambda: 0)  # the queue is empty long after the send
    assert dispatch.documents_dispatch_pending(now=now) == 2
    assert sorted(sent) == sorted([never_sent.id, lost.id])
    assert just_queued.id not in sent and waiting.id not in sent


# --- a retry starts a run only for a finished document ---------------------------------------------------


def _messages(response) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]


@pytest.mark.parametrize("status", ["processing", "queued"])
def test_a_retry_of_a_document_still_being_processed_is_refused_clearly_and_changes_nothing(
        client_as, monkeypatch, status):
    queued: list[int] = []
    monkeypatch.setattr("extraction.pipeline.requeue.documents_queue", queued.extend)
    doc = _doc(status=status, attempts=1, task_id="running", heartbeat_at=timezone.now())
    before = Document.objects.values().get(pk=doc.pk)

    response = client_as("admin").post(reverse("document_retry", args=[doc.id]))

    assert response.status_code == 302
    assert _messages(response) == ["a.pdf is still being processed; retry when it has finished."]
    assert Document.objects.values().get(pk=doc.pk) == before and queued == []


def test_a_retry_of_a_file_refused_at_upload_keeps_its_reason_and_queues_nothing(client_as, monkeypatch):
    from extraction.pipeline.rerun import batch_rerun

    queued: list[int] = []
    monkeypatch.setattr("extraction.pipeline.requeue.documents_queue", queued.extend)
    doc = _doc(status="failed", kind="", error_code="damaged", error_message="The PDF is damaged: no pages.",
               original="a.pdf")
    response = client_as("admin").post(reverse("document_retry", args=[doc.id]))
    assert _messages(response) == ["a.pdf was refused at upload (The PDF is damaged: no pages.); a retry would "
                                   "read the same file: upload a good copy instead."]
    result = batch_rerun(batch=doc.batch, user=None, scope="failed", options={})
    doc.refresh_from_db()
    assert (doc.status, doc.error_message) == ("failed", "The PDF is damaged: no pages.")
    assert queued == [] and result.queued == []


@pytest.mark.django_db(transaction=True)
def test_six_retries_of_a_finished_document_sent_together_queue_exactly_one_run(users, monkeypatch):
    """Six admins' retries in three pairs 50 ms apart: each pair races in the same instant, and the later
    pairs arrive once a worker has claimed the run the first one queued (the probe's extra runs)."""
    runs: list[int] = []

    def a_worker_takes_it_at_once(ids: list[int]) -> list[int]:
        for document_id in ids:  # sent once the retry commits; a free worker claims it straight away
            runs.append(document_id)
            document_claim_for_processing(document_id=document_id, task_id=f"run-{len(runs)}")
        return ids

    monkeypatch.setattr("extraction.pipeline.dispatch.documents_dispatch", a_worker_takes_it_at_once)
    doc = _doc(status="flagged", attempts=1)
    clients = [Client() for _ in range(6)]
    for client in clients:
        client.force_login(users["admin"])
    assert clients[0].get(reverse("batch_detail", args=[doc.batch_id])).status_code == 200  # the app warmed up
    barrier = threading.Barrier(len(clients))
    answers: list[list[str]] = []

    def retry(client: Client, after: float) -> None:
        try:
            connection.ensure_connection()  # connected and logged in before the race, as a browser is
            barrier.wait(timeout=10)
            time.sleep(after)
            answers.append(_messages(client.post(reverse("document_retry", args=[doc.id]))))
        finally:
            connection.close()  # this thread's own connection

    threads = [threading.Thread(target=retry, args=(client, 0.05 * (i // 2))) for i, client in enumerate(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    assert runs == [doc.id]
    assert sorted(answers) == sorted([["a.pdf is queued again."]]
                                     + [["a.pdf is still being processed; retry when it has finished."]] * 5)
    doc.refresh_from_db()
    assert (doc.status, doc.attempts) == ("processing", 2)  # the one run's claim


# --- a worker that lost its lease stops at its next step ----------------------------------------------


def _take_over(doc: Document) -> None:
    """Another run claims the document (the reaper gave it back and a second worker took it)."""
    Document.objects.filter(pk=doc.pk).update(attempts=F("attempts") + 1)


class _PageReader:
    """An OCR engine that reads page by page and lets a test act on each page it reads."""

    name = "pages"

    def __init__(self, on_page=lambda number: None):
        self.on_page = on_page
        self.pages_read: list[int] = []

    def read(self, document) -> list[OcrPage]:
        pages = []
        for image in document.pages:
            self.pages_read.append(image.number)
            self.on_page(image.number)
            pages.append(OcrPage(number=image.number, blocks=[], engine=self.name))
        return pages


def _five_pages(tmp_path: Path, monkeypatch, settings, reader: _PageReader) -> Document:
    settings.OCR_PAGE_WORKERS = 1
    settings.OCR_SECOND_ENGINE = ""
    settings.RENDERER = "pymupdf"
    path = tmp_path / "long.pdf"
    with pymupdf.open() as pdf:
        for number in range(1, 6):
            pdf.new_page().insert_text((72, 72), f"Page {number}")
        pdf.save(path)
    monkeypatch.setattr(pipeline, "engine_for", lambda name: reader)
    batch = batch_create_from_files(name="long", doctype="acta", ocr_engine="pdf-text",
                                    files=[IncomingFile(path.name, path)], queue=False)
    return batch.documents.get()


def _stopped_and_stored_nothing(doc: Document) -> None:
    doc.refresh_from_db()
    assert (doc.status, doc.attempts) == ("processing", 2)  # still the other run's
    assert not Page.objects.filter(document=doc).exists() and not doc.extractions.exists()


def test_a_worker_whose_document_is_taken_over_while_it_renders_stops_before_the_next_page(
        db, tmp_path, monkeypatch, settings):
    reader = _PageReader()
    doc = _five_pages(tmp_path, monkeypatch, settings, reader)
    rendered: list[int] = []
    page_path = render._page_path

    def rendering(out_dir: Path, number: int) -> Path:
        rendered.append(number)
        if number == 2:
            _take_over(doc)
        return page_path(out_dir, number)

    monkeypatch.setattr(render, "_page_path", rendering)

    assert document_process(document_id=doc.id, task_id="first") == "claim lost"
    assert rendered == [1, 2] and reader.pages_read == []
    _stopped_and_stored_nothing(doc)


def test_a_worker_whose_document_is_taken_over_while_it_reads_the_pages_stops_before_the_next_page(
        db, tmp_path, monkeypatch, settings):
    reader = _PageReader(on_page=lambda number: number == 2 and _take_over(doc))
    doc = _five_pages(tmp_path, monkeypatch, settings, reader)

    assert document_process(document_id=doc.id, task_id="first") == "claim lost"
    assert reader.pages_read == [1, 2]
    _stopped_and_stored_nothing(doc)


def test_a_worker_whose_document_is_taken_over_during_a_round_asks_the_model_no_more(
        transactional_db, llm_env, tmp_path):
    acta, path = acta_pdf(tmp_path, seed=3)
    row = row_with(acta.printed, "5")
    batch = batch_create_from_files(name="taken", doctype="acta", ocr_engine="pdf-text",
                                    files=[IncomingFile(path.name, path)], queue=False)
    doc = batch.documents.get()
    misread_five = model(acta.printed, lambda a: misread(a, row, "5", "6"))  # round 2 would be asked

    def taken_over_while_answering(body):
        try:
            _take_over(doc)  # from the server's thread, while the worker waits for this answer
        finally:
            connection.close()
        return misread_five(body)

    llm_env.script(taken_over_while_answering, model(acta.printed))

    assert document_process(document_id=doc.id, task_id="first") == "claim lost"
    assert len(llm_env.requests) == 1  # no second round, no second bill
    run = doc.extractions.get()
    assert list(run.rounds.values_list("number", flat=True)) == [1]
    assert run.error.startswith("Abandoned") and run.finished_at and run.answer is None
    assert not FieldValue.objects.filter(extraction=run).exists()
    doc.refresh_from_db()
    assert (doc.status, doc.attempts) == ("processing", 2)
