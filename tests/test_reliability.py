"""Exactly-once processing: claims with a lease, fenced ends, a reaper that spares live workers."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from extraction.models import Batch, Document, Extraction, Round
from extraction.services.extract import _end
from extraction.services.ingest import IncomingFile, batch_create_from_files
from extraction.services.lease import ClaimLost, document_lease
from extraction.services.pipeline import document_process, documents_requeue_stuck
from extraction.services.transitions import document_claim_for_processing
from extraction.states import Status
from sheetgen.generate import generate_acta


def _doc(**fields) -> Document:
    batch = Batch.objects.create(name="r", doctype="acta")
    return Document.objects.create(batch=batch, filename="a.pdf", sha256="1" * 64, **fields)


def _stale(doc: Document, seconds: int = 3600) -> None:
    Document.objects.filter(pk=doc.pk).update(heartbeat_at=timezone.now() - timedelta(seconds=seconds))


@pytest.fixture
def sent(monkeypatch):
    """The ids the reaper hands to the broker (the broker itself is tested with a real worker)."""
    ids: list[int] = []
    monkeypatch.setattr("extraction.services.pipeline.documents_dispatch", lambda batch: ids.extend(batch) or batch)
    monkeypatch.setattr("extraction.services.pipeline.documents_dispatch_pending", lambda **kw: 0)
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
    from extraction.services import dispatch

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
