"""Rows as the API gives them. The labels, the rules in people's words and the fields they involve are the
desk's own (reviewer/desk/fields.py), so the API and the desk say the same thing."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.urls import reverse

from extraction.doctypes.base import DocumentType
from extraction.models import Batch, DocTypeVersion, Document, Extraction, Round
from extraction.rules.involved import involved_paths
from reviewer.desk import selectors
from reviewer.desk import services as review
from reviewer.desk.fields import field_items, in_words


def doctype_summary(doctype: DocumentType) -> dict[str, Any]:
    return {"name": doctype.name, "label": doctype.label, "source": doctype_source(doctype), "version": doctype.version}


def doctype_source(doctype: DocumentType) -> str:
    """Where a type comes from, in the Types page's words: written in code, a definition shipped with the
    project, or defined in the app (only these have versions)."""
    if doctype.version is not None:
        return "defined"
    return "shipped" if doctype.definition is not None else "code"


def doctype_detail(doctype: DocumentType, versions: list[DocTypeVersion]) -> dict[str, Any]:
    labels = {**doctype.rule_labels}
    definition = doctype.definition.as_data() if doctype.definition is not None else None
    for rule in (definition or {}).get("rules") or []:
        labels.setdefault(rule.get("code", ""), rule.get("label", ""))
    return {
        **doctype_summary(doctype),
        "fields": [{"path": path, "label": label} for path, label in doctype.field_labels({}).items()],
        "editable": list(doctype.editable),
        "rules": [{"code": code, "label": label} for code, label in labels.items() if code],
        "definition": definition,
        "versions": [{"version": v.version, "label": v.label, "created_at": v.created_at,
                      "created_by": v.created_by.get_username() if v.created_by else None} for v in versions],
    }


def batch_out(batch: Batch) -> dict[str, Any]:
    counts = selectors.batch_status_counts(batch=batch)
    progress = {key: counts[key] for key in ("total", "done", "queued", "processing", "passed", "flagged",
                                             "reviewed", "failed")}
    progress["unsent"] = selectors.batch_unsent_count(batch=batch)
    return {"id": batch.id, "name": batch.name, "doctype": batch.doctype, "doctype_version": batch.doctype_version,
            "ocr_engine": batch.ocr_engine, "settings": batch.settings or {}, "created_at": batch.created_at,
            "progress": progress}


def _proof(p: dict) -> dict[str, Any]:
    box = p.get("bbox") or None
    return {"page": int(p["page"]) if p.get("page") is not None else None,
            "box": {k: box[k] for k in ("left", "top", "width", "height")} if box else None,
            "type": p.get("type"), "words": p.get("text"), "method": p.get("method")}


def _run(extraction: Extraction) -> dict[str, Any]:
    rounds = Round.objects.filter(extraction=extraction).order_by("number")
    return {
        "id": extraction.id, "reader": extraction.reader, "doctype_version": extraction.doctype_version,
        "settings": extraction.settings or {}, "stop_reason": extraction.stop_reason,
        "best_round": extraction.best_round, "prompt_tokens": extraction.prompt_tokens,
        "completion_tokens": extraction.completion_tokens, "cost": float(extraction.cost),
        "currency": settings.LLM_PRICE_CURRENCY,
        "rounds": [{"number": r.number, "state": r.state, "prompt_tokens": r.prompt_tokens,
                    "completion_tokens": r.completion_tokens, "cost": float(r.cost), "latency_ms": r.latency_ms,
                    "broken_rules": len(r.violations or [])} for r in rounds],
    }


def document_out(document: Document) -> dict[str, Any]:
    """A document's result: state, run (rounds, cost), fields with proofs, broken rules, pages."""
    extraction = Extraction.objects.current_for(document)
    violations = selectors.desk_violations(extraction=extraction) if extraction else []
    _, labels, items = field_items(document, extraction, violations, can_edit=False)
    fields = []
    for path, item in items.items():
        fv = item["fv"]
        fields.append({
            "path": path, "label": item["label"], "value": item["value"],
            "model_value": fv.model_value if fv else item["value"], "corrected": item["corrected"],
            "confidence": fv.field_confidence if fv else None, "ocr_confidence": fv.confidence if fv else None,
            "proofs": [_proof(p) for p in (fv.proofs if fv else None) or []],
        })
    rules = []
    for v in violations:
        involved = involved_paths(v.fields, items) if items else list(v.fields or [])
        rules.append({"id": v.id, "code": v.code, "label": v.label, "message": in_words(v.message, v.fields, labels),
                      "fields": involved, "field_labels": [labels.of(p) for p in involved],
                      "expected": v.expected, "found": v.found})
    live = review.claim_is_live(document)
    return {
        "id": document.id, "batch_id": document.batch_id, "doctype": document.batch.doctype,
        "filename": document.filename, "status": document.status, "review_status": document.review_status,
        "version": document.version, "error": document.error_message,
        "claim": {"user": document.claimed_by.get_username(), "until": review.claim_expires_at(document)}
        if live else None,
        "run": _run(extraction) if extraction else None, "fields": fields, "broken_rules": rules,
        "pages": [{"number": n, "width": p.width, "height": p.height,
                   "image": reverse("api:page_image", kwargs={"document_id": document.id, "number": n}),
                   "annotated": reverse("api:page_annotated", kwargs={"document_id": document.id, "number": n})}
                  for n, p in selectors.document_pages(document=document).items()],
    }
