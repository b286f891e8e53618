"""Reads for the batch dashboard and the side-by-side comparison of runs (the audit estimate: reviewer.audit.selectors).

Each function reads a batch in a fixed number of queries (no query per document) and returns plain data.
Definitions (also shown on the pages):

- the *current* extraction of a document is its newest one (re-runs add new ones);
- *first-round pass*: round 1 of the current extraction completed and broke no rule;
- *pass after the loop*: the current extraction stopped with reason "passed";
- *flagged by rule*: documents whose loop ended flagged, counted once per rule code their kept (best)
  round broke; documents a supervisor flagged in an audit count under "audit_disagree";
- *processing time*: processed_at - processing_started_at of finished documents;
- *truth* (acta QR): a document is correct when all 38 party votes and the three totals equal the QR's.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from decimal import Decimal
from typing import Any

from extraction.common import stats
from extraction.doctypes.base import DocumentType
from extraction.doctypes.selectors import batch_doctype
from extraction.models import Batch, Document, Extraction, Round
from extraction.states import ReviewStatus, Status, StopReason
from reviewer.desk.selectors import rule_label as _rule_label

FLAG_REASONS = (StopReason.STAGNATED.value, StopReason.EXHAUSTED.value)


def rule_label(code: str) -> str:
    if code == "audit_disagree":
        return "A supervisor disagreed in an audit"
    return _rule_label(code)


def batch_in_progress(*, batch: Batch) -> int:
    """How many of the batch's documents are queued or processing (one count: the dashboard's idle poll)."""
    return Document.objects.filter(batch=batch, status__in=(Status.QUEUED.value, Status.PROCESSING.value)).count()


# --- truth (pure) --------------------------------------------------------------------------------------


def truth_mismatches(answer: Any, truth: Any, *, doctype: DocumentType) -> list[str] | None:
    """The paths whose values differ from the document's known truth, as accuracy counts them; None when
    there is no usable truth."""
    comparison = doctype.truth_differences(answer, truth)
    return None if comparison is None else [d.path for d in comparison.differences if d.scored]


def truth_fields(truth: dict, *, doctype: DocumentType) -> int:
    comparison = doctype.truth_differences({}, truth)
    return comparison.scored_fields if comparison else 0


def field_family(path: str) -> str:
    """'rows[4].votes' -> 'rows[].votes': fields of the same kind counted together."""
    return re.sub(r"\[\d+\]", "[]", path)


# --- helpers -------------------------------------------------------------------------------------------


def _extractions_by_document(batch: Batch, fields: tuple[str, ...]) -> dict[int, list[dict]]:
    """Every extraction of the batch's documents as dicts, newest first per document (one query)."""
    out: dict[int, list[dict]] = defaultdict(list)
    rows = Extraction.objects.filter(document__batch=batch).newest_first().values("id", "document_id", *fields)
    for row in rows.iterator(chunk_size=2000):
        out[row["document_id"]].append(row)
    return out


def _rounds_of(extraction_ids: set[int], batch: Batch) -> dict[int, list[dict]]:
    out: dict[int, list[dict]] = defaultdict(list)
    rows = (Round.objects.filter(extraction__document__batch=batch).order_by("extraction_id", "number")
            .values("extraction_id", "number", "state", "violations"))
    for row in rows.iterator(chunk_size=2000):
        if row["extraction_id"] in extraction_ids:
            out[row["extraction_id"]].append(row)
    return out


def _first_round_passed(rounds: list[dict]) -> bool:
    first = next((r for r in rounds if r["number"] == 1), None)
    return bool(first and first["state"] == Round.State.COMPLETED and not first["violations"])


def _best_round_codes(extraction: dict, rounds: list[dict]) -> set[str]:
    best = next((r for r in rounds if r["number"] == extraction.get("best_round")), None)
    if best is None and rounds:
        best = rounds[-1]
    return {str(v.get("code") or "?") for v in (best or {}).get("violations") or [] if isinstance(v, dict)}


def _seconds(delta) -> float:
    return delta.total_seconds()


def _pct(p: stats.Proportion) -> dict:
    return {"k": p.k, "n": p.n, "percent": p.percent, "low": p.low_percent, "high": p.high_percent}


# --- the dashboard -------------------------------------------------------------------------------------


