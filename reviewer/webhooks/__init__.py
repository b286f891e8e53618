"""Webhooks (issue 29): admins register endpoints; document and batch events are recorded with the state change
that caused them (an outbox) and delivered by the worker, signed the Standard Webhooks way, retried for a day."""
