"""Run the whole pipeline on files, right here, and print what was read and why it can be trusted.

    python manage.py extract FILE... --type acta [--json] [--engine pdf-text] [--max-rounds N]

The files go into a new batch ("extract <timestamp>"); each document is rendered, OCR'd and read
(configured LLM, or the offline template reader for actas) synchronously. For each document the report
gives its status, stop reason and rounds, every field's value with its proof (block ids, page, boxes),
the broken rules, the usage, and -- where the truth is known (the acta QR) -- the fields that differ from it.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from extraction.doctypes.registry import DOCTYPE_CHOICES, get_doctype
from extraction.management.files import incoming_files
from extraction.models import Document, Extraction
from extraction.ocr.registry import ENGINE_CHOICES
from extraction.pipeline.ingest import batch_create_from_files
from extraction.pipeline.process import document_process
from extraction.states import FINAL_STATUSES


class Command(BaseCommand):
    help = "Run OCR and extraction synchronously on files and print values, proofs, violations and usage."

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", type=Path, help="files (PDF, images, zips) or folders")
        parser.add_argument("--type", required=True, choices=[c for c, _ in DOCTYPE_CHOICES], dest="doctype")
        parser.add_argument("--engine", default=None, choices=[c for c, _ in ENGINE_CHOICES],
                            help="OCR engine (default: OCR_ENGINE)")
        parser.add_argument("--max-rounds", type=int, default=None, help="rounds of the loop (default: MAX_ROUNDS)")
        parser.add_argument("--json", action="store_true", help="print one JSON document instead of text")

    def handle(self, *args, paths, doctype, engine, max_rounds, json: bool, **options):
        files = incoming_files(paths)
        if max_rounds is not None and max_rounds < 1:
            raise CommandError("--max-rounds must be at least 1")
        batch = batch_create_from_files(
            name=f"extract {timezone.localtime():%Y-%m-%d %H:%M:%S}", doctype=doctype,
            ocr_engine=engine or settings.OCR_ENGINE, files=files,
            options={"max_rounds": max_rounds} if max_rounds else None, queue=False,
        )
        reports = []
        for doc in batch.documents.order_by("id"):
            if doc.status not in FINAL_STATUSES:
                if not json:
                    self.stderr.write(f"reading {doc.filename} ...")
                document_process(document_id=doc.id)
            reports.append(document_report(Document.objects.get(pk=doc.id)))
        result = {"batch": {"id": batch.id, "name": batch.name, "doctype": doctype, "ocr_engine": batch.ocr_engine},
                  "documents": reports}
        if json:
            self.stdout.write(_dumps(result))
        else:
            self.stdout.write(render_text(result))


def _dumps(data: Any) -> str:
    def default(obj: Any) -> Any:
        if isinstance(obj, Decimal):
            return float(obj)
        return str(obj)

    return json.dumps(data, ensure_ascii=False, indent=2, default=default)


# --- the report ----------------------------------------------------------------------------------------


def document_report(doc: Document) -> dict[str, Any]:
    """Everything the command prints about one document, as JSON-safe data."""
    report: dict[str, Any] = {
        "id": doc.id, "filename": doc.filename, "status": doc.status,
        "error": {"code": doc.error_code, "message": doc.error_message} if doc.error_code else None,
        "pages": doc.page_count,
    }
    extraction = Extraction.objects.current_for(doc)
    if extraction is None:
        return {**report, "reader": None, "stop_reason": None, "best_round": None, "rounds": [],
                "fields": [], "violations": [], "usage": None, "truth_differs": None}
    rounds = [
        {"number": r.number, "state": r.state, "violations": len(r.violations or []),
         "codes": sorted({v["code"] for v in r.violations or []}), "error": r.error or None,
         "prompt_tokens": r.prompt_tokens, "completion_tokens": r.completion_tokens, "latency_ms": r.latency_ms}
        for r in extraction.rounds.order_by("number")
    ]
    fields = [
        {"path": f.path, "value": f.value,
         "confidence": None if f.field_confidence is None else round(f.field_confidence, 4),
         "confidence_version": f.confidence_version,
         "proofs": [{"block_id": p.get("block_id"), "page": p.get("page"), "type": p.get("type"),
                     "text": p.get("text"), "method": p.get("method"), "bbox": p.get("bbox")} for p in f.proofs]}
        for f in extraction.fields.order_by("position")
    ]
    violations = [
        {"code": v.code, "fields": v.fields, "message": v.message, "expected": v.expected, "found": v.found}
        for v in extraction.violations.order_by("id")
    ]
    return {
        **report,
        "reader": extraction.reader,
        "stop_reason": extraction.stop_reason,
        "best_round": extraction.best_round,
        "rounds": rounds,
        "fields": fields,
        "violations": violations,
        "usage": {"prompt_tokens": extraction.prompt_tokens, "completion_tokens": extraction.completion_tokens,
                  "cost": float(extraction.cost)},
        "truth_differs": truth_differences(extraction.doctype, extraction.answer, doc.truth),
    }


def truth_differences(doctype: str, answer: dict | None, truth: dict | None) -> list[dict[str, Any]] | None:
    """The fields whose value is not the document's known truth (acta QR); None when no truth is known."""
    comparison = get_doctype(doctype).truth_differences(answer or {}, truth)
    if comparison is None:
        return None
    return [{"path": d.path, "party": d.row, "value": d.found, "truth": d.truth} for d in comparison.differences]


