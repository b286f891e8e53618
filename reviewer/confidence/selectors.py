"""The fields people judged, reviews and audits: the labels a confidence model is fitted and measured on."""

from __future__ import annotations

from dataclasses import dataclass

from extraction.confidence.selectors import latest_extractions
from extraction.models import Extraction, FieldValue
from extraction.states import ReviewStatus
from reviewer.models import AuditItem, FieldAuditItem

_RECENT_LABELS = 20_000  # the newest judged fields are enough to estimate a rate or fit a dozen weights


@dataclass(frozen=True)
class Label:
    document_id: int
    extraction_id: int
    path: str
    signals: dict
    confidence: float | None
    right: bool
    source: str  # review or audit


def confidence_labels(*, doctype: str, team_id: int | None = None) -> list[Label]:
    """Fields people judged: every field of a reviewed document (right unless a reviewer corrected it), of an
    audited one (right unless the supervisor marked it wrong), and each field of a field audit (as judged); a
    field audit's verdict wins, then the document audit's. Only fields that were scored (their signals stored)
    count."""
    latest = latest_extractions(doctype, team_id)
    audited: dict[int, set[str]] = {}
    for extraction_id, verdict, wrong in AuditItem.objects.filter(
            extraction_id__in=latest.values()).exclude(verdict=AuditItem.Verdict.PENDING).values_list(
            "extraction_id", "verdict", "wrong_fields"):
        audited[extraction_id] = set(wrong or []) if verdict == AuditItem.Verdict.DISAGREE else set()
    reviewed = set(Extraction.objects.filter(
        id__in=latest.values(),
        document__review_status__in=[ReviewStatus.VERIFIED.value, ReviewStatus.CORRECTED.value],
    ).values_list("id", flat=True))
    # a supervisor's verdict on one sampled field labels that field alone, and wins over the document's
    field_verdicts = {(extraction_id, path): verdict == FieldAuditItem.Verdict.RIGHT
                      for extraction_id, path, verdict in FieldAuditItem.objects.filter(
                          extraction_id__in=latest.values()).exclude(verdict=FieldAuditItem.Verdict.PENDING)
                      .values_list("extraction_id", "path", "verdict")}
    judged = reviewed | set(audited) | {extraction_id for extraction_id, _ in field_verdicts}
    labels = []
    rows = (FieldValue.objects.filter(extraction_id__in=judged).exclude(signals={})
            .order_by("-extraction_id", "position")
            .values_list("extraction__document_id", "extraction_id", "path", "signals", "field_confidence",
                         "corrected", "value", "model_value")[:_RECENT_LABELS])
    for document_id, extraction_id, path, signals, confidence, corrected, value, model_value in rows:
        if (extraction_id, path) in field_verdicts:
            right, source = field_verdicts[extraction_id, path], "audit"
        elif extraction_id in audited:
            right, source = path not in audited[extraction_id] and value == model_value, "audit"
        elif extraction_id in reviewed:
            right, source = not corrected or value == model_value, "review"
        else:
            continue  # only some fields of this document were judged, and not this one
        labels.append(Label(document_id, extraction_id, path, signals, confidence, right, source))
    return labels
