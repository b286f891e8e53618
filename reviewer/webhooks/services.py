"""Every write of the webhooks: endpoints, events recorded with the change that caused them, delivery attempts.

The outbox: an event and its deliveries are rows written in the transaction of the state change they report,
and a message is sent to the broker only once that commits (transaction.on_commit). The database says when
each delivery is due (`next_attempt_at`); the broker only carries "try delivery N now". A message lost or
delivered twice changes nothing: the sweeper (sweeper.py) sends again what is due and has no message, and an
attempt starts only by claiming the delivery with a conditional update, so two workers never send one attempt.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from datetime import timedelta
from urllib.parse import urlsplit

from celery import signature
from django.conf import settings
from django.db import DatabaseError, transaction
from django.db.models import F, Max, Q
from django.urls import reverse
from django.utils import timezone

from extraction.models import Batch, Document, Extraction
from extraction.pipeline.dispatch import PUBLISH_RETRY, broker_queue_size
from extraction.states import Status
from reviewer.webhooks import backoff, sender, signing, urlguard
from reviewer.webhooks.events import BATCH_FINISHED, DOCUMENT_REVIEWED, EVENT_TYPES, STATUS_EVENTS
from reviewer.webhooks.models import Attempt, Delivery, Endpoint, Event

log = logging.getLogger(__name__)

DELIVER = "reviewer.webhooks.tasks.deliver"  # the task's registered name: the task imports us, not the reverse
INTERRUPTED = "interrupted: the worker stopped during this attempt"
_UNFINISHED = (Status.QUEUED.value, Status.PROCESSING.value)


class WebhookError(Exception):
    """What an admin asked cannot be done; the message says why."""


# --- endpoints -----------------------------------------------------------------------------------------------


def url_check(url: str) -> urlguard.Target:
    return urlguard.check(url, allow_private=settings.WEBHOOK_ALLOW_PRIVATE_URLS, resolver=_resolve_bounded)


def endpoint_create(*, url: str, events: list[str], user, description: str = "", team=None) -> Endpoint:
    """An endpoint of `team` (the default team without one): it hears only that team's events."""
    chosen = [e for e in EVENT_TYPES if e in set(events)]
    if not chosen or len(chosen) != len(set(events)):
        raise WebhookError("Choose at least one of the events listed.")
    try:
        url_check(url)
    except urlguard.UnsafeUrl as exc:
        raise WebhookError(str(exc)) from None
    return Endpoint.objects.create(url=url.strip(), events=chosen, description=description.strip()[:200],
                                   secret=signing.new_secret(), created_by=user,
                                   **({"team": team} if team is not None else {}))


def endpoint_set_active(*, endpoint_id: int, active: bool) -> bool:
    """Disable or enable an endpoint. While disabled nothing is sent to it; its pending deliveries wait (and
    fail for good once their day is over)."""
    return Endpoint.objects.filter(pk=endpoint_id, active=not active).update(active=active) == 1


def endpoint_delete(*, endpoint_id: int) -> bool:
    """The endpoint goes with its deliveries and attempts; an attempt in flight ends unrecorded."""
    deleted, _ = Endpoint.objects.filter(pk=endpoint_id).delete()
    return bool(deleted)


# --- events (the outbox) -------------------------------------------------------------------------------------


def _subscribers(event_type: str, endpoints: list[Endpoint] | None = None, *,
                 team_id: int | None = None) -> list[Endpoint]:
    """The active endpoints that want `event_type`; with `team_id`, only that team's: an endpoint hears only
    its own team's events."""
    # the events list is filtered here, not in SQL: JSON containment is not portable (SQLite) and there are few
    endpoints = endpoints if endpoints is not None else list(Endpoint.objects.filter(active=True))
    return [e for e in endpoints if event_type in e.events and (team_id is None or e.team_id == team_id)]


def event_record(*, event_type: str, data: dict, endpoints: list[Endpoint] | None = None,
                 dedupe_key: str | None = None) -> Event | None:
    """Record an event and one delivery per active endpoint subscribed to it, in the caller's transaction; send
    them once it commits. None when no endpoint wants it (nothing is stored) or `dedupe_key` was recorded."""
    targets = _subscribers(event_type, endpoints)
    if not targets:
        return None
    if dedupe_key is not None and Event.objects.filter(dedupe_key=dedupe_key).exists():
        return None
    now = timezone.now()
    event = Event.objects.create(type=event_type, created_at=now, dedupe_key=dedupe_key,
                                 payload={"type": event_type, "timestamp": now.isoformat(), "data": data})
    deliveries = Delivery.objects.bulk_create(
        [Delivery(event=event, endpoint=e, next_attempt_at=now, created_at=now) for e in targets])
    ids = [d.pk for d in deliveries]
    transaction.on_commit(lambda: deliveries_queue(ids))
    return event


