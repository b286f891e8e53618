"""Sending a finished (or failed) document back to the queue: the guarded move, then its task once committed."""

from __future__ import annotations

from django.db import transaction
from django.db.models import Q

from extraction.pipeline.dispatch import documents_queue
from extraction.pipeline.transitions import document_transition
from extraction.states import FINAL_STATUSES, Status


def document_requeue(*, document_id: int, options: dict | None = None) -> bool:
    """Queue the document again (unreviewed, unclaimed, its error cleared, with these run options) and send
    its task once the move commits; False unless it has finished (queued or still being processed) and its
    file was accepted at upload (one refused there has no kind to read it as: a retry would only replace its
    reason with a worse one, so it keeps its reason until a good copy is uploaded).

    Only a finished document: processing -> queued is the reaper's move for a worker that stopped renewing
    its lease, never a person's, whose retry would start a second run beside the live one. The status is
    checked in the move's own update, so of parallel retries exactly one queues a run."""
    with transaction.atomic():
        moved = document_transition(document_id=document_id, to=Status.QUEUED, error_code="", error_message="",
                                    run_options=options, to_reviewers=True,
                                    where=Q(status__in=[s.value for s in FINAL_STATUSES]) & ~Q(kind=""))
        if moved:
            documents_queue([document_id])  # sent on commit
    return moved
