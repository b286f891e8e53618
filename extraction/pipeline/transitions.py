"""Writes, and the only place that moves a Document between states.

Every transition is a conditional UPDATE on the current state: when two workers or two people race,
exactly one update matches a row and the other sees a count of 0 and stops. A transition sets its state's
columns and only the others it names; it never queues a task (services do, once the move commits).
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Case, F, Q, Value, When
from django.dispatch import Signal
from django.utils import timezone

from extraction.models import Document
from extraction.pipeline.lease import lease_duration
from extraction.states import ReviewStatus, Status, review_sources_for, sources_for

# Sent after each move, inside its transaction, with document_id and to: what the move means to others (the
# webhooks' outbox, reviewer/webhooks) is written with it, and extraction imports none of them.
document_moved = Signal()

_UNREVIEWED_UNCLAIMED = {"review_status": ReviewStatus.UNREVIEWED.value, "claimed_by": None, "claimed_at": None}


def document_transition(*, document_id: int, to: Status, claim: int | None = None, where: Q | None = None,
                        error_code: str | None = None, error_message: str | None = None,
                        task_id: str | None = None, run_options: dict | None = None, keep_run_options: bool = False,
                        to_reviewers: bool = False) -> bool:
    """Move a document to `to` if its current state allows it; return whether this call did it.

    `claim` fences a worker's writes: the move happens only while the document is still held by that claim
    (its `attempts` value), so a worker whose document was taken back cannot end it. `where` adds a condition
    checked in the same update. Besides the state's own columns, a move sets only what it is given: the
    error (None: unchanged), the claiming task's id, the queued run's options (reset unless given or kept),
    and `to_reviewers`: unreviewed and unclaimed, a document the reviewers' queue takes afresh.
    """
    now = timezone.now()
    extra: dict = {}
    if error_code is not None:
        extra["error_code"] = error_code[:40]
    if error_message is not None:
        extra["error_message"] = error_message
    if to_reviewers:
        extra.update(_UNREVIEWED_UNCLAIMED)
    if to == Status.PROCESSING:
        extra.update(processing_started_at=now, heartbeat_at=now, attempts=F("attempts") + 1)
        if task_id is not None:
            extra["task_id"] = task_id
    if to in (Status.PASSED, Status.FLAGGED, Status.FAILED):
        # the end of processing; a later move (an audit sending a passed document to the queue) keeps it
        extra["processed_at"] = Case(When(status=Status.PROCESSING.value, then=Value(now)), default=F("processed_at"))
    if to == Status.QUEUED:
        extra.update(task_id="", dispatched_at=None)
        if not keep_run_options:
            extra["run_options"] = run_options or {}
    qs = Document.objects.filter(pk=document_id, status__in=[s.value for s in sources_for(to)])
    if claim is not None:
        qs = qs.filter(attempts=claim)
    if where is not None:
        qs = qs.filter(where)
    with transaction.atomic(savepoint=False):  # inside the caller's transaction when there is one
        updated = qs.update(status=to.value, status_changed_at=now, version=F("version") + 1, **extra)
        if updated == 1:
            document_moved.send(sender=Document, document_id=document_id, to=to)
    return updated == 1


def document_review_transition(*, document_id: int, to: ReviewStatus, expected_version: int | None = None,
                               release_claim: bool = False) -> bool:
    """Move a flagged document's review to `to` (at `expected_version`), releasing its claim if asked."""
    qs = Document.objects.filter(pk=document_id, review_status__in=[s.value for s in review_sources_for(to)])
    if expected_version is not None:
        qs = qs.filter(version=expected_version)
    claim = {"claimed_by": None, "claimed_at": None} if release_claim else {}
    updated = qs.update(review_status=to.value, version=F("version") + 1, **claim)
    return updated == 1


@transaction.atomic
def document_fail(*, document_id: int, code: str, message: str, claim: int | None = None) -> bool:
    """A clear, retryable error on one document. Allowed from queued or processing (fenced by `claim`)."""
    return document_transition(document_id=document_id, to=Status.FAILED, claim=claim, error_code=code,
                               error_message=message)


def document_claim_for_processing(*, document_id: int, task_id: str = "") -> int | None:
    """Claim a queued document for a task; return the claim's fencing token (the new `attempts`), or None.

    The same task delivered again (the broker redelivers an unacknowledged message when it thinks its
    worker is gone) may take the document back from `processing`, but only once the first worker's lease
    has run out: a worker that is alive and renewing keeps its document, however long it takes.
    """
    if document_transition(document_id=document_id, to=Status.PROCESSING, task_id=task_id, error_code="",
                           error_message=""):
        return Document.objects.values_list("attempts", flat=True).get(pk=document_id)
    if not task_id:
        return None
    now = timezone.now()
    with transaction.atomic():
        taken = Document.objects.filter(
            lease_expired(now=now), pk=document_id, status=Status.PROCESSING.value, task_id=task_id,
        ).update(processing_started_at=now, heartbeat_at=now, attempts=F("attempts") + 1, version=F("version") + 1)
        if not taken:
            return None
        document_close_orphaned_runs(document_id=document_id, now=now)
        return Document.objects.values_list("attempts", flat=True).get(pk=document_id)


def lease_expired(*, now) -> Q:
    """Documents whose worker stopped renewing its lease (older rows without a heartbeat: by start time)."""
    cutoff = now - lease_duration()
    return Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True, processing_started_at__lt=cutoff)


# Runs closed because their worker lost the document start with this: they are not a second processing.
ABANDONED = "Abandoned: "
ORPHANED = ABANDONED + "the worker running this extraction stopped (killed, or its lease ran out); " \
    "the document was taken back."


def document_close_orphaned_runs(*, document_id: int, now=None, message: str = ORPHANED,
                                 extraction_id: int | None = None) -> None:
    """Close the runs a worker that lost the document left open (or only `extraction_id`): the extraction
    and its unfinished rounds, kept on record as errors."""
    from extraction.models import Extraction, Round

    now = now or timezone.now()
    open_runs = Extraction.objects.filter(document_id=document_id, finished_at__isnull=True)
    if extraction_id is not None:
        open_runs = open_runs.filter(pk=extraction_id)
    Round.objects.filter(extraction__in=open_runs, state=Round.State.STARTED).update(
        state=Round.State.FAILED, error=message, finished_at=now)
    open_runs.update(stop_reason="error", error=message, finished_at=now)
