"""Sending a finished (or failed) document back to the queue: the guarded move, then its task once committed."""

from __future__ import annotations

from django.db import transaction

from extraction.services.dispatch import documents_queue
from extraction.services.transitions import document_transition
from extraction.states import Status


def document_requeue(*, document_id: int, options: dict | None = None) -> bool:
    """Queue the document again (unreviewed, unclaimed, its error cleared, with these run options) and send
    its task once the move commits; False when its state does not allow it."""
    with transaction.atomic():
        moved = document_transition(document_id=document_id, to=Status.QUEUED, error_code="", error_message="",
                                    run_options=options, to_reviewers=True)
        if moved:
            documents_queue([document_id])  # sent on commit
    return moved
