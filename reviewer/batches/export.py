"""Exports of a batch: the final values (after review) with status, stop reason, reviewer and proofs;
and the ReviewEvents as an audit log. CSV and JSON, generated chunk by chunk (bounded queries per chunk).

The values are the current (newest) extraction's answer, where reviewers' edits land; a field's proofs are
its FieldValue's blocks (page and normalized box: left, top, width, height in 0..1 of the page).

CSV cells that a spreadsheet would read as a formula (text starting with = + - @, tab or carriage return)
get a leading apostrophe; numbers are written as they are.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder

from extraction.models import Batch, Document, Extraction, FieldValue, ReviewEvent
from extraction.rules.answers import iter_fields
from extraction.states import ReviewStatus

CHUNK = 500

VALUE_COLUMNS = [
    "batch_id", "document_id", "filename", "status", "review_status", "stop_reason", "reviewer", "reviewed_at",
    "extraction_id", "reader", "field", "label", "value", "model_value", "corrected", "proofs", "confidence",
]
EVENT_COLUMNS = ["event_id", "created_at", "document_id", "filename", "user", "kind", "field", "label", "before",
                 "after", "proof_before", "proof_after", "note"]


def _labeller(doctype_name: str):
    """path -> label for people for answers of one document type (the path when the type is unknown)."""
    from extraction.doctypes.registry import UnknownDocumentType, get_doctype

    try:
        doctype = get_doctype(doctype_name)
    except UnknownDocumentType:
        return lambda answer, path: path
    return lambda answer, path: doctype.field_label(answer if isinstance(answer, dict) else {}, path)


def _chunks(ids: list[int]) -> Iterator[list[int]]:
    for start in range(0, len(ids), CHUNK):
        yield ids[start:start + CHUNK]


def _proofs(proofs: list[dict] | None) -> list[dict]:
    out = []
    for p in proofs or []:
        box = p.get("bbox") or {}
        out.append({
            "page": p.get("page"), "type": p.get("type"), "block_id": p.get("block_id"),
            "bbox": {k: box.get(k) for k in ("left", "top", "width", "height")} if box else None,
            "text": p.get("text"),
        })
    return out


def _reviewers(document_ids: list[int]) -> dict[int, tuple[str, Any]]:
    """The user and time of each document's latest verify or reject decision."""
    out: dict[int, tuple[str, Any]] = {}
    events = (ReviewEvent.objects.filter(document_id__in=document_ids,
                                         kind__in=[ReviewEvent.Kind.VERIFY, ReviewEvent.Kind.REJECT])
              .order_by("document_id", "created_at", "id").values_list("document_id", "user__username", "created_at"))
    for document_id, username, created_at in events:
        out[document_id] = (username or "", created_at)
    return out


def _labels(doctype_name: str, answer: dict) -> dict[str, str]:
    from extraction.doctypes.registry import UnknownDocumentType, get_doctype

    try:
        return get_doctype(doctype_name).field_labels(answer)
    except UnknownDocumentType:
        return {}


def batch_export_documents(*, batch: Batch) -> Iterator[dict[str, Any]]:
    """One record per document of the batch, with its final fields and their proofs, in document order."""
    ids = list(Document.objects.filter(batch=batch).order_by("id").values_list("id", flat=True))
    for chunk in _chunks(ids):
        documents = list(Document.objects.filter(pk__in=chunk).order_by("id")
                         .annotate(current_extraction_id=Extraction.objects.current_id()))
        ext_ids = [d.current_extraction_id for d in documents if d.current_extraction_id]
        extractions = {e.id: e for e in Extraction.objects.filter(pk__in=ext_ids)}
        fields: dict[int, dict[str, FieldValue]] = {}
        for fv in FieldValue.objects.filter(extraction_id__in=ext_ids).order_by("extraction_id", "position", "id"):
            fields.setdefault(fv.extraction_id, {})[fv.path] = fv
        reviewers = _reviewers(chunk)
        for d in documents:
            extraction = extractions.get(d.current_extraction_id)
            reviewed = d.review_status != ReviewStatus.UNREVIEWED.value
            reviewer, reviewed_at = reviewers.get(d.id, ("", None)) if reviewed else ("", None)
            record: dict[str, Any] = {
                "document_id": d.id, "filename": d.filename, "status": d.status, "review_status": d.review_status,
                "stop_reason": extraction.stop_reason if extraction else "", "reviewer": reviewer,
                "reviewed_at": reviewed_at, "error": d.error_message, "extraction": None, "fields": [],
            }
            if extraction is not None:
                record["extraction"] = {"id": extraction.id, "reader": extraction.reader,
                                        "settings": extraction.settings, "best_round": extraction.best_round}
                by_path = fields.get(extraction.id, {})
                answer = extraction.answer if isinstance(extraction.answer, dict) else {}
                labels = _labels(extraction.doctype or batch.doctype, answer)
                for path, node in iter_fields(answer):
                    fv = by_path.get(path)
                    record["fields"].append({
                        "path": path, "label": labels.get(path, path), "value": node.get("value"),
                        "model_value": fv.model_value if fv else node.get("value"),
                        "corrected": bool(fv and fv.corrected), "proofs": _proofs(fv.proofs if fv else []),
                        # how far the model's value could be trusted before review (extraction/confidence/model.py)
                        "confidence": _rounded(fv.field_confidence if fv else None),
                        "confidence_version": fv.confidence_version if fv else None,
                    })
            yield record