def _link(path: str) -> str:
    return settings.WEBHOOK_SITE_URL.rstrip("/") + path


def document_data(document: Document) -> dict:
    current = Extraction.objects.current_for(document.pk)
    return {"document": {
        "id": document.pk, "batch": document.batch_id, "filename": document.filename, "status": document.status,
        "review_status": document.review_status, "stop_reason": current.stop_reason if current else None,
        "error_code": document.error_code or None, "url": _link(reverse("desk_document", args=[document.pk])),
    }}


def on_document_moved(sender=None, *, document_id: int, to: Status, **_kwargs) -> None:
    """extraction's `document_moved` signal, inside the move's transaction: a document that reached passed,
    flagged or failed is reported, and so is its batch when this move ended the batch's last processing."""
    if Status(to).value not in STATUS_EVENTS:
        return
    endpoints = list(Endpoint.objects.filter(active=True))
    event_type = STATUS_EVENTS[Status(to).value]
    wants_document, wants_batch = _subscribers(event_type, endpoints), _subscribers(BATCH_FINISHED, endpoints)
    if not wants_document and not wants_batch:
        return  # the usual case: one query, nothing written
    document = Document.objects.select_related("batch").get(pk=document_id)
    if document.batch.trial:
        return  # a document type's try-it run on the editor, not a document anyone sent
    team = document.batch.team_id
    wants_document = _subscribers(event_type, wants_document, team_id=team)
    wants_batch = _subscribers(BATCH_FINISHED, wants_batch, team_id=team)
    if wants_document:
        event_record(event_type=event_type, data=document_data(document), endpoints=wants_document)
    # Passed -> flagged (a supervisor's send-back) is the only move between final states: it ends no processing.
    # A move from processing sets processed_at to the move's own time (services/transitions.py).
    ended = to != Status.FLAGGED or document.processed_at == document.status_changed_at
    if wants_batch and ended:
        batch_finished_check(batch_id=document.batch_id, endpoints=wants_batch)


def batch_finished_check(*, batch_id: int, endpoints: list[Endpoint] | None = None) -> Event | None:
    """batch.finished, once per run of the batch: when no document of it is queued or processing any more.

    Two workers ending a batch's last two documents at once would each see the other's still processing (each
    reads before the other commits) and neither would report it: the batch row's lock orders them, and the
    second reads after the first committed. The dedupe key (the run's last end) keeps it once per run; a re-run
    or a retried document finishes the batch again, a new event.
    """
    batch = Batch.objects.select_for_update().filter(pk=batch_id).first()
    if batch is None or Document.objects.filter(batch_id=batch_id, status__in=_UNFINISHED).exists():
        return None
    endpoints = _subscribers(BATCH_FINISHED, endpoints, team_id=batch.team_id)
    if not endpoints:
        return None
    docs = Document.objects.filter(batch_id=batch_id)
    last_end = docs.aggregate(last=Max("processed_at"))["last"]
    counts = {s: 0 for s in STATUS_EVENTS}
    for status in docs.values_list("status", flat=True):
        counts[status] = counts.get(status, 0) + 1
    data = {"batch": {"id": batch.pk, "name": batch.name, "doctype": batch.doctype, "documents": sum(counts.values()),
                      **counts, "url": _link(reverse("batch_detail", args=[batch.pk]))}}
    key = f"{BATCH_FINISHED}:{batch.pk}:{last_end.isoformat() if last_end else 'none'}"
    return event_record(event_type=BATCH_FINISHED, data=data, endpoints=endpoints, dedupe_key=key)


def document_reviewed(*, document_id: int) -> Event | None:
    """A reviewer's decision (verified, corrected, rejected), in the decision's transaction."""
    targets = _subscribers(DOCUMENT_REVIEWED)
    if not targets:
        return None
    document = Document.objects.select_related("batch").get(pk=document_id)
    targets = _subscribers(DOCUMENT_REVIEWED, targets, team_id=document.batch.team_id)
    return event_record(event_type=DOCUMENT_REVIEWED, data=document_data(document), endpoints=targets)


# --- sending -------------------------------------------------------------------------------------------------


