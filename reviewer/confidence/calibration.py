"""Reads for the confidence page of a document type: how well confidence matched what people found
(reliability, Brier, ECE, AUROC), the wrong rate per field kind with its Wilson interval, the review load
against the estimated false passes per suspicious-pass threshold, and how often the rubric judge agreed
with people."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from extraction.confidence.calibration import auroc, brier, ece, reliability_bins, sample_size_for_width, wilson
from extraction.confidence.selectors import latest_extractions
from extraction.confidence.signals import field_kind
from extraction.models import Document, Extraction, FieldValue, Violation
from extraction.states import ReviewStatus, Status
from reviewer.confidence.selectors import confidence_labels
from reviewer.models import AuditItem

THRESHOLDS = (0.5, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995)


def calibration_summary(*, doctype: str, team_id: int | None = None, width: float = 0.1) -> dict[str, Any]:
    """The judged fields' stored confidence against what people found, overall and per field kind."""
    labels = [label for label in confidence_labels(doctype=doctype, team_id=team_id) if label.confidence is not None]
    scores = [label.confidence for label in labels]
    ys = [int(label.right) for label in labels]
    kinds: dict[str, list] = defaultdict(list)
    for label in labels:
        kinds[field_kind(label.path)].append(label)
    strata = []
    for kind, group in sorted(kinds.items()):
        wrong = sum(1 for label in group if not label.right)
        low, high = wilson(wrong, len(group))
        strata.append({
            "kind": kind, "fields": len(group), "wrong": wrong, "rate": wrong / len(group), "low": low,
            "high": high, "more": sample_size_for_width(wrong, len(group), width=width),
            "from_audit": sum(1 for label in group if label.source == "audit"),
            "mean_confidence": sum(label.confidence for label in group) / len(group),
        })
    return {
        "fields": len(labels), "wrong": ys.count(0), "brier": brier(scores, ys), "ece": ece(scores, ys),
        "auroc": auroc(scores, ys), "bins": reliability_bins(scores, ys), "strata": strata, "width": width,
    }


def threshold_curve_estimate(*, doctype: str, team_id: int | None = None,
                             thresholds: tuple[float, ...] = THRESHOLDS) -> list[dict[str, Any]]:
    """For the type's passed documents (their current extraction): per threshold, how many would go to review,
    what the review load becomes, and how many wrong passes the confidence model expects among those left that
    nobody has checked, each document counting the chance that any of its fields is wrong (1 - the product of
    its fields' confidences). A pass a supervisor's audit found right is known right, so it counts for none."""
    latest = latest_extractions(doctype, team_id)
    passed = set(Document.objects.filter(id__in=latest, status=Status.PASSED.value).values_list("id", flat=True))
    checked = set(AuditItem.objects.filter(document_id__in=passed, verdict=AuditItem.Verdict.AGREE)
                  .values_list("document_id", flat=True))
    document_of = {latest[d]: d for d in passed}
    scores: dict[int, list[float]] = defaultdict(list)
    for extraction_id, confidence in FieldValue.objects.filter(
            extraction_id__in=document_of, field_confidence__isnull=False).values_list("extraction_id", "field_confidence"):
        scores[extraction_id].append(confidence)
    flagged = Document.objects.filter(id__in=latest, status=Status.FLAGGED.value).count()
    docs = []  # (least sure field, chance that a field is wrong or None when a person found it right)
    for extraction_id, values in scores.items():
        p_right = 1.0
        for v in values:
            p_right *= v
        docs.append((min(values), None if document_of[extraction_id] in checked else 1.0 - p_right))
    out = []
    for t in thresholds:
        routed = [d for d in docs if d[0] < t]
        left = [p for low, p in docs if low >= t and p is not None]
        out.append({"threshold": t, "routed": len(routed), "passed": len(docs), "flagged": flagged,
                    "load": flagged + len(routed),
                    "added_load": len(routed) / flagged if flagged else None,
                    "unchecked_left": len(left), "false_passes_left": sum(left)})
    return out


