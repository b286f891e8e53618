"""A worker's lease on the document it processes: renewed while it works, checked by the reaper.

The claim (extraction.pipeline.transitions.document_claim_for_processing) returns a fencing token, the
document's `attempts` after the claim. While the work runs, a thread renews `heartbeat_at` with a
conditional update on that token; the reaper takes back only documents whose heartbeat is older than
PROCESSING_LEASE_SECONDS. When a renewal matches no row, someone else holds the document now: the lease
is lost, the callbacks registered with `on_lost` run (closing the LLM connection at once) and the worker's
next check raises ClaimLost. The worker checks at every step (each page it renders, reads or stores, each
round of the loop), and a check asks the database itself: the renewing thread looks only every quarter of
the lease, and a worker whose document another run took stops at its next step, not that much later.
Every final write of the run is fenced by the same token, so a worker that lost its claim can never finish
a document twice.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta

from django.conf import settings
from django.db import DatabaseError, close_old_connections, connection
from django.utils import timezone

from extraction.models import Document
from extraction.states import Status

log = logging.getLogger(__name__)


class ClaimLost(Exception):
    """The document was taken back (its lease ran out); this worker must stop and write nothing more."""


def lease_duration() -> timedelta:
    return timedelta(seconds=settings.PROCESSING_LEASE_SECONDS)


def lease_renew(*, document_id: int, claim: int) -> bool:
    """Renew the heartbeat of this claim; False when the document is no longer ours."""
    return Document.objects.filter(pk=document_id, status=Status.PROCESSING.value, attempts=claim).update(
        heartbeat_at=timezone.now()) == 1


def lease_held(*, document_id: int, claim: int) -> bool:
    """Whether the document is still processing under this claim (no other run took it since)."""
    return Document.objects.filter(pk=document_id, status=Status.PROCESSING.value, attempts=claim).exists()


class Lease:
    def __init__(self, *, document_id: int, claim: int):
        self.document_id = document_id
        self.claim = claim
        self.extraction_id: int | None = None  # the run this claim started, closed if the claim is lost
        self._lost = threading.Event()
        self._callbacks: list[Callable[[], None]] = []
        self._lock = threading.Lock()

    @property
    def lost(self) -> bool:
        return self._lost.is_set()

    def check(self) -> None:
        """Raise ClaimLost when the document is no longer this claim's. Called between the steps of the work,
        from the working thread (it queries on that thread's connection)."""
        if not self._lost.is_set():
            try:
                held = lease_held(document_id=self.document_id, claim=self.claim)
            except DatabaseError:  # the database is away: the renewals decide, as they do for a stalled worker
                log.warning("document %s: could not check the lease", self.document_id, exc_info=True)
                held = True
            if not held:
                self.mark_lost()
        if self._lost.is_set():
            raise ClaimLost(f"document {self.document_id}: the claim {self.claim} was taken back")

    def on_lost(self, callback: Callable[[], None]) -> None:
        with self._lock:
            self._callbacks.append(callback)
            lost = self._lost.is_set()
        if lost:
            callback()

    def mark_lost(self) -> None:
        with self._lock:
            if self._lost.is_set():
                return
            self._lost.set()
            callbacks = list(self._callbacks)
        log.warning("document %s: lease lost (claim %s), stopping its work", self.document_id, self.claim)
        for callback in callbacks:
            try:
                callback()
            except Exception:  # a callback only hurries the stop; the checks still stop the work
                log.exception("document %s: a lease-lost callback failed", self.document_id)


@contextmanager
def document_lease(*, document_id: int, claim: int) -> Iterator[Lease]:
    """Hold the lease while the block runs: a thread renews it every quarter of PROCESSING_LEASE_SECONDS."""
    lease = Lease(document_id=document_id, claim=claim)
    if connection.in_atomic_block:
        # The claim is not committed (a caller's transaction: a test, an eager task): no other process can
        # see it or take it back, and a renewal from another connection could not see it either.
        yield lease
        return
    stop = threading.Event()
    interval = max(0.2, settings.PROCESSING_LEASE_SECONDS / 4)

    def renew_until_stopped() -> None:
        try:
            while not stop.wait(interval):
                try:
                    if not lease_renew(document_id=document_id, claim=claim):
                        lease.mark_lost()
                        return
                except Exception:  # the database is away: try again; the lease runs out if it stays away
                    log.warning("document %s: could not renew the lease", document_id, exc_info=True)
                    close_old_connections()
        finally:
            connection.close()  # this thread's own connection

    thread = threading.Thread(target=renew_until_stopped, name=f"lease-{document_id}", daemon=True)
    thread.start()
    try:
        yield lease
    finally:
        stop.set()
        thread.join(timeout=30)