def batch_dashboard(*, batch: Batch) -> dict[str, Any]:
    documents = list(Document.objects.filter(batch=batch).values(
        "id", "status", "review_status", "truth", "processing_started_at", "processed_at", "duplicate_of_id"))
    extractions = _extractions_by_document(
        batch, ("stop_reason", "best_round", "prompt_tokens", "completion_tokens", "cost", "reader", "settings"))
    current = {doc_id: runs[0] for doc_id, runs in extractions.items()}
    rounds = _rounds_of({e["id"] for e in current.values()}, batch)

    by_status = Counter(d["status"] for d in documents)
    by_review = Counter(d["review_status"] for d in documents if d["status"] == Status.FLAGGED.value)

    finished = [e for e in current.values() if e["stop_reason"]]
    first_pass = sum(1 for e in finished if _first_round_passed(rounds.get(e["id"], [])))
    loop_pass = sum(1 for e in finished if e["stop_reason"] == StopReason.PASSED.value)
    first_rate = stats.proportion(first_pass, len(finished))
    loop_rate = stats.proportion(loop_pass, len(finished))

    round_counts = [len(rounds.get(e["id"], [])) for e in finished]
    stop_reasons = Counter(e["stop_reason"] for e in finished)

    flagged_by_rule: Counter = Counter()
    status_of = {d["id"]: d["status"] for d in documents}
    for doc_id, e in current.items():
        if e["stop_reason"] in FLAG_REASONS:
            for code in _best_round_codes(e, rounds.get(e["id"], [])):
                flagged_by_rule[code] += 1
        elif e["stop_reason"] == StopReason.PASSED.value and status_of.get(doc_id) == Status.FLAGGED.value:
            flagged_by_rule["audit_disagree"] += 1

    # tokens and cost: every run counts (re-runs cost money too)
    per_doc_tokens, per_doc_cost = [], []
    total_prompt = total_completion = 0
    total_cost = Decimal(0)
    for runs in extractions.values():
        p = sum(r["prompt_tokens"] for r in runs)
        c = sum(r["completion_tokens"] for r in runs)
        cost = sum((r["cost"] for r in runs), Decimal(0))
        total_prompt, total_completion, total_cost = total_prompt + p, total_completion + c, total_cost + cost
        per_doc_tokens.append(p + c)
        per_doc_cost.append(float(cost))

    times = [_seconds(d["processed_at"] - d["processing_started_at"]) for d in documents
             if d["status"] in (Status.PASSED, Status.FLAGGED, Status.FAILED)
             and d["processed_at"] and d["processing_started_at"] and d["processed_at"] >= d["processing_started_at"]]

    return {
        "total": len(documents),
        "by_status": [(s.value, by_status.get(s.value, 0)) for s in Status],
        "by_review": [(s.value, by_review.get(s.value, 0)) for s in ReviewStatus],
        "finished": len(finished),
        "first_round_pass": _pct(first_rate),
        "loop_pass": _pct(loop_rate),
        "loop_gain": (loop_rate.percent - first_rate.percent) if finished else None,
        "rounds": [(str(n), k) for n, k in stats.distribution(round_counts)],
        "stop_reasons": [(r.value, stop_reasons.get(r.value, 0)) for r in StopReason],
        "flagged_by_rule": [(code, rule_label(code), n)
                            for code, n in sorted(flagged_by_rule.items(), key=lambda kv: (-kv[1], kv[0]))],
        "tokens": {
            "prompt": total_prompt, "completion": total_completion, "total": total_prompt + total_completion,
            "per_document_mean": stats.mean(per_doc_tokens), "per_document_median": stats.median(per_doc_tokens),
        },
        "cost": {
            "total": total_cost, "per_document_mean": stats.mean(per_doc_cost),
            "per_document_median": stats.median(per_doc_cost),
        },
        "time": {"n": len(times), "median": stats.median(times), "p95": stats.percentile(times, 95)},
        "truth": _truth_section(batch=batch, documents=documents, current=current),
    }


def _truth_section(*, batch: Batch, documents: list[dict], current: dict[int, dict]) -> dict[str, Any] | None:
    """Accuracy against the known truth (acta QR); None when no document of the batch has one."""
    doctype = batch_doctype(batch=batch)
    with_truth = {d["id"]: d for d in documents
                  if truth_mismatches({}, d["truth"], doctype=doctype) is not None and d["id"] in current}
    if not with_truth:
        return None
    ext_ids = {current[doc_id]["id"]: doc_id for doc_id in with_truth}
    answers = dict(Extraction.objects.filter(pk__in=list(ext_ids)).values_list("id", "answer"))
    flagged_ext = {current[d]["id"]: current[d]["best_round"] for d in with_truth
                   if current[d]["stop_reason"] in FLAG_REASONS}
    model_answers: dict[int, Any] = {}
    for ext_id, number, parsed in (Round.objects.filter(extraction_id__in=list(flagged_ext))
                                   .values_list("extraction_id", "number", "parsed")):
        if number == flagged_ext[ext_id]:
            model_answers[ext_id] = parsed

    def score(pairs: list[tuple[Any, dict]]) -> dict:
        right_docs = right_fields = all_fields = 0
        for answer, truth in pairs:
            wrong = truth_mismatches(answer, truth, doctype=doctype) or []
            right_docs += not wrong
            n = truth_fields(truth, doctype=doctype)
            all_fields += n
            right_fields += max(0, n - len(wrong))
        return {"documents": _pct(stats.proportion(right_docs, len(pairs))),
                "fields": _pct(stats.proportion(right_fields, all_fields)),
                "wrong": len(pairs) - right_docs}

    passed, flagged_before, flagged_after = [], [], []
    for doc_id, doc in with_truth.items():
        e = current[doc_id]
        truth = doc["truth"]
        if e["stop_reason"] == StopReason.PASSED.value:
            passed.append((answers.get(e["id"]), truth))
        elif e["stop_reason"] in FLAG_REASONS:
            flagged_before.append((model_answers.get(e["id"]), truth))
            if doc["review_status"] in (ReviewStatus.VERIFIED.value, ReviewStatus.CORRECTED.value):
                flagged_after.append((answers.get(e["id"]), truth))
    passed_score = score(passed)
    return {
        "documents": len(with_truth),
        "passed": passed_score,
        "flagged_before": score(flagged_before),
        "flagged_after": score(flagged_after),
        "passed_but_wrong": passed_score["wrong"],
    }


