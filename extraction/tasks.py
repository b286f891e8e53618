"""Thin Celery tasks: they take ids and call one service."""

from __future__ import annotations

from celery import shared_task
from django.db import transaction


def queue_documents(document_ids: list[int], *, options: dict | None = None) -> None:
    """Queue processing once the rows are committed, so a worker never looks for a row not yet there.

    `options` override the batch's settings for this run (model, input mode, rounds): a re-run.
    """
    for document_id in document_ids:
        transaction.on_commit(lambda document_id=document_id: process_document.delay(document_id, options))


# acks_late: a worker killed mid-document leaves the message on the broker and it is delivered again;
# the claim in the service lets only that same task take the document back, so it is processed once.
# No automatic retries: a fault ends the document FAILED with its reason, and an admin retries it.
@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=0, ignore_result=True)
def process_document(self, document_id: int, options: dict | None = None) -> str:
    from extraction.services.pipeline import document_process

    return document_process(document_id=document_id, options=options, task_id=self.request.id or "")


@shared_task(ignore_result=True)
def requeue_stuck_documents() -> int:
    from extraction.services.pipeline import documents_requeue_stuck

    return documents_requeue_stuck()