def deliveries_queue(delivery_ids: list[int]) -> list[int]:
    """One message per delivery. Marked queued before the send, so the sweeper does not send it again; a send
    the broker refuses is unmarked and the sweeper sends it later. Returns the ids sent."""
    if not delivery_ids:
        return []
    now = timezone.now()
    Delivery.objects.filter(pk__in=delivery_ids).update(queued_at=now)
    sent: list[int] = []
    limit = settings.WEBHOOK_TIMEOUT_SECONDS
    try:
        for delivery_id in delivery_ids:
            # time limits only as a backstop: the sender's own watchdog ends an attempt after the timeout
            signature(DELIVER, args=(delivery_id,)).apply_async(
                queue=settings.WEBHOOK_QUEUE, retry_policy=PUBLISH_RETRY, soft_time_limit=limit * 3 + 10,
                time_limit=limit * 3 + 20)
            sent.append(delivery_id)
    except Exception as exc:  # the broker is away
        log.warning("the broker did not take webhook delivery %s (%s: %s); the sweeper sends it later",
                    delivery_ids[len(sent)], type(exc).__name__, exc)
    finally:
        unsent = [i for i in delivery_ids if i not in set(sent)]
        if unsent:
            Delivery.objects.filter(pk__in=unsent, queued_at=now).update(queued_at=None)
    return sent


def _unclaimed(now) -> Q:
    return Q(claimed_until__isnull=True) | Q(claimed_until__lt=now)


def _due(now) -> Q:
    # The limit on attempts is in the claim itself: whatever fails after a send, no delivery is sent more often.
    # An admin's replay is one attempt past it (its claim clears the flag, so a replay sends once at most).
    return (Q(status=Delivery.Status.PENDING, next_attempt_at__lte=now, endpoint__active=True)
            & (Q(attempts__lt=backoff.MAX_ATTEMPTS) | Q(replay=True)) & _unclaimed(now))


def deliveries_queue_due(*, now=None, limit: int = 500) -> int:
    """The sweep: send a message for every due delivery that has none. A message that reached the broker long
    ago while the broker's queue is empty was lost (a broker restarted, a worker killed holding it): sent again.
    A worker killed mid-attempt leaves its claim, which runs out, and the delivery is due again."""
    now = now or timezone.now()
    # A delivery whose last attempt was sent but never recorded (its worker died, its recording failed) and
    # that has no attempt left ends here, where the claim would otherwise leave it pending for ever.
    Delivery.objects.filter(_unclaimed(now), status=Delivery.Status.PENDING, attempts__gte=backoff.MAX_ATTEMPTS,
                            replay=False).update(status=Delivery.Status.FAILED, claimed_until=None,
                                                 next_attempt_at=None)
    due = Delivery.objects.filter(_due(now))
    without_message = Q(queued_at__isnull=True)
    lost_before = now - timedelta(seconds=settings.DISPATCH_LOST_AFTER_SECONDS)
    if (due.filter(queued_at__lt=lost_before).exists()
            and broker_queue_size(queue=settings.WEBHOOK_QUEUE) == 0):
        without_message |= Q(queued_at__lt=lost_before)
    ids = list(due.filter(without_message).order_by("next_attempt_at", "id").values_list("id", flat=True)[:limit])
    return len(deliveries_queue(ids))


def _claim_lease() -> timedelta:
    """How long an attempt holds its delivery: past the sender's own deadline, with room for the writes."""
    return timedelta(seconds=settings.WEBHOOK_TIMEOUT_SECONDS * 2 + 5)


def delivery_attempt(*, delivery_id: int) -> str:
    """Claim a due delivery, send it once, record the attempt and schedule the next one or end it. Returns what
    happened, for logs ("not due": another message already did it, or it is not due yet)."""
    now = timezone.now()
    with transaction.atomic():
        claimed = Delivery.objects.filter(_due(now), pk=delivery_id).update(
            attempts=F("attempts") + 1, claimed_until=now + _claim_lease(), queued_at=None)
        if not claimed:
            return "not due"
        delivery = Delivery.objects.select_related("event", "endpoint").get(pk=delivery_id)
        Attempt.objects.filter(delivery=delivery, finished_at__isnull=True).update(finished_at=now, error=INTERRUPTED)
        attempt = Attempt.objects.create(delivery=delivery, number=delivery.attempts, replay=delivery.replay,
                                         started_at=now)
        if delivery.replay:
            Delivery.objects.filter(pk=delivery_id).update(replay=False)
    outcome = _send(delivery)  # outside any transaction: nothing is held while the receiver answers
    return _finish(delivery=delivery, attempt=attempt, outcome=outcome)


def event_body(event: Event) -> bytes:
    return json.dumps(event.payload, separators=(",", ":"), sort_keys=True).encode()


