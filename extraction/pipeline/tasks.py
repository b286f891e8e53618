"""Thin Celery tasks: they take ids and call one service."""

from __future__ import annotations

from celery import shared_task


# acks_late: a worker killed mid-document leaves the message on the broker and it is delivered again;
# the claim's lease lets that delivery (or the reaper) take the document back only once the dead worker
# stopped renewing it, so it is processed once. No automatic retries: a fault ends the document FAILED
# with its reason, and an admin retries it. The run's settings (a re-run's) live on the document;
# `options` is still read from messages sent before they did. The name is the one messages already queued
# carry (the task lived in extraction/tasks.py).
@shared_task(
    name="extraction.tasks.process_document", bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=0,
    ignore_result=True,
)
def process_document(self, document_id: int, options: dict | None = None) -> str:
    from extraction.pipeline.process import document_process

    return document_process(document_id=document_id, options=options, task_id=self.request.id or "")
