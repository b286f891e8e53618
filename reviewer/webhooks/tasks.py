"""The delivery task: thin, one attempt per message."""

from __future__ import annotations

from celery import shared_task


# No Celery retries and early acknowledgement: the retry policy is the database's (services.delivery_attempt
# schedules the next attempt on the backoff of backoff.py, the sweeper sends its message when it is due), so a
# message lost with a killed worker costs nothing but the claim's lease. The sender's own timeout ends an
# attempt; the time limits sent with each message are only a backstop.
@shared_task(name="reviewer.webhooks.tasks.deliver", max_retries=0, ignore_result=True)
def deliver(delivery_id: int) -> str:
    from reviewer.webhooks.services import delivery_attempt

    return delivery_attempt(delivery_id=delivery_id)
