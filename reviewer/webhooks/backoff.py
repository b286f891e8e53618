"""When a failed delivery is tried again (pure).

Exponential, then capped: 11 attempts in all, the last about 23.7 hours after the first, so every attempt falls
within a day of the event (WINDOW). `scale` shrinks the whole schedule (settings.WEBHOOK_BACKOFF_SCALE): the
tests live through "a day" in seconds.
"""

from __future__ import annotations

# seconds to wait after attempt 1, 2, ...: 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, 2 h, 4 h, 8 h, 8 h
DELAYS = (5, 30, 120, 600, 1800, 3600, 7200, 14400, 28800, 28800)
WINDOW = 24 * 3600  # no attempt starts later than this after the event
MAX_ATTEMPTS = len(DELAYS) + 1


def delay_after(attempt: int, *, scale: float = 1.0) -> float | None:
    """Seconds to wait after failed attempt number `attempt` (1-based), or None: no more attempts."""
    if attempt < 1 or attempt > len(DELAYS):
        return None
    return DELAYS[attempt - 1] * scale


def next_attempt_in(*, attempt: int, since_event: float, scale: float = 1.0) -> float | None:
    """Seconds from now to the next attempt after failed attempt `attempt`, `since_event` seconds after the
    event; None when the schedule has run out or the next attempt would fall outside the day."""
    delay = delay_after(attempt, scale=scale)
    if delay is None or since_event + delay > WINDOW * scale:
        return None
    return delay
