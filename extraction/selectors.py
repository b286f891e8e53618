"""Reads for the views. Each returns a queryset or plain data with a bounded number of queries."""

from __future__ import annotations

from django.db.models import Count, Q, QuerySet

from extraction.models import Batch, Document
from extraction.states import Status


def batch_list_with_counts() -> QuerySet[Batch]:
    per_status = {f"n_{s.value}": Count("documents", filter=Q(documents__status=s.value)) for s in Status}
    return Batch.objects.annotate(n_documents=Count("documents"), **per_status).order_by("-created_at")


def batch_status_counts(*, batch: Batch) -> dict[str, int]:
    counts = {s.value: 0 for s in Status}
    for row in batch.documents.values("status").annotate(n=Count("id")):
        counts[row["status"]] = row["n"]
    counts["total"] = sum(counts[s.value] for s in Status)
    counts["done"] = counts["passed"] + counts["flagged"] + counts["failed"]
    return counts


def queue_documents(*, batch_id: int | None = None, rule: str | None = None) -> QuerySet[Document]:
    """Flagged documents, oldest first."""
    qs = Document.objects.filter(status=Status.FLAGGED.value).select_related("batch", "claimed_by")
    if batch_id:
        qs = qs.filter(batch_id=batch_id)
    if rule:
        qs = qs.filter(extractions__violations__code=rule).distinct()
    return qs.order_by("created_at", "id")


def audit_batches() -> QuerySet[Batch]:
    return Batch.objects.annotate(
        n_passed=Count("documents", filter=Q(documents__status=Status.PASSED.value))
    ).order_by("-created_at")
