"""Every worker sends the messages of due webhook deliveries (services.deliveries_queue_due) every
WEBHOOK_SWEEP_SECONDS, from a thread of its main process: retries come due, and what a killed worker or a lost
message left behind is sent again.

A thread like extraction's reaper (extraction/pipeline/reaper.py), not a call inside it: extraction may not import
reviewer. Not a beat task nor long Celery countdowns: Redis hands a countdown longer than its visibility timeout
out again, and the database already knows what is due. Several workers sweeping at once send a message twice at
worst, and the second finds the delivery claimed or not due.
"""

from __future__ import annotations

import logging
import threading

from celery.signals import worker_ready, worker_shutdown
from django.conf import settings
from django.db import connection

log = logging.getLogger(__name__)
_stop = threading.Event()


def _sweep_forever() -> None:
    from reviewer.webhooks.services import deliveries_queue_due

    while not _stop.wait(settings.WEBHOOK_SWEEP_SECONDS):
        try:
            sent = deliveries_queue_due()
            if sent:
                log.info("webhooks: %d due delivery(ies) sent to the worker", sent)
        except Exception:  # the database or the broker is away: next time
            log.warning("webhooks: this sweep failed", exc_info=True)
        finally:
            connection.close()  # never hold a connection a forked pool process could inherit


@worker_ready.connect
def sweeper_start(**_kwargs) -> None:
    _stop.clear()
    threading.Thread(target=_sweep_forever, name="proofdesk-webhooks", daemon=True).start()


@worker_shutdown.connect
def sweeper_stop(**_kwargs) -> None:
    _stop.set()
