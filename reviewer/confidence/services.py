"""Refitting a document type's field confidence model on the fields people judged (reviews and audits).

A refit never replaces the model in use silently: `confidence_refit` measures the current and the new model
on the same held-back labels and returns both; only `confidence_model_save` stores the new version.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from django.db import transaction

from extraction.confidence.calibration import auroc, brier, ece
from extraction.confidence.model import ConfidenceModel as Scorer
from extraction.confidence.model import enough_labels, fit
from extraction.confidence.selectors import confidence_model_current
from extraction.models import ConfidenceModel, default_team_id
from reviewer.confidence.selectors import Label, confidence_labels

HOLD_OUT = 0.25  # the share of judged documents kept back to measure old and new models on


class NotEnoughLabels(Exception):
    pass


def _held_back(document_id: int) -> bool:
    digest = hashlib.sha256(f"confidence-holdout-{document_id}".encode()).digest()
    return digest[0] / 256 < HOLD_OUT


def _measure(model: Scorer, labels: Sequence[Label]) -> dict[str, float | int | None]:
    scores = [model.predict(label.signals) for label in labels]
    ys = [int(label.right) for label in labels]
    return {"fields": len(labels), "wrong": ys.count(0), "auroc": auroc(scores, ys), "brier": brier(scores, ys),
            "ece": ece(scores, ys)}


@dataclass(frozen=True)
class Refit:
    doctype: str
    team_id: int
    old_version: int
    new_version: int
    old_metrics: dict
    new_metrics: dict
    model: Scorer
    labels: int


def confidence_refit(*, doctype: str, team_id: int | None = None) -> Refit:
    """Fit a new model on the judged fields of the type (documents not held back), measure it and the one in
    use on the held-back documents. Raises NotEnoughLabels before there are enough labels to beat the prior."""
    team_id = team_id if team_id is not None else default_team_id()
    labels = confidence_labels(doctype=doctype, team_id=team_id)
    train = [label for label in labels if not _held_back(label.document_id)]
    test = [label for label in labels if _held_back(label.document_id)]
    if not enough_labels([int(label.right) for label in train]):
        right = sum(label.right for label in train)
        raise NotEnoughLabels(f"{doctype}: {len(train)} judged fields to fit on ({len(train) - right} wrong); "
                              "the prior stays until there are enough")
    old_version, old = confidence_model_current(doctype=doctype, team_id=team_id)
    new = fit([label.signals for label in train], [int(label.right) for label in train], prior=None)
    old_metrics, new_metrics = _measure(old, test), _measure(new, test)
    return Refit(doctype, team_id, old_version, old_version + 1, old_metrics, new_metrics,
                 Scorer(bias=new.bias, weights=new.weights, source="fitted", labels=len(train), metrics=new_metrics),
                 len(train))


def confidence_model_save(*, refit: Refit, user=None, note: str = "") -> ConfidenceModel:
    """Store the refit as the type's next version; refused when another version was stored meanwhile."""
    with transaction.atomic():
        current = (ConfidenceModel.objects.select_for_update().filter(doctype=refit.doctype, team=refit.team_id)
                   .order_by("-version").values_list("version", flat=True).first()) or 0
        if current != refit.old_version:
            raise ValueError(f"{refit.doctype}: version {current} was stored after this refit was measured "
                             f"against version {refit.old_version}; refit again")
        return ConfidenceModel.objects.create(
            doctype=refit.doctype, team_id=refit.team_id, version=refit.new_version, params=refit.model.to_json(),
            labels=refit.labels,
            metrics={"old": refit.old_metrics, "new": refit.new_metrics, "old_version": refit.old_version},
            created_by=user, note=note)
