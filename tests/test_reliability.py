"""Exactly-once processing: a redelivered task takes back its own document, the reaper requeues the stuck."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from extraction.acta.generate import generate_acta
from extraction.models import Batch, Document, Extraction
from extraction.services.ingest import IncomingFile, batch_create_from_files
from extraction.services.pipeline import document_process, documents_requeue_stuck
from extraction.services.transitions import document_claim_for_processing


def _doc(**fields) -> Document:
    batch = Batch.objects.create(name="r", doctype="acta")
    return Document.objects.create(batch=batch, filename="a.pdf", sha256="1" * 64, **fields)


def test_only_the_same_task_delivered_again_may_take_back_a_processing_document(db):
    doc = _doc()
    assert document_claim_for_processing(document_id=doc.id, task_id="task-1")
    assert not document_claim_for_processing(document_id=doc.id, task_id="task-2")  # another message: no-op
    assert not document_claim_for_processing(document_id=doc.id, task_id="")
    assert document_claim_for_processing(document_id=doc.id, task_id="task-1")  # its worker died: redelivered
    doc.refresh_from_db()
    assert doc.status == "processing" and doc.attempts == 2


def test_a_finished_document_is_not_processed_again_by_a_late_redelivery(db):
    doc = _doc()
    assert document_claim_for_processing(document_id=doc.id, task_id="t")
    Document.objects.filter(pk=doc.id).update(status="flagged")
    assert not document_claim_for_processing(document_id=doc.id, task_id="t")


def test_taking_back_a_document_closes_the_extraction_its_dead_worker_left_open(db):
    doc = _doc()
    document_claim_for_processing(document_id=doc.id, task_id="t")
    orphan = Extraction.objects.create(document=doc, doctype="acta")
    document_claim_for_processing(document_id=doc.id, task_id="t")
    orphan.refresh_from_db()
    assert orphan.stop_reason == "error" and "worker" in orphan.error and orphan.finished_at


def test_the_reaper_requeues_stuck_documents_resends_lost_messages_and_leaves_fresh_ones(db, monkeypatch):
    stuck = _doc(status="processing", processing_started_at=timezone.now() - timedelta(hours=2), task_id="x")
    fresh = _doc(status="processing", processing_started_at=timezone.now(), task_id="y")
    lost = _doc(status="queued")
    Document.objects.filter(pk=lost.pk).update(status_changed_at=timezone.now() - timedelta(hours=1))
    sent = []
    monkeypatch.setattr("extraction.tasks.queue_documents", lambda ids, **kw: sent.extend(ids))
    assert documents_requeue_stuck(older_than=timedelta(minutes=30)) == 2
    assert sorted(sent) == sorted([stuck.id, lost.id])  # the lost message is sent again
    stuck.refresh_from_db()
    fresh.refresh_from_db()
    assert (stuck.status, stuck.task_id) == ("queued", "")
    assert fresh.status == "processing"


def test_processing_a_document_twice_in_a_row_runs_the_loop_once(db, tmp_path):
    path = tmp_path / "acta.pdf"
    path.write_bytes(generate_acta(seed=21).pdf_bytes)
    batch = batch_create_from_files(name="once", doctype="acta", ocr_engine="pdf-text",
                                    files=[IncomingFile(path.name, path)])
    doc = batch.documents.get()
    assert document_process(document_id=doc.id, task_id="a") in ("passed", "flagged")
    assert document_process(document_id=doc.id, task_id="a") == "not claimed"
    assert document_process(document_id=doc.id, task_id="b") == "not claimed"
    assert Extraction.objects.filter(document=doc).count() == 1
