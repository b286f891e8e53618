"""Handing documents to the broker, and sending again what never got there or what the broker lost.

`Document.dispatched_at` records when a queued document's message was accepted by the broker. A queued
document without it was never sent (the broker was down at upload, or the process died between the commit
and the send); one whose broker queue is empty long after it was sent lost its message (a broker restarted
without persistence). The reaper sends both again. A duplicate message is harmless: only one delivery can
claim a document.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from celery import signature
from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from extraction.models import Document
from extraction.states import Status

log = logging.getLogger(__name__)

PROCESS_DOCUMENT = "extraction.tasks.process_document"  # the task's registered name

# A send is attempted when the transaction that queued the document commits; give it this long.
UNSENT_GRACE = timedelta(seconds=10)
# One try, then the reaper: a broker that refuses, or does not answer within the transport's socket timeout
# (settings.CELERY_BROKER_TRANSPORT_OPTIONS), costs the upload one timeout, not one per retry and reconnection.
# A connection the broker dropped (a restart) is remade by the transport within that one try.
PUBLISH_RETRY = {"max_retries": 0}


def documents_queue(document_ids: list[int]) -> None:
    """Send the documents' messages once the rows are committed, so a worker never looks for a row not yet
    there. A send the broker refuses leaves the document queued and unsent; the reaper sends it later."""
    if not document_ids:
        return
    ids = list(document_ids)
    transaction.on_commit(lambda: documents_dispatch(ids))


def documents_dispatch(document_ids: list[int]) -> list[int]:
    """Send one message per document and record the send. Stops at the first broker fault: the rest stay
    unsent and the reaper sends them once the broker answers. Returns the ids that were sent."""
    sent: list[int] = []
    try:
        for document_id in document_ids:
            # By name: the task calls the services, so the services do not import it back.
            signature(PROCESS_DOCUMENT, args=(document_id,)).apply_async(retry_policy=PUBLISH_RETRY)
            sent.append(document_id)
    except Exception as exc:  # kombu's OperationalError, socket errors, timeouts: the broker is away
        log.warning("the broker did not take document %s (%s: %s); %d document(s) wait for the reaper",
                    document_ids[len(sent)], type(exc).__name__, exc, len(document_ids) - len(sent))
    finally:
        if sent:
            Document.objects.filter(pk__in=sent, status=Status.QUEUED.value).update(dispatched_at=timezone.now())
    return sent


def broker_queue_size(*, queue: str | None = None) -> int | None:
    """Messages waiting in `queue` (the documents' by default), or None when the broker cannot say (or is away)."""
    from celery import current_app
    from kombu.exceptions import ChannelError

    try:
        with current_app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1)
            try:
                return conn.default_channel.queue_declare(
                    queue=queue or settings.CELERY_TASK_DEFAULT_QUEUE, passive=True).message_count
            except ChannelError:
                return 0  # the queue does not exist: nothing waits in it
    except Exception as exc:
        log.warning("could not read the broker's queue (%s: %s)", type(exc).__name__, exc)
        return None


def documents_dispatch_pending(*, now=None) -> int:
    """Send again the queued documents whose message never reached the broker or was lost by it."""
    now = now or timezone.now()
    queued = Document.objects.filter(status=Status.QUEUED.value)
    pending = Q(dispatched_at__isnull=True, status_changed_at__lt=now - UNSENT_GRACE)
    if queued.filter(dispatched_at__lt=now - timedelta(seconds=settings.DISPATCH_LOST_AFTER_SECONDS)).exists() \
            and broker_queue_size() == 0:
        # Sent long ago, yet nothing waits in the queue: the broker lost them (a message being worked on is
        # claimed, so its document is no longer queued). Sending a few twice costs only a no-op delivery.
        pending |= Q(dispatched_at__lt=now - timedelta(seconds=settings.DISPATCH_LOST_AFTER_SECONDS))
    ids = list(queued.filter(pending).order_by("id").values_list("id", flat=True))
    if not ids:
        return 0
    sent = documents_dispatch(ids)
    log.info("sent %d queued document(s) again (of %d whose message was missing)", len(sent), len(ids))
    return len(sent)
