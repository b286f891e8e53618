"""A circuit breaker (pure): after a service outside failed, calls to it fail at once for a few seconds
instead of each waiting out its own timeout, so a store or cache that is down cannot hold every worker."""

from __future__ import annotations

import threading
import time

__all__ = ["Breaker"]


class Breaker:
    """Open for `seconds` after `trip()`; `closed()` says whether a call may be tried. A success closes it."""

    def __init__(self, *, seconds: float) -> None:
        self.seconds = seconds
        self._open_until = 0.0
        self._lock = threading.Lock()

    def closed(self) -> bool:
        return time.monotonic() >= self._open_until

    def trip(self) -> bool:
        """Open it; True when it was closed (the first failure of an outage: the one worth a log line)."""
        with self._lock:
            was_closed = self.closed()
            self._open_until = time.monotonic() + self.seconds
            return was_closed

    def reset(self) -> None:
        with self._lock:
            self._open_until = 0.0
