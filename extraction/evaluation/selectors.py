"""Reads of evaluation sets: the items, the runs, and a run's report side by side with the live version's."""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal
from typing import Any

from django.db.models import Count, QuerySet

from extraction.doctypes.base import DocumentType, path_words
from extraction.doctypes.registry import UnknownDocumentType, get_doctype, rule_labels
from extraction.evaluation.expected import answer_flat
from extraction.evaluation.scoring import DocumentRun, comparison_warnings, run_score
from extraction.models import EvaluationItem, EvaluationResult, EvaluationRun, Extraction, Violation

__all__ = ["evaluation_items", "evaluation_report", "evaluation_runs", "evaluation_runs_with_their_own", "run_candidate_newest",
           "run_name"]


def evaluation_items(*, doctype: str, team_id: int) -> list[EvaluationItem]:
    return list(EvaluationItem.objects.filter(doctype=doctype, team=team_id, removed_at__isnull=True)
                .select_related("confirmed_by").order_by("-id"))


def evaluation_runs(*, doctype: str, team_id: int, limit: int = 20) -> list[EvaluationRun]:
    """The type's newest runs of candidates (a run of the live version made for a comparison is shown with
    its candidate)."""
    runs = EvaluationRun.objects.filter(doctype=doctype, team=team_id)
    baselines = runs.filter(compared_with__isnull=False).values("compared_with")
    return list(runs.exclude(pk__in=baselines)
                .select_related("created_by", "compared_with").annotate(n=Count("results")).order_by("-id")[:limit])


def evaluation_runs_with_their_own() -> QuerySet[EvaluationRun]:
    """Runs with what their pages show of them, for an access helper to scope and pick one of."""
    return EvaluationRun.objects.select_related("compared_with", "created_by")


def run_name(run: EvaluationRun) -> str:
    """'v2 (model gpt-x, 3 rounds)': the version and the settings that differ from the instance's."""
    settings = run.settings or {}
    said = [f"model {settings['llm_model']}"] if settings.get("llm_model") else []
    said += [f"{settings['llm_input']} input"] if settings.get("llm_input") else []
    said += [f"{settings['max_rounds']} rounds"] if settings.get("max_rounds") else []
    said += [f"OCR {settings['ocr']}"] if settings.get("ocr") not in (None, "", "auto") else []
    name = f"v{run.version}" if run.version else "the shipped definition"
    return f"{name} ({', '.join(said)})" if said else name


def _documents(run: EvaluationRun, answers: list[dict] | None = None) -> list[DocumentRun]:
    """The run's documents as the scoring reads them; `answers` collects the answers read (for labels)."""
    results = list(EvaluationResult.objects.filter(run=run).select_related("item", "document").order_by("item_id"))
    current = Extraction.objects.filter(document_id__in=[r.document_id for r in results]).current_by_document()
    extractions = {e["id"]: e for e in Extraction.objects.filter(pk__in=current.values()).values(
        "id", "answer", "cost", "started_at", "finished_at")}
    fired: dict[int, dict[str, list[str]]] = defaultdict(dict)
    for extraction_id, code, fields in Violation.objects.filter(extraction_id__in=current.values()).values_list(
            "extraction_id", "code", "fields"):
        fired[extraction_id].setdefault(code, []).extend(fields or [])
    out = []
    for result in results:
        extraction = extractions.get(current.get(result.document_id), {})
        if answers is not None and isinstance(extraction.get("answer"), dict):
            answers.append(extraction["answer"])
        started, finished = extraction.get("started_at"), extraction.get("finished_at")
        out.append(DocumentRun(
            item=result.item_id, name=result.item.filename, status=result.document.status,
            found=answer_flat(extraction.get("answer")), expected=result.item.expected,
            fired=fired.get(extraction.get("id"), {}), cost=extraction.get("cost") or Decimal(0),
            seconds=(finished - started).total_seconds() if started and finished else None))
    return out


def _doctype(run: EvaluationRun) -> DocumentType | None:
    try:
        return get_doctype(run.doctype, run.version)
    except UnknownDocumentType:
        return None


def _rule_codes(run: EvaluationRun) -> dict[str, str]:
    doctype = _doctype(run)
    return dict(doctype.rule_labels) if doctype else {}


def _field_names(run: EvaluationRun, kinds: list[str], answers: list[dict]) -> dict[str, str]:
    """Each field (a table's column as one) in the words the desk uses, from an answer the run read."""
    doctype = _doctype(run)
    if doctype is None or not answers:
        return {kind: path_words(kind.replace("[]", "")) for kind in kinds}
    labels = doctype.field_labels(max(answers, key=lambda a: len(str(a))))
    return {kind: labels.of_family(kind) for kind in kinds}


def evaluation_report(*, run: EvaluationRun) -> dict[str, Any]:
    """The run's figures (extraction/evaluation/scoring.py) and, when it was started beside the live version,
    that run's figures and the sentences that say where this one is worse."""
    arms = [run, run.compared_with] if run.compared_with_id else [run]
    codes = [_rule_codes(arm) for arm in arms]  # each arm's own rules, those that never fired included
    scores, answers = [], []
    for arm, own in zip(arms, codes, strict=True):
        score = run_score(_documents(arm, answers), rule_codes=own)
        scores.append({"run": arm, "name": run_name(arm), **score.as_dict(), "per_document": score.per_document})
    mine, live = scores[0], scores[1] if len(scores) == 2 else None
    report: dict[str, Any] = {
        "run": run, "arms": scores, "labels": rule_labels() | {c: label for own in codes for c, label in own.items()},
        "done": all(s["done"] == s["documents"] for s in scores),
        "warnings": comparison_warnings(mine, live, candidate_name=mine["name"], live_name=live["name"])
        if live else [],
        "fields": sorted(set().union(*(s["fields"] for s in scores))),
        "rules": sorted(set().union(*(s["rules"] for s in scores))),
    }
    report["field_names"] = _field_names(run, report["fields"], answers)
    return report


def run_candidate_newest(*, doctype: str, team_id: int, version: int, live: int | None) -> EvaluationRun | None:
    """The newest run of `version` compared with a run of the `live` version (what making it live rests on)."""
    return (EvaluationRun.objects.filter(doctype=doctype, team=team_id, version=version, compared_with__version=live)
            .select_related("compared_with").order_by("-id").first())
