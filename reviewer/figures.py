"""Figures as the pages print them: a share is a percentage with one decimal ("50.0 %"), like the dashboard's
pass rates, and an interval shares its unit ("50.0 % (9.5–90.5 %)")."""

from __future__ import annotations


def percent(share: float | None) -> str:
    """0.5 -> '50.0 %'; None -> '—'."""
    if share is None:
        return "—"
    return f"{share * 100:.1f} %"


def rate_with_interval(rate: float | None, low: float | None, high: float | None) -> str:
    """A rate and its interval in percent: '50.0 % (9.5–90.5 %)'; '—' when nothing was judged."""
    if rate is None:
        return "—"
    if low is None or high is None:
        return percent(rate)
    return f"{rate * 100:.1f} % ({low * 100:.1f}–{high * 100:.1f} %)"
