"""Small statistics for audits and dashboards (pure: no ORM, no Django).

- `wilson_interval(k, n)`: the Wilson score interval of a proportion (95 % by default).
- `percentile(values, q)`: linear interpolation between closest ranks (NumPy's default, Hyndman-Fan type 7).
- `sample_size` and `draw_sample`: the audit's random sample, reproducible from a recorded seed.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# The 97.5th percentile of the standard normal: a two-sided 95 % interval.
Z95 = 1.959963984540054


@dataclass(frozen=True)
class Proportion:
    """k of n, its estimate k/n (None when n is 0) and its Wilson interval."""

    k: int
    n: int
    estimate: float | None
    low: float
    high: float

    @property
    def percent(self) -> float | None:
        return None if self.estimate is None else 100 * self.estimate

    @property
    def low_percent(self) -> float:
        return 100 * self.low

    @property
    def high_percent(self) -> float:
        return 100 * self.high


def wilson_interval(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for k successes in n trials; (0, 1) when n is 0 (nothing is known)."""
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return 0.0, 1.0
    p = k / n
    z2 = z * z
    denominator = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denominator
    # The bounds are exactly 0 and 1 at k = 0 and k = n; rounding must not push them past.
    low = 0.0 if k == 0 else max(0.0, centre - half)
    high = 1.0 if k == n else min(1.0, centre + half)
    return low, high


def proportion(k: int, n: int, z: float = Z95) -> Proportion:
    low, high = wilson_interval(k, n, z)
    return Proportion(k=k, n=n, estimate=(k / n) if n else None, low=low, high=high)


def rate(k: int, n: int) -> float | None:
    """k / n, or None when there is nothing to divide by."""
    return k / n if n else None


def percentile(values: Iterable[float], q: float) -> float | None:
    """The q-th percentile (0..100), interpolating linearly between closest ranks; None for no values."""
    if not 0 <= q <= 100:
        raise ValueError(f"a percentile is between 0 and 100, got {q}")
    ordered = sorted(values)
    if not ordered:
        return None
    position = (len(ordered) - 1) * q / 100
    lower = math.floor(position)
    upper = min(lower + 1, len(ordered) - 1)
    fraction = position - lower
    return ordered[lower] + (ordered[upper] - ordered[lower]) * fraction


def median(values: Iterable[float]) -> float | None:
    return percentile(values, 50)


def mean(values: Iterable[float]) -> float | None:
    items = list(values)
    return sum(items) / len(items) if items else None


def distribution(values: Iterable) -> list[tuple[object, int]]:
    """(value, how many) for every value seen, in ascending order of the value."""
    return sorted(Counter(values).items())


# --- the audit's sample --------------------------------------------------------------------------------


def sample_size(*, population: int, count: int | None = None, percent: float | None = None) -> int:
    """How many to draw: a count (capped at the population) or a percentage (rounded up, at least 1)."""
    if population < 0:
        raise ValueError("the population cannot be negative")
    if (count is None) == (percent is None):
        raise ValueError("give either a count or a percentage")
    if count is not None:
        if count < 1:
            raise ValueError("the count must be at least 1")
        return min(count, population)
    if not 0 < percent <= 100:
        raise ValueError("the percentage must be above 0 and at most 100")
    if population == 0:
        return 0
    # round first so that 10 % of 30 is 3, not 4 because of 3.0000000000000004
    return min(population, max(1, math.ceil(round(population * percent / 100, 9))))


def _rank(seed: int, item: int) -> bytes:
    return hashlib.sha256(f"{seed}:{item}".encode()).digest()


def draw_sample(population: Sequence[int], size: int, seed: int) -> list[int]:
    """`size` distinct ids of `population`, chosen by the seed, in ascending order.

    Each id is ranked by SHA-256 of "seed:id" and the lowest ranks are taken: the same seed over the
    same ids gives the same sample on any machine and any Python version, and the order of `population`
    does not matter.
    """
    unique = sorted(set(population))
    if not 0 <= size <= len(unique):
        raise ValueError(f"cannot draw {size} of {len(unique)}")
    chosen = sorted(unique, key=lambda item: _rank(seed, item))[:size]
    return sorted(chosen)
