"""Exports of a batch (admin and supervisor): final values with proofs, and the review events as an audit log.

Supervisors may export too: they already read every value and every event on the desk and the history page
(read-only), and the audit log is theirs to check who corrected what. Nothing here writes.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, StreamingHttpResponse

from extraction.models import Batch
from reviewer.access import role_required
from reviewer.batches import export
from reviewer.batches.views import get_batch
from reviewer.roles import ADMIN, SUPERVISOR

EXPORT_ROLES = (ADMIN, SUPERVISOR)


def _name(batch: Batch, what: str, ext: str) -> str:
    return f"batch-{batch.id}-{what}.{ext}"  # no user text in the header


def _csv(rows, filename: str) -> StreamingHttpResponse:
    response = StreamingHttpResponse(export.csv_lines(rows), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response["Cache-Control"] = "private, no-store"
    return response


def _json(text: str, filename: str) -> HttpResponse:
    response = HttpResponse(text, content_type="application/json; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response["Cache-Control"] = "private, no-store"
    return response


@role_required(*EXPORT_ROLES)
def values_csv(request: HttpRequest, batch_id: int) -> StreamingHttpResponse:
    batch = get_batch(request, batch_id)
    return _csv(export.batch_values_rows(batch=batch), _name(batch, "values", "csv"))


@role_required(*EXPORT_ROLES)
def values_json(request: HttpRequest, batch_id: int) -> HttpResponse:
    batch = get_batch(request, batch_id)
    return _json(export.batch_export_json(batch=batch), _name(batch, "values", "json"))


@role_required(*EXPORT_ROLES)
def events_csv(request: HttpRequest, batch_id: int) -> StreamingHttpResponse:
    batch = get_batch(request, batch_id)
    return _csv(export.batch_events_rows(batch=batch), _name(batch, "audit-log", "csv"))


@role_required(*EXPORT_ROLES)
def events_json(request: HttpRequest, batch_id: int) -> HttpResponse:
    batch = get_batch(request, batch_id)
    return _json(export.batch_events_json(batch=batch), _name(batch, "audit-log", "json"))
