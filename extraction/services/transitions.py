"""Writes, and the only place that moves a Document between states.

Every transition is a conditional UPDATE on the current state: when two workers or two people race,
exactly one update matches a row and the other sees a count of 0 and stops.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Case, F, Value, When
from django.utils import timezone

from extraction import tasks  # tasks import services lazily: no cycle
from extraction.models import Document
from extraction.states import ReviewStatus, Status, review_sources_for, sources_for


class TransitionError(Exception):
    """The document was not in a state that allows this change (someone else got there first)."""


def document_transition(*, document_id: int, to: Status, **fields) -> bool:
    """Move a document to `to` if its current state allows it; return whether this call did it."""
    now = timezone.now()
    extra = dict(fields)
    if to == Status.PROCESSING:
        extra.setdefault("processing_started_at", now)
        extra.setdefault("attempts", F("attempts") + 1)
    if to in (Status.PASSED, Status.FLAGGED, Status.FAILED):
        # the end of processing; a later move (an audit sending a passed document to the queue) keeps it
        extra.setdefault("processed_at", Case(When(status=Status.PROCESSING.value, then=Value(now)),
                                              default=F("processed_at")))
    if to == Status.QUEUED:
        extra.setdefault("task_id", "")
    updated = Document.objects.filter(pk=document_id, status__in=[s.value for s in sources_for(to)]).update(
        status=to.value, status_changed_at=now, version=F("version") + 1, **extra
    )
    return updated == 1


def document_review_transition(*, document_id: int, to: ReviewStatus, expected_version: int | None = None, **fields) -> bool:
    qs = Document.objects.filter(pk=document_id, review_status__in=[s.value for s in review_sources_for(to)])
    if expected_version is not None:
        qs = qs.filter(version=expected_version)
    updated = qs.update(review_status=to.value, version=F("version") + 1, **fields)
    return updated == 1


@transaction.atomic
def document_fail(*, document_id: int, code: str, message: str) -> bool:
    """A clear, retryable error on one document. Allowed from queued or processing."""
    return document_transition(document_id=document_id, to=Status.FAILED, error_code=code[:40], error_message=message)


def document_requeue(*, document_id: int, options: dict | None = None) -> bool:
    """Send a finished (or failed) document back to the queue and queue its task once committed."""
    with transaction.atomic():
        moved = document_transition(document_id=document_id, to=Status.QUEUED, error_code="", error_message="")
        if moved:
            Document.objects.filter(pk=document_id).update(
                review_status=ReviewStatus.UNREVIEWED.value, claimed_by=None, claimed_at=None
            )
            tasks.queue_documents([document_id], options=options)
    return moved


def document_claim_for_processing(*, document_id: int, task_id: str = "") -> bool:
    """Claim a queued document for a task. The same task delivered again may take the document back
    from `processing`: the broker only redelivers an unacknowledged message when its worker is gone."""
    if document_transition(document_id=document_id, to=Status.PROCESSING, task_id=task_id, error_code="",
                           error_message=""):
        return True
    if not task_id:
        return False
    now = timezone.now()
    with transaction.atomic():
        taken = Document.objects.filter(pk=document_id, status=Status.PROCESSING.value, task_id=task_id).update(
            processing_started_at=now, attempts=F("attempts") + 1, version=F("version") + 1
        )
        if taken:
            _close_orphaned_extractions(document_id=document_id, now=now)
    return taken == 1


def _close_orphaned_extractions(*, document_id: int, now) -> None:
    from extraction.models import Extraction

    Extraction.objects.filter(document_id=document_id, finished_at__isnull=True).update(
        stop_reason="error", error="The worker running this extraction died; the document was processed again.",
        finished_at=now,
    )