def judge_agreement(*, doctype: str, team_id: int | None = None) -> dict[str, Any] | None:
    """For a type with rubric checks: the judge's verdict (no `rubric:` rule broken) against people's (verified
    or an agreeing audit accepts; a correction, a rejection or a disagreeing audit rejects), over decided
    documents whose code rules all passed (the judge is asked only then)."""
    latest = latest_extractions(doctype, team_id)
    broken: dict[int, set[str]] = defaultdict(set)
    for extraction_id, code in Violation.objects.filter(extraction_id__in=latest.values()).values_list(
            "extraction_id", "code"):
        broken[extraction_id].add(code)
    people: dict[int, bool] = {}
    for doc_id, review in Document.objects.filter(id__in=latest).exclude(
            review_status=ReviewStatus.UNREVIEWED.value).values_list("id", "review_status"):
        people[doc_id] = review == ReviewStatus.VERIFIED.value
    for doc_id, verdict in AuditItem.objects.filter(document_id__in=latest).exclude(
            verdict=AuditItem.Verdict.PENDING).values_list("document_id", "verdict"):
        people[doc_id] = verdict == AuditItem.Verdict.AGREE
    judged = set(Extraction.objects.filter(id__in=latest.values(), stop_reason__in=["passed", "stagnated", "exhausted"])
                 .values_list("id", flat=True))
    counts = {"documents": 0, "agree": 0, "false_accepts": 0, "false_rejects": 0}
    for doc_id, accepted in people.items():
        extraction_id = latest[doc_id]
        codes = broken.get(extraction_id, set())
        if extraction_id not in judged or any(not c.startswith("rubric:") and c != "suspicious_pass" for c in codes):
            continue  # a code rule broke: the judge was not asked
        judge_accepts = not any(c.startswith("rubric:") for c in codes)
        counts["documents"] += 1
        if judge_accepts == accepted:
            counts["agree"] += 1
        elif judge_accepts:
            counts["false_accepts"] += 1
        else:
            counts["false_rejects"] += 1
    n = counts["documents"]
    low, high = wilson(counts["agree"], n)
    return {**counts, "rate": counts["agree"] / n if n else None, "low": low, "high": high}


BANDS = ((0.0, 0.5), (0.5, 0.9), (0.9, 0.99), (0.99, 1.0001))


def audit_by_band(*, doctype: str, team_id: int | None = None) -> list[dict[str, Any]]:
    """Passed documents by the band of their least sure field: how many, how many a supervisor audited, how
    many of those were wrong, and the false-pass rate with its Wilson interval per band (audits stratified
    by confidence: the bands a threshold would route or leave)."""
    latest = latest_extractions(doctype, team_id)
    passed = Document.objects.filter(id__in=latest, status=Status.PASSED.value).values_list("id", flat=True)
    lowest: dict[int, float] = {}
    for extraction_id, confidence in FieldValue.objects.filter(
            extraction_id__in=[latest[d] for d in passed], field_confidence__isnull=False).values_list(
            "extraction_id", "field_confidence"):
        lowest[extraction_id] = min(confidence, lowest.get(extraction_id, 1.0))
    verdicts = dict(AuditItem.objects.filter(extraction_id__in=lowest).exclude(
        verdict=AuditItem.Verdict.PENDING).values_list("extraction_id", "verdict"))
    out = []
    for low, high in BANDS:
        members = [e for e, c in lowest.items() if low <= c < high]
        audited = [e for e in members if e in verdicts]
        wrong = sum(1 for e in audited if verdicts[e] == AuditItem.Verdict.DISAGREE)
        lo, hi = wilson(wrong, len(audited))
        out.append({"low": low, "high": min(high, 1.0), "passed": len(members), "audited": len(audited),
                    "wrong": wrong, "rate": wrong / len(audited) if audited else None, "ci_low": lo, "ci_high": hi})
    return out
