"""Reads for field confidence: the model in use per document type, each document's newest extraction with
fields, how often people correct each field kind, the suspicious-pass threshold. The fields people judged
(reviews and audits: the labels a model is fitted on) are reviewer.confidence.selectors."""

from __future__ import annotations

from collections import Counter

from extraction.confidence.model import ConfidenceModel as Scorer
from extraction.confidence.model import prior_model
from extraction.confidence.signals import field_kind
from extraction.models import ConfidenceModel, Extraction, FieldValue, SuspiciousPassThreshold
from extraction.states import ReviewStatus

_REVIEWED = [ReviewStatus.VERIFIED.value, ReviewStatus.CORRECTED.value]
_RECENT_LABELS = 20_000  # the newest judged fields are enough to estimate a rate or fit a dozen weights


def confidence_model_current(*, doctype: str) -> tuple[int, Scorer]:
    """(version, model) in use for the type: its newest stored version, else version 0, the prior."""
    row = ConfidenceModel.objects.filter(doctype=doctype).order_by("-version").first()
    if row is None:
        return 0, prior_model()
    return row.version, Scorer.from_json(row.params)


def latest_extractions(doctype: str) -> dict[int, int]:
    """Per document of the type, its newest extraction that produced fields."""
    return Extraction.objects.filter(doctype=doctype, answer__isnull=False,
                                     document__batch__trial=False).current_by_document()


_RATES_SECONDS = 300  # every finished extraction asks; the rates move slowly, so they are kept a while


def corrected_rates(*, doctype: str) -> dict[str, float]:
    """Per field kind (`rows[].votes`), the share of reviewed fields whose value people changed (cached)."""
    from django.core.cache import cache
    from django.db.models import Max

    from extraction.models import Document, ReviewEvent

    # keyed by how far reviewing has got, so a new decision is counted at once
    reviewed = Document.objects.filter(batch__doctype=doctype, batch__trial=False, review_status__in=_REVIEWED).count()
    last_event = ReviewEvent.objects.aggregate(last=Max("id"))["last"] or 0
    return cache.get_or_set(f"confidence-corrected-rates:{doctype}:{reviewed}:{last_event}",
                            lambda: _corrected_rates(doctype), _RATES_SECONDS)


def _corrected_rates(doctype: str) -> dict[str, float]:
    seen: Counter = Counter()
    changed: Counter = Counter()
    rows = (FieldValue.objects.filter(
        extraction__doctype=doctype, extraction__document__batch__trial=False,
        extraction__document__review_status__in=[ReviewStatus.VERIFIED.value, ReviewStatus.CORRECTED.value])
        .order_by("-id").values_list("path", "value", "model_value")[:_RECENT_LABELS])
    for path, value, model_value in rows:
        kind = field_kind(path)
        seen[kind] += 1
        changed[kind] += value != model_value
    return {kind: changed[kind] / n for kind, n in seen.items()}


def suspicious_threshold(*, doctype: str) -> float | None:
    """The type's chosen suspicious-pass threshold; None when none was chosen (no pass is routed)."""
    return SuspiciousPassThreshold.objects.filter(doctype=doctype).values_list("threshold", flat=True).first()
