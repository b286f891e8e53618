"""How good a confidence is, and how sure an audit is (pure): AUROC, Brier score, expected calibration error,
reliability bins, Wilson intervals and the sample size that makes one narrow enough, and the review load a
suspicious-pass threshold costs against the false passes it catches."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from extraction.common.stats import Z95, draw_sample, wilson_interval

__all__ = ["ThresholdPoint", "auroc", "brier", "ece", "reliability_bins", "sample_size_for_width",
           "stratified_draw", "threshold_curve", "wilson"]


def auroc(scores: Sequence[float], labels: Sequence[int]) -> float | None:
    """The chance a right field (label 1) scores above a wrong one (ties count half); None without both."""
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    if not pos or not neg:
        return None
    ranked = sorted([(s, 1) for s in pos] + [(s, 0) for s in neg])
    # rank-sum with average ranks for ties
    rank_sum, i = 0.0, 0
    while i < len(ranked):
        j = i
        while j < len(ranked) and ranked[j][0] == ranked[i][0]:
            j += 1
        avg = (i + 1 + j) / 2
        rank_sum += avg * sum(1 for k in range(i, j) if ranked[k][1])
        i = j
    return (rank_sum - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg))


def brier(scores: Sequence[float], labels: Sequence[int]) -> float | None:
    if not scores:
        return None
    return sum((s - (1.0 if y else 0.0)) ** 2 for s, y in zip(scores, labels, strict=True)) / len(scores)


@dataclass(frozen=True)
class Bin:
    low: float
    high: float
    count: int
    mean_confidence: float | None
    accuracy: float | None


def reliability_bins(scores: Sequence[float], labels: Sequence[int], *, bins: int = 10) -> list[Bin]:
    """Equal-width bins of confidence: in each, the mean confidence and the share of fields that were right."""
    out = []
    for k in range(bins):
        low, high = k / bins, (k + 1) / bins
        members = [(s, y) for s, y in zip(scores, labels, strict=True)
                   if low <= s < high or (k == bins - 1 and s == 1.0)]
        if members:
            out.append(Bin(low, high, len(members), sum(s for s, _ in members) / len(members),
                           sum(1 for _, y in members if y) / len(members)))
        else:
            out.append(Bin(low, high, 0, None, None))
    return out


def ece(scores: Sequence[float], labels: Sequence[int], *, bins: int = 10) -> float | None:
    """Expected calibration error: the count-weighted gap between confidence and accuracy over the bins."""
    if not scores:
        return None
    total = len(scores)
    return sum(b.count / total * abs(b.mean_confidence - b.accuracy)
               for b in reliability_bins(scores, labels, bins=bins) if b.count)


def wilson(successes: int, n: int, *, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95% by default); (0, 1) when nothing was sampled."""
    return wilson_interval(successes, n, z)


def stratified_draw(strata: Mapping[str, Sequence[int]], *, per_stratum: int, seed: int) -> dict[str, list[int]]:
    """Up to `per_stratum` ids of each stratum, chosen by the seed (extraction.common.stats.draw_sample: the same
    seed over the same ids gives the same sample anywhere), so every field kind or confidence band gets its
    own estimate instead of the commonest drowning the rest."""
    return {name: draw_sample(ids, min(per_stratum, len(set(ids))), seed) for name, ids in sorted(strata.items())}


def sample_size_for_width(successes: int, n: int, *, width: float, z: float = Z95, limit: int = 1_000_000) -> int:
    """How many more items (at the proportion seen so far) make the Wilson interval at most `width` wide."""
    if width <= 0:
        raise ValueError("width must be positive")
    p = successes / n if n else 0.5
    lo, hi = n, max(n, 1)
    while True:
        low, high = wilson(round(p * hi), hi, z=z)
        if high - low <= width or hi >= limit:
            break
        hi *= 2
    while lo < hi:  # the smallest total that is narrow enough
        mid = (lo + hi) // 2
        low, high = wilson(round(p * mid), mid, z=z)
        if mid > 0 and high - low <= width:
            hi = mid
        else:
            lo = mid + 1
    return max(0, hi - n)


@dataclass(frozen=True)
class ThresholdPoint:
    threshold: float
    routed: int  # passing documents whose least confident field is under the threshold
    caught: int  # of them, those with a wrong field
    missed: int  # passing documents with a wrong field left unrouted


def threshold_curve(documents: Sequence[tuple[float, bool]], thresholds: Sequence[float]) -> list[ThresholdPoint]:
    """For passing documents given as (least field confidence, has a wrong field): review load against
    false passes left, per threshold."""
    out = []
    for t in thresholds:
        routed = [wrong for low, wrong in documents if low < t]
        wrong_total = sum(1 for _, wrong in documents if wrong)
        caught = sum(1 for w in routed if w)
        out.append(ThresholdPoint(t, len(routed), caught, wrong_total - caught))
    return out
