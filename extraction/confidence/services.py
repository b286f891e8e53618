"""Writes for field confidence: score an extraction's fields, route a suspicious pass, choose the threshold.

Refitting a model on the fields people judged (reviews and audits) is reviewer.confidence.services.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from extraction.confidence.model import suspicious_pass
from extraction.confidence.second_engine import second_engine_agreement
from extraction.confidence.selectors import confidence_model_current, corrected_rates, suspicious_threshold
from extraction.confidence.signals import field_signals
from extraction.models import Extraction, FieldValue, Page, SuspiciousPassThreshold, default_team_id
from extraction.models import Violation as ViolationRow
from extraction.rules.violations import RuleContext, Violation


def fieldconfidence_save(*, extraction: Extraction, answer: dict, violations: Sequence[Violation], ctx: RuleContext,
                         team_id: int, settled: frozenset = frozenset(),
                         round_answers: Sequence[Any] = ()) -> dict[str, float]:
    """Score every field of the extraction with its team's current model of the type; returns the scores by
    path."""
    version, model = confidence_model_current(doctype=extraction.doctype, team_id=team_id)
    words = dict(Page.objects.filter(document_id=extraction.document_id).exclude(second_engine="")
                 .values_list("number", "second_words"))
    signals = field_signals(answer=answer, violations=violations, ctx=ctx, settled=settled,
                            round_answers=round_answers,
                            corrected_rates=corrected_rates(doctype=extraction.doctype, team_id=team_id),
                            second_engine=second_engine_agreement(answer=answer, ctx=ctx, words_by_page=words)
                            if words else None)
    scores, rows = {}, []
    for fv in FieldValue.objects.filter(extraction=extraction).only("id", "path"):
        found = signals.get(fv.path)
        if found is None:
            continue
        scores[fv.path] = fv.field_confidence = model.predict(found)
        fv.signals, fv.confidence_version = found.values, version
        rows.append(fv)
    FieldValue.objects.bulk_update(rows, ["field_confidence", "signals", "confidence_version"], batch_size=500)
    return scores


def suspicious_pass_check(*, extraction: Extraction, scores: dict[str, float], team_id: int) -> bool:
    """For an extraction that passed every rule: store a `suspicious_pass` violation when its least confident
    field is under the threshold its team chose for the type. True when the document must go to review."""
    found = suspicious_pass(scores, threshold=suspicious_threshold(doctype=extraction.doctype, team_id=team_id))
    if found is None:
        return False
    ViolationRow.objects.create(extraction=extraction, code=found.code, message=found.message,
                                fields=list(found.fields), expected=found.expected, found=found.found)
    return True


def suspicious_threshold_set(*, doctype: str, threshold: float | None, user=None, team_id: int | None = None) -> None:
    """Choose the team's suspicious-pass threshold for the type (None: route no passes; without `team_id`, the
    default team's). Applies to extractions that finish from now on."""
    team_id = team_id if team_id is not None else default_team_id()
    if threshold is None:
        SuspiciousPassThreshold.objects.filter(doctype=doctype, team=team_id).delete()
        return
    if not 0 <= threshold <= 1:
        raise ValueError(f"a threshold is a confidence in [0, 1], got {threshold}")
    SuspiciousPassThreshold.objects.update_or_create(doctype=doctype, team_id=team_id,
                                                     defaults={"threshold": threshold, "chosen_by": user})
