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
from extraction.models import Extraction, FieldValue, Page, SuspiciousPassThreshold
from extraction.models import Violation as ViolationRow
from extraction.rules.violations import RuleContext, Violation


def fieldconfidence_save(*, extraction: Extraction, answer: dict, violations: Sequence[Violation], ctx: RuleContext,
                         settled: frozenset = frozenset(), round_answers: Sequence[Any] = ()) -> dict[str, float]:
    """Score every field of the extraction with its type's current model; returns the scores by path."""
    version, model = confidence_model_current(doctype=extraction.doctype)
    words = dict(Page.objects.filter(document_id=extraction.document_id).exclude(second_engine="")
                 .values_list("number", "second_words"))
    signals = field_signals(answer=answer, violations=violations, ctx=ctx, settled=settled,
                            round_answers=round_answers, corrected_rates=corrected_rates(doctype=extraction.doctype),
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


def suspicious_pass_check(*, extraction: Extraction, scores: dict[str, float]) -> bool:
    """For an extraction that passed every rule: store a `suspicious_pass` violation when its least confident
    field is under the type's chosen threshold. True when the document must go to review."""
    found = suspicious_pass(scores, threshold=suspicious_threshold(doctype=extraction.doctype))
    if found is None:
        return False
    ViolationRow.objects.create(extraction=extraction, code=found.code, message=found.message,
                                fields=list(found.fields), expected=found.expected, found=found.found)
    return True


def suspicious_threshold_set(*, doctype: str, threshold: float | None, user=None) -> None:
    """Choose the type's suspicious-pass threshold (None: route no passes). Applies to extractions that finish
    from now on."""
    if threshold is None:
        SuspiciousPassThreshold.objects.filter(doctype=doctype).delete()
        return
    if not 0 <= threshold <= 1:
        raise ValueError(f"a threshold is a confidence in [0, 1], got {threshold}")
    SuspiciousPassThreshold.objects.update_or_create(doctype=doctype,
                                                     defaults={"threshold": threshold, "chosen_by": user})
