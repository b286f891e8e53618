"""The false-pass estimate of a batch from its supervisors' audits (one query for the items, one count)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from extraction.common import stats
from extraction.confidence.calibration import sample_size_for_width, wilson
from extraction.models import Batch, Document
from extraction.states import Status
from reviewer.batches.selectors import field_family, rule_label
from reviewer.models import AuditItem, FieldAuditItem

NO_RULE = "(no rule fired on these fields)"  # a disagreement on fields no rule looked at


def audit_summary(*, batch: Batch) -> dict[str, Any]:
    """The false-pass rate from the batch's audits: each document counts once (its first verdict)."""
    items = (AuditItem.objects.filter(sample__batch=batch).order_by("decided_at", "id")
             .values("document_id", "verdict", "wrong_fields", "rules", "decided_at"))
    verdict_of: dict[int, dict] = {}
    pending_docs = set()
    for item in items:
        if item["verdict"] == AuditItem.Verdict.PENDING:
            pending_docs.add(item["document_id"])
        elif item["document_id"] not in verdict_of:
            verdict_of[item["document_id"]] = item
    pending_docs -= set(verdict_of)
    disagreements = [v for v in verdict_of.values() if v["verdict"] == AuditItem.Verdict.DISAGREE]
    estimate = stats.proportion(len(disagreements), len(verdict_of))
    by_field: Counter = Counter()
    by_rule: Counter = Counter()
    for d in disagreements:
        for family in {field_family(f) for f in d["wrong_fields"] or []}:
            by_field[family] += 1
        if not d["wrong_fields"]:
            by_field["(fields not named)"] += 1
        for code in d["rules"] or []:
            by_rule[code] += 1
        if d["wrong_fields"] and not d["rules"]:
            by_rule[NO_RULE] += 1
    passed_now = Document.objects.filter(batch=batch, status=Status.PASSED.value).count()
    # Documents a disagreement flagged were passed when sampled: the rate applies to the passed set as drawn.
    passed_population = passed_now + len(disagreements)
    return {
        "estimate": estimate,
        "audited": len(verdict_of),
        "agreed": len(verdict_of) - len(disagreements),
        "disagreed": len(disagreements),
        "pending": len(pending_docs),
        "passed_population": passed_population,
        "wrong_low": round(estimate.low * passed_population),
        "wrong_high": round(estimate.high * passed_population),
        "by_field": [(f, n) for f, n in sorted(by_field.items(), key=lambda kv: (-kv[1], kv[0]))],
        "by_rule": [(c, rule_label(c) if not c.startswith("(") else c, n)
                    for c, n in sorted(by_rule.items(), key=lambda kv: (-kv[1], kv[0]))],
    }


def field_audit_strata(*, sample, width: float = 0.1) -> list[dict[str, Any]]:
    """Per field kind of a field sample: the fields it was drawn from, drawn, judged and wrong; the wrong rate
    with its Wilson 95 % interval; how many more judged fields make that interval at most `width` wide; and
    the estimated wrong fields among the kind's passed fields (the rate and its interval times the population).
    Sampling is per kind, so each kind's interval holds on its own."""
    counts: dict[str, Counter] = {kind: Counter() for kind in sample.population}
    rules: dict[str, Counter] = {kind: Counter() for kind in sample.population}
    for kind, verdict, codes in sample.items.values_list("kind", "verdict", "rules"):
        counts.setdefault(kind, Counter())[verdict] += 1
        for code in codes or []:
            rules.setdefault(kind, Counter())[code] += 1
    out = []
    for kind in sorted(counts):
        c = counts[kind]
        wrong, right = c[FieldAuditItem.Verdict.WRONG], c[FieldAuditItem.Verdict.RIGHT]
        judged, population = wrong + right, int(sample.population.get(kind, 0))
        low, high = wilson(wrong, judged)
        out.append({
            "kind": kind, "population": population, "drawn": sum(c.values()), "judged": judged, "wrong": wrong,
            "rate": wrong / judged if judged else None, "low": low, "high": high,
            "more": sample_size_for_width(wrong, judged, width=width) if judged else None,
            "wrong_estimate": (round(wrong / judged * population), round(low * population),
                               round(high * population)) if judged else None,
            "rules": [(code, rule_label(code), n) for code, n in rules.get(kind, Counter()).most_common()],
        })
    return out
