"""Logging filters named by settings.LOGGING."""

from __future__ import annotations

import logging


class ClientErrorsOneLine(logging.Filter):
    """A refused request (4xx: a 403 for a role, a body that cannot be read) is expected behaviour: django.request
    logs it as its one line, without the traceback of the exception that answered it."""

    def filter(self, record: logging.LogRecord) -> bool:
        if 400 <= getattr(record, "status_code", 0) < 500:
            record.exc_info = None
            record.exc_text = None
        return True
