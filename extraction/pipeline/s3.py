"""The S3 store as django-storages serves it, behind a circuit breaker: once a call could not reach the
store (refused, or no answer within the client's bounds), every call in this process fails at once for
STORAGE_BREAKER_SECONDS with StoreUnavailable, the fault the web answers with 503 and the worker turns into
a retryable document error. Without it, each request to a hung store holds a web worker for its whole bound."""

from __future__ import annotations

import logging
from typing import Any

from botocore.exceptions import BotoCoreError, HTTPClientError
from django.conf import settings
from storages.backends.s3 import S3Storage

from extraction.common.breaker import Breaker

log = logging.getLogger(__name__)

__all__ = ["GuardedS3Storage", "StoreUnavailable", "store_breaker"]


class StoreUnavailable(BotoCoreError):
    fmt = "The file store failed a moment ago; not called again for {seconds:g} s"


_breaker: Breaker | None = None


def store_breaker() -> Breaker:
    """This process's breaker for the store (one per process: each learns of an outage on its own)."""
    global _breaker
    if _breaker is None or _breaker.seconds != settings.STORAGE_BREAKER_SECONDS:
        _breaker = Breaker(seconds=settings.STORAGE_BREAKER_SECONDS)
    return _breaker


def _before_send(**_: Any) -> None:
    breaker = store_breaker()
    if not breaker.closed():
        raise StoreUnavailable(seconds=breaker.seconds)


def _response_received(*, context: dict, exception: Exception | None = None, response_dict: dict | None = None,
                       **_: Any) -> None:
    # A call that could not reach the store, or that the store said it could not serve, on its last attempt
    # opens the breaker (an attempt the client will make again is not yet an outage); an answer closes it.
    status = (response_dict or {}).get("status_code", 0)
    if not (isinstance(exception, HTTPClientError) or status in (500, 502, 503, 504)):
        if exception is None and status:
            store_breaker().reset()
        return
    attempts = (context["client_config"].retries or {}).get("total_max_attempts", 1)
    if context.get("retries", {}).get("attempt", 1) >= attempts and store_breaker().trip():
        log.warning("the file store failed (%s); calls fail at once for %g s", exception or status,
                    store_breaker().seconds)


class GuardedS3Storage(S3Storage):
    @property
    def connection(self):
        resource = super().connection
        events = resource.meta.client.meta.events
        if not getattr(resource, "_proofdesk_guarded", False):
            events.register("before-send.s3", _before_send, unique_id="proofdesk-breaker-before")
            events.register("response-received.s3", _response_received, unique_id="proofdesk-breaker-after")
            resource._proofdesk_guarded = True
        return resource