def _send(delivery: Delivery) -> sender.Outcome:
    endpoint, event = delivery.endpoint, delivery.event
    try:
        target = url_check(endpoint.url)  # again at send time: DNS may have changed since the endpoint was saved
    except urlguard.UnsafeUrl as exc:
        return sender.Outcome(status_code=None, error=f"refused: {exc}"[:500], timed_out=False, duration_ms=0,
                              excerpt="")
    parts = urlsplit(endpoint.url.strip())
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    body = event_body(event)
    headers = signing.signed_headers(secret=endpoint.secret, msg_id=event.id, timestamp=int(time.time()), body=body)
    return sender.post(target=target, path=path, body=body, headers=headers,
                       timeout=settings.WEBHOOK_TIMEOUT_SECONDS)


def _attempt_record(*, attempt: Attempt, outcome: sender.Outcome, now) -> None:
    """What the receiver answered, on its attempt. What it sent is only shown, so text the database refuses
    is recorded without its answer rather than not at all: the delivery's state must follow."""
    fields = {"finished_at": now, "status_code": outcome.status_code, "timed_out": outcome.timed_out,
              "duration_ms": outcome.duration_ms}
    try:
        with transaction.atomic():
            Attempt.objects.filter(pk=attempt.pk).update(**fields, error=sender.storable(outcome.error[:500]),
                                                         response_excerpt=sender.storable(outcome.excerpt))
    except (DatabaseError, ValueError) as exc:  # ValueError: text psycopg could not even encode
        log.warning("webhook attempt %s: the receiver's answer could not be stored (%s)", attempt.pk, exc)
        Attempt.objects.filter(pk=attempt.pk).update(**fields, error="the receiver's answer could not be stored",
                                                     response_excerpt="")


def _finish(*, delivery: Delivery, attempt: Attempt, outcome: sender.Outcome) -> str:
    now = timezone.now()
    with transaction.atomic():
        _attempt_record(attempt=attempt, outcome=outcome, now=now)
        # fenced by the claim: an attempt that outlived its claim (another took the delivery) changes nothing
        mine = Delivery.objects.filter(pk=delivery.pk, status=Delivery.Status.PENDING, attempts=attempt.number)
        if outcome.ok:
            mine.update(status=Delivery.Status.DELIVERED, delivered_at=now, claimed_until=None, next_attempt_at=None)
            return "delivered"
        wait = backoff.next_attempt_in(attempt=attempt.number,
                                       since_event=(now - delivery.event.created_at).total_seconds(),
                                       scale=settings.WEBHOOK_BACKOFF_SCALE)
        if wait is None:
            mine.update(status=Delivery.Status.FAILED, claimed_until=None, next_attempt_at=None)
            return "failed for good"
        # no message waits for the next attempt (one sent during this one found it claimed): the sweep sends it
        mine.update(next_attempt_at=now + timedelta(seconds=wait), claimed_until=None, queued_at=None)
        return "will retry"


def delivery_replay(*, delivery_id: int, endpoint_id: int | None = None) -> bool:
    """An admin's replay: one more attempt now, whatever the delivery's state (a delivered one is sent again,
    with the same webhook-id). Refused while an attempt is in flight."""
    now = timezone.now()
    qs = Delivery.objects.filter(Q(claimed_until__isnull=True) | Q(claimed_until__lt=now), pk=delivery_id)
    if endpoint_id is not None:
        qs = qs.filter(endpoint_id=endpoint_id)
    with transaction.atomic():
        if not qs.update(status=Delivery.Status.PENDING, next_attempt_at=now, replay=True, queued_at=None):
            return False
        transaction.on_commit(lambda: deliveries_queue([delivery_id]))
    return True


# --- a DNS lookup bounded in time ----------------------------------------------------------------------------


def _resolve_bounded(host: str, port: int) -> list[str]:
    """getaddrinfo has no timeout of its own: a stalled resolver must not hold the worker past the timeout. The
    lookup runs in a daemon thread (left to finish on its own if it overruns), one per call: fork-safe."""
    found: dict = {}

    def lookup() -> None:
        try:
            found["addresses"] = urlguard.resolve(host, port)
        except Exception as exc:  # handed to the caller below
            found["error"] = exc

    thread = threading.Thread(target=lookup, name="webhooks-dns", daemon=True)
    thread.start()
    thread.join(settings.WEBHOOK_TIMEOUT_SECONDS)
    if "error" in found:
        raise found["error"]
    if "addresses" not in found:
        raise OSError(f"no DNS answer within {settings.WEBHOOK_TIMEOUT_SECONDS} s")
    return found["addresses"]