# --- runs side by side ---------------------------------------------------------------------------------


def run_key(extraction: dict) -> tuple[str, str, str, str, str, str]:
    """What distinguishes one set of settings from another: reader, model, input mode, max rounds, OCR, and
    the version of a type defined in the app."""
    s = extraction.get("settings") or {}
    return (extraction.get("reader") or "", str(s.get("model") or ""), str(s.get("input") or ""),
            str(s.get("max_rounds") or ""), str(s.get("ocr") or ""), str(s.get("type_version") or ""))


def batch_runs(*, batch: Batch, max_documents: int = 200) -> dict[str, Any]:
    """Each set of settings the batch was run with, compared; and documents run more than once, run by run."""
    doctype = batch_doctype(batch=batch)
    extractions = _extractions_by_document(
        batch, ("stop_reason", "best_round", "prompt_tokens", "completion_tokens", "cost", "reader", "settings",
                "started_at"))
    all_ids = {e["id"] for runs in extractions.values() for e in runs}
    rounds = _rounds_of(all_ids, batch)
    docs = {d["id"]: d for d in Document.objects.filter(batch=batch).values("id", "filename", "truth")}
    multi = [doc_id for doc_id, runs in extractions.items() if len(runs) > 1]
    answer_ids = [e["id"] for doc_id, runs in extractions.items() for e in runs
                  if truth_mismatches({}, docs.get(doc_id, {}).get("truth"), doctype=doctype) is not None]
    answers = dict(Extraction.objects.filter(pk__in=answer_ids).values_list("id", "answer")) if answer_ids else {}

    groups: dict[tuple, dict] = {}
    for doc_id, runs in extractions.items():
        truth = docs.get(doc_id, {}).get("truth")
        for e in runs:
            g = groups.setdefault(run_key(e), {"key": run_key(e), "n": 0, "passed": 0, "first": 0, "rounds": [],
                                               "tokens": 0, "cost": Decimal(0), "truth_n": 0, "truth_right": 0,
                                               "started": e["started_at"]})
            rs = rounds.get(e["id"], [])
            g["n"] += 1
            g["passed"] += e["stop_reason"] == StopReason.PASSED.value
            g["first"] += _first_round_passed(rs)
            g["rounds"].append(len(rs))
            g["tokens"] += e["prompt_tokens"] + e["completion_tokens"]
            g["cost"] += e["cost"]
            g["started"] = min(g["started"], e["started_at"])
            if e["id"] in answers:
                g["truth_n"] += 1
                g["truth_right"] += not truth_mismatches(answers[e["id"]], truth, doctype=doctype)
    compared = []
    for g in sorted(groups.values(), key=lambda g: g["started"]):
        reader, model, input_mode, max_rounds, ocr, type_version = g["key"]
        compared.append({
            "reader": reader, "model": model, "input": input_mode, "max_rounds": max_rounds, "ocr": ocr,
            "type_version": type_version, "n": g["n"],
            "pass": _pct(stats.proportion(g["passed"], g["n"])),
            "first_round_pass": _pct(stats.proportion(g["first"], g["n"])),
            "mean_rounds": stats.mean(g["rounds"]), "tokens": g["tokens"], "cost": g["cost"],
            "accuracy": _pct(stats.proportion(g["truth_right"], g["truth_n"])) if g["truth_n"] else None,
        })

    per_document = []
    for doc_id in sorted(multi)[:max_documents]:
        truth = docs.get(doc_id, {}).get("truth")
        cells = []
        for e in reversed(extractions[doc_id]):  # oldest first, left to right
            rs = rounds.get(e["id"], [])
            wrong = truth_mismatches(answers[e["id"]], truth, doctype=doctype) if e["id"] in answers else None
            cells.append({
                "id": e["id"], "started_at": e["started_at"], "stop_reason": e["stop_reason"] or "unfinished",
                "rounds": len(rs),
                # (code, label): the page names each rule as people do and keeps the code beside it
                "rules": [(code, rule_label(code)) for code in sorted(_best_round_codes(e, rs))] if rs else [],
                "model": (e.get("settings") or {}).get("model") or e["reader"],
                "type_version": (e.get("settings") or {}).get("type_version"),
                "truth_wrong": None if wrong is None else len(wrong),
            })
        per_document.append({"id": doc_id, "filename": docs.get(doc_id, {}).get("filename", ""), "runs": cells})
    return {"runs": compared, "documents": per_document, "documents_total": len(multi),
            "max_columns": max((len(d["runs"]) for d in per_document), default=0)}