def _rounded(confidence: float | None) -> float | None:
    return None if confidence is None else round(confidence, 4)


def batch_export_json(*, batch: Batch) -> str:
    payload = {
        "batch": {"id": batch.id, "name": batch.name, "doctype": batch.doctype, "settings": batch.settings},
        "documents": list(batch_export_documents(batch=batch)),
    }
    return json.dumps(payload, cls=DjangoJSONEncoder, ensure_ascii=False, indent=1)


def csv_cell(value: Any) -> str:
    """A value as CSV text: JSON for lists and dicts, and no formula a spreadsheet would run."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list | dict):
        text = json.dumps(value, cls=DjangoJSONEncoder, ensure_ascii=False)
    elif hasattr(value, "isoformat"):
        return value.isoformat()
    else:
        text = str(value)
    if text[:1] in ("=", "+", "-", "@", "\t", "\r"):
        text = "'" + text
    return text


def _proof_text(proofs: list[dict]) -> str:
    """'p1 [0.1000,0.2000,0.3000,0.0400]; ...' — page and box (left, top, width, height) per proof."""
    parts = []
    for p in proofs:
        box = p.get("bbox") or {}
        coords = ",".join(f"{float(box[k]):.4f}" for k in ("left", "top", "width", "height") if box.get(k) is not None)
        parts.append(f"p{p.get('page')} [{coords}]")
    return "; ".join(parts)


def batch_values_rows(*, batch: Batch) -> Iterator[list[str]]:
    """The values export as CSV rows (header first): one row per field, one row for a document without any."""
    yield VALUE_COLUMNS
    for record in batch_export_documents(batch=batch):
        head = [batch.id, record["document_id"], record["filename"], record["status"], record["review_status"],
                record["stop_reason"], record["reviewer"], record["reviewed_at"],
                record["extraction"]["id"] if record["extraction"] else "",
                record["extraction"]["reader"] if record["extraction"] else ""]
        if not record["fields"]:
            yield [csv_cell(v) for v in head] + ["", "", "", "", "", "", ""]
        for f in record["fields"]:
            yield [csv_cell(v) for v in [*head, f["path"], f["label"], f["value"], f["model_value"], f["corrected"]]] + [
                csv_cell(_proof_text(f["proofs"])), csv_cell(f["confidence"])]


def batch_events(*, batch: Batch) -> Iterator[dict[str, Any]]:
    """Every ReviewEvent of the batch's documents, oldest first; a field is named by its path and its label."""
    rows = (ReviewEvent.objects.filter(document__batch=batch).order_by("created_at", "id")
            .values("id", "created_at", "document_id", "document__filename", "user__username", "kind", "field",
                    "before", "after", "proof_before", "proof_after", "note"))
    edited = set(ReviewEvent.objects.filter(document__batch=batch).exclude(field="")
                 .values_list("document_id", flat=True).distinct())
    answers = dict(Document.objects.filter(pk__in=edited).annotate(current=Extraction.objects.current_id())
                   .values_list("id", "current"))
    current = {e["id"]: e for e in Extraction.objects.filter(pk__in=[a for a in answers.values() if a])
               .values("id", "doctype", "answer")}
    label = _labeller(batch.doctype)
    for r in rows.iterator(chunk_size=2000):
        extraction = current.get(answers.get(r["document_id"]))
        name = label(extraction["answer"] if extraction else {}, r["field"]) if r["field"] else ""
        yield {"event_id": r["id"], "created_at": r["created_at"], "document_id": r["document_id"],
               "filename": r["document__filename"], "user": r["user__username"] or "", "kind": r["kind"],
               "field": r["field"], "label": name, "before": r["before"], "after": r["after"],
               "proof_before": r["proof_before"], "proof_after": r["proof_after"], "note": r["note"]}


def batch_events_json(*, batch: Batch) -> str:
    payload = {"batch": {"id": batch.id, "name": batch.name}, "events": list(batch_events(batch=batch))}
    return json.dumps(payload, cls=DjangoJSONEncoder, ensure_ascii=False, indent=1)


def batch_events_rows(*, batch: Batch) -> Iterator[list[str]]:
    yield EVENT_COLUMNS
    for e in batch_events(batch=batch):
        yield [csv_cell(e[c]) for c in EVENT_COLUMNS]


def csv_lines(rows: Iterable[list]) -> Iterator[str]:
    """CSV text line by line, for a streaming response."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    for row in rows:
        writer.writerow(row)
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate(0)
