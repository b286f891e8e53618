"""Requests per token: API_RATE_LIMIT in each window of API_RATE_WINDOW_SECONDS, counted in the cache all
processes share (Redis in production: one atomic increment per request); over the limit, 429 with
Retry-After, the seconds left in the window.

reviewer/users/throttle.py counts login attempts in the database with the login's own window; an API call is far
more frequent than a login, so its counter lives in the cache instead."""

from __future__ import annotations

import threading
import time

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest
from ninja.throttling import BaseThrottle

_waits = threading.local()  # ninja asks wait() of the shared throttle right after allow_request()


class TokenRateThrottle(BaseThrottle):
    def allow_request(self, request: HttpRequest) -> bool:
        token = getattr(request, "auth", None)
        if token is None:
            return True  # no token: authentication has refused the request already
        window = settings.API_RATE_WINDOW_SECONDS
        now = time.time()
        start = int(now // window) * window
        key = f"api-rate:{token.pk}:{start}"
        cache.add(key, 0, timeout=window + 5)
        try:
            count = cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.add(key, 1, timeout=window + 5)
            count = 1
        _waits.seconds = max(1.0, start + window - now)
        return count <= settings.API_RATE_LIMIT

    def wait(self) -> float | None:
        return getattr(_waits, "seconds", None)
