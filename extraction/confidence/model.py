"""Per-field confidence in [0, 1]: a logistic model over the field's signals (pure: numpy, no ORM).

Before people have reviewed enough fields of a type, `PRIOR` is used: hand-set weights, each with its reason.
`fit` then learns from reviewed and audited fields (label 1: the value people kept; 0: one they corrected)
by maximum a posteriori logistic regression whose Gaussian prior is centred on `PRIOR`: with few labels the
weights stay near the documented prior, with many the data decides. The result is plain JSON, so a fitted
model is stored, versioned and compared before it replaces another (extraction/confidence/services.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from extraction.confidence.signals import FEATURES, FieldSignals
from extraction.rules.violations import Violation

__all__ = ["MIN_LABELS", "PRIOR", "SUSPICIOUS_CODE", "ConfidenceModel", "fit", "prior_model", "suspicious_pass"]

# Fewer reviewed fields (or fewer of either outcome) than this and the prior stays: a fit on a handful of
# labels would say more about those few documents than about the type.
MIN_LABELS = 200
MIN_EACH = 10

# The prior, in logits. A clean field (no signal against it) gets sigmoid(4.0) = 0.98: as sure as the seed study
# found fields on sheets whose rules all passed (docs/BENCHMARKS.md, figures behind choices in the code).
PRIOR_BIAS = 4.0
PRIOR: dict[str, float] = {
    # Each broken rule naming the field is a sign it is one of the wrong ones, but a sum over 39 fields
    # names every field: alone it should pull a field down only to about 0.9.
    "broken": -1.5,
    # A rule over one or two fields (proof, digits vs words) points at this field itself.
    "narrow_broken": -3.0,
    # The model was told and kept its answer: the field is either right and odd, or wrong and stubborn.
    "settled": -0.5,
    # A value that moved between rounds was once read otherwise; forced sums move a right row.
    "rounds_changed": -1.5,
    # No place on the page shows the value: nothing backs it.
    "proof_none": -2.5,
    # A loose match may be the neighbour's cell.
    "proof_fuzzy": -1.0,
    # The cited words show another value.
    "not_grounded": -3.0,
    # A value that is a small part of a long cited text was picked out of it; a modest doubt.
    "coverage_gap": -0.5,
    # Low OCR confidence of the cited words: the text the model read may itself be misread (0.6 -> -1.2).
    "ocr_doubt": -3.0,
    # Digits and words of one count disagree: one of the two is wrong.
    "twin_disagrees": -3.0,
    # Two engines read the place differently.
    "engine_disagrees": -2.0,
    # A field people often correct is often wrong (a 20% correction rate -> -0.8).
    "corrected_rate": -4.0,
    # A document that breaks rules elsewhere casts some doubt on every field.
    "doc_suspicion": -0.7,
}
assert set(PRIOR) == set(FEATURES)

_PRIOR_STRENGTH = 1.0  # the Gaussian prior's precision per weight, in units of one label's information


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))


@dataclass(frozen=True)
class ConfidenceModel:
    """Weights by signal name plus a bias; `source` is "prior" or "fitted"; `metrics` say how it was measured."""

    bias: float
    weights: dict[str, float]
    source: str = "prior"
    labels: int = 0
    metrics: dict[str, Any] = field(default_factory=dict)

    def predict(self, signals: FieldSignals | dict[str, float]) -> float:
        values = signals.values if isinstance(signals, FieldSignals) else signals
        z = self.bias + sum(self.weights.get(name, 0.0) * float(values.get(name, 0.0)) for name in FEATURES)
        return float(1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z)))))

    def predict_many(self, rows: Sequence[FieldSignals | dict[str, float]]) -> list[float]:
        return [self.predict(r) for r in rows]

    def to_json(self) -> dict[str, Any]:
        return {"bias": self.bias, "weights": dict(self.weights), "source": self.source, "labels": self.labels,
                "metrics": dict(self.metrics), "features": list(FEATURES)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ConfidenceModel:
        return cls(bias=float(data["bias"]), weights={k: float(v) for k, v in data["weights"].items()},
                   source=data.get("source", "fitted"), labels=int(data.get("labels", 0)),
                   metrics=dict(data.get("metrics") or {}))


def prior_model() -> ConfidenceModel:
    return ConfidenceModel(bias=PRIOR_BIAS, weights=dict(PRIOR), source="prior")


def enough_labels(labels: Sequence[int]) -> bool:
    right = sum(1 for y in labels if y)
    return len(labels) >= MIN_LABELS and min(right, len(labels) - right) >= MIN_EACH


def fit(rows: Sequence[FieldSignals | dict[str, float]], labels: Sequence[int], *, prior: ConfidenceModel | None = None,
        strength: float = _PRIOR_STRENGTH, iterations: int = 50) -> ConfidenceModel:
    """Logistic regression by Newton's method, shrunk towards `prior` (the documented prior by default).

    `labels` are 1 for a right field, 0 for a wrong one. Raises ValueError on mismatched or empty input.
    """
    if len(rows) != len(labels) or not rows:
        raise ValueError(f"need as many labels as rows, and some: {len(rows)} rows, {len(labels)} labels")
    prior = prior or prior_model()
    x = np.array([[1.0] + [float((r.values if isinstance(r, FieldSignals) else r).get(n, 0.0)) for n in FEATURES]
                  for r in rows])
    y = np.array([1.0 if v else 0.0 for v in labels])
    w0 = np.array([prior.bias] + [prior.weights.get(n, 0.0) for n in FEATURES])
    precision = np.full(len(w0), strength)
    precision[0] = strength * 0.1  # the bias is the base rate: let the data move it freely
    def loss(w: np.ndarray) -> float:
        z = x @ w
        return float(np.sum(np.logaddexp(0.0, z) - y * z) + 0.5 * np.sum(precision * (w - w0) ** 2))

    w = w0.copy()
    for _ in range(iterations):
        p = _sigmoid(x @ w)
        grad = x.T @ (p - y) + precision * (w - w0)
        hess = (x * (p * (1 - p))[:, None]).T @ x + np.diag(precision)
        step = np.linalg.solve(hess, grad)
        # a full Newton step can overshoot when the start is far off (a confident prior, a harsh sample)
        scale, before = 1.0, loss(w)
        while scale > 1e-4 and loss(w - scale * step) > before:
            scale /= 2
        w = w - scale * step
        if float(np.max(np.abs(scale * step))) < 1e-8:
            break
    return ConfidenceModel(bias=float(w[0]), weights={n: float(v) for n, v in zip(FEATURES, w[1:], strict=True)},
                           source="fitted", labels=len(labels))


SUSPICIOUS_CODE = "suspicious_pass"


def suspicious_pass(confidences: dict[str, float | None], *, threshold: float | None,
                    labels: dict[str, str] | None = None) -> Violation | None:
    """For an answer that passes every rule: a `suspicious_pass` naming its least confident field when that
    field is under `threshold` (None: no routing), so people look at what no rule could express."""
    scored = {path: c for path, c in confidences.items() if c is not None}
    if threshold is None or not scored:
        return None
    path = min(scored, key=lambda p: (scored[p], p))
    if scored[path] >= threshold:
        return None
    label = (labels or {}).get(path, path)
    return Violation(code=SUSPICIOUS_CODE, fields=(path,), expected=f">= {threshold:.3f}", found=round(scored[path], 4),
                     message=f"Every rule passes, but {label} is only {scored[path]:.0%} sure "
                             f"(documents under {threshold:.0%} go to review).")
