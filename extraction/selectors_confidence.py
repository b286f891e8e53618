"""Reads for field confidence: the model in use per document type, how often people correct each field kind,
and the fields people have judged (the labels a confidence model is fitted and measured on)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from extraction.confidence import ConfidenceModel as Scorer
from extraction.confidence import prior_model
from extraction.confidence_signals import field_kind
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


@dataclass(frozen=True)
class Label:
    document_id: int
    extraction_id: int
    path: str
    signals: dict
    confidence: float | None
    right: bool
    source: str  # review or audit


def latest_extractions(doctype: str) -> dict[int, int]:
    """Per document of the type, its newest extraction that produced fields."""
    out: dict[int, int] = {}
    rows = (Extraction.objects.filter(doctype=doctype, answer__isnull=False)
            .order_by("document_id", "-started_at", "-id").values_list("document_id", "id"))
    for document_id, extraction_id in rows:
        out.setdefault(document_id, extraction_id)
    return out


def confidence_labels(*, doctype: str) -> list[Label]:
    """Fields people judged: every field of a reviewed document (right unless a reviewer corrected it) and of
    an audited one (right unless the supervisor marked it wrong); the audit's verdict wins for a document
    judged both ways. Only fields that were scored (their signals stored) count."""
    from reviewer.models import AuditItem

    latest = latest_extractions(doctype)
    audited: dict[int, set[str]] = {}
    for extraction_id, verdict, wrong in AuditItem.objects.filter(
            extraction_id__in=latest.values()).exclude(verdict=AuditItem.Verdict.PENDING).values_list(
            "extraction_id", "verdict", "wrong_fields"):
        audited[extraction_id] = set(wrong or []) if verdict == AuditItem.Verdict.DISAGREE else set()
    reviewed = set(Extraction.objects.filter(
        id__in=latest.values(),
        document__review_status__in=[ReviewStatus.VERIFIED.value, ReviewStatus.CORRECTED.value],
    ).values_list("id", flat=True))
    judged = reviewed | set(audited)
    labels = []
    rows = (FieldValue.objects.filter(extraction_id__in=judged).exclude(signals={})
            .order_by("-extraction_id", "position")
            .values_list("extraction__document_id", "extraction_id", "path", "signals", "field_confidence",
                         "corrected", "value", "model_value")[:_RECENT_LABELS])
    for document_id, extraction_id, path, signals, confidence, corrected, value, model_value in rows:
        if extraction_id in audited:
            right, source = path not in audited[extraction_id] and value == model_value, "audit"
        else:
            right, source = not corrected or value == model_value, "review"
        labels.append(Label(document_id, extraction_id, path, signals, confidence, right, source))
    return labels


_RATES_SECONDS = 300  # every finished extraction asks; the rates move slowly, so they are kept a while


def corrected_rates(*, doctype: str) -> dict[str, float]:
    """Per field kind (`rows[].votes`), the share of reviewed fields whose value people changed (cached)."""
    from django.core.cache import cache
    from django.db.models import Max

    from extraction.models import Document, ReviewEvent

    # keyed by how far reviewing has got, so a new decision is counted at once
    reviewed = Document.objects.filter(batch__doctype=doctype, review_status__in=_REVIEWED).count()
    last_event = ReviewEvent.objects.aggregate(last=Max("id"))["last"] or 0
    return cache.get_or_set(f"confidence-corrected-rates:{doctype}:{reviewed}:{last_event}",
                            lambda: _corrected_rates(doctype), _RATES_SECONDS)


def _corrected_rates(doctype: str) -> dict[str, float]:
    seen: Counter = Counter()
    changed: Counter = Counter()
    rows = (FieldValue.objects.filter(
        extraction__doctype=doctype,
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
