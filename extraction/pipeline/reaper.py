"""Every worker runs the reaper (extraction.pipeline.process.documents_requeue_stuck) every
REAPER_INTERVAL_SECONDS, in a thread of its main process.

Not a beat task: a task would wait in the queue behind the very documents whose lost messages and expired
leases it is meant to find, and would need a beat process to run at all. A thread beside the consumer runs
on time whatever the queue holds, in every deployment that has a worker (the demo's included). Several
workers reaping at once is harmless: every move it makes is a guarded update.
"""

from __future__ import annotations

import logging
import threading

from celery.signals import worker_ready, worker_shutdown
from django.conf import settings
from django.db import connection

log = logging.getLogger(__name__)
_stop = threading.Event()


def _reap_forever() -> None:
    from extraction.pipeline.process import documents_requeue_stuck

    while not _stop.wait(settings.REAPER_INTERVAL_SECONDS):
        try:
            moved = documents_requeue_stuck()
            if moved:
                log.info("reaper: %d document(s) taken back or sent again", moved)
        except Exception:  # the database or the broker is away: try again next time
            log.warning("reaper: this run failed", exc_info=True)
        finally:
            connection.close()  # never hold a connection a forked pool process could inherit


@worker_ready.connect
def reaper_start(**_kwargs) -> None:
    _stop.clear()
    threading.Thread(target=_reap_forever, name="proofdesk-reaper", daemon=True).start()


@worker_shutdown.connect
def reaper_stop(**_kwargs) -> None:
    _stop.set()