def _box(bbox: dict | None) -> str:
    if not bbox:
        return "(no box)"
    return f"left {bbox['left']:.4f} top {bbox['top']:.4f} width {bbox['width']:.4f} height {bbox['height']:.4f}"


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render_text(result: dict[str, Any]) -> str:
    batch = result["batch"]
    out = [f"batch {batch['id']} '{batch['name']}' ({batch['doctype']}, OCR {batch['ocr_engine']}): "
           f"{len(result['documents'])} document(s)"]
    for d in result["documents"]:
        out += ["", "=" * 100, f"{d['filename']}: {d['status'].upper()}"]
        if d["error"]:
            out.append(f"  error [{d['error']['code']}]: {d['error']['message']}")
        if d["reader"] is None:
            continue
        out.append(f"  reader: {d['reader']}   stop reason: {d['stop_reason']}   best round: {d['best_round']}   "
                   f"rounds: {len(d['rounds'])}")
        for r in d["rounds"]:
            line = f"    round {r['number']}: {r['state']}, {r['violations']} violation(s)"
            if r["codes"]:
                line += f" ({', '.join(r['codes'])})"
            if r["error"]:
                line += f" -- {r['error']}"
            out.append(line)
        out.append("  fields:")
        for f in d["fields"]:
            sure = "" if f["confidence"] is None else f"  (confidence {f['confidence']:.2f})"
            out.append(f"    {f['path']} = {_short(f['value'])}{sure}")
            if not f["proofs"]:
                out.append("      proof: none")
            for p in f["proofs"]:
                out.append(f"      proof: block {p['block_id']} {p['type']} page {p['page']} {_box(p['bbox'])} "
                           f"{p['method']} \"{_short(p['text'], 50)}\"")
        out.append(f"  violations: {len(d['violations'])}")
        for v in d["violations"]:
            out.append(f"    [{v['code']}] {v['message']}")
        u = d["usage"]
        out.append(f"  usage: {u['prompt_tokens']} prompt + {u['completion_tokens']} completion tokens, "
                   f"cost {u['cost']:.6f}")
        if d["truth_differs"] is None:
            out.append("  truth: unknown")
        elif not d["truth_differs"]:
            out.append("  truth: every field matches the QR")
        else:
            out.append(f"  truth: {len(d['truth_differs'])} field(s) differ from the QR")
            for t in d["truth_differs"]:
                party = f" ({t['party']})" if t["party"] else ""
                out.append(f"    {t['path']}{party}: read {_short(t['value'])}, truth {t['truth']}")
    return "\n".join(out)
