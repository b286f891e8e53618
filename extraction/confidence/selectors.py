"""Reads for field confidence: the model in use per document type, each document's newest extraction with
fields, how often people correct each field kind, the suspicious-pass threshold. The fields people judged
(reviews and audits: the labels a model is fitted on) are reviewer.confidence.selectors."""

from __future__ import annotations

from collections import Counter

from extraction.confidence.model import ConfidenceModel as Scorer
from extraction.confidence.model import prior_model
from extraction.confidence.signals import field_kind
from extraction.models import ConfidenceModel, Extraction, FieldValue, SuspiciousPassThreshold, default_team_id
from extraction.states import ReviewStatus

_REVIEWED = [ReviewStatus.VERIFIED.value, ReviewStatus.CORRECTED.value]
_RECENT_LABELS = 20_000  # the newest judged fields are enough to estimate a rate or fit a dozen weights


def _team(team_id: int | None) -> int:
    return team_id if team_id is not None else default_team_id()


def confidence_model_current(*, doctype: str, team_id: int | None = None) -> tuple[int, Scorer]:
    """(version, model) the team uses for the type (each team's is fitted on its own people's judgements): its
    newest stored version, else version 0, the prior. Without `team_id`, the default team's."""
    row = ConfidenceModel.objects.filter(doctype=doctype, team=_team(team_id)).order_by("-version").first()
    if row is None:
        return 0, prior_model()
    return row.version, Scorer.from_json(row.params)


def latest_extractions(doctype: str, team_id: int | None = None) -> dict[int, int]:
    """Per document of the type in the team (the default team without one), its newest extraction that produced
    fields."""
    return Extraction.objects.filter(doctype=doctype, answer__isnull=False, document__batch__trial=False,
                                     document__batch__team=_team(team_id)).current_by_document()


_RATES_SECONDS = 300  # every finished extraction asks; the rates move slowly, so they are kept a while


def corrected_rates(*, doctype: str, team_id: int | None = None) -> dict[str, float]:
    """Per field kind (`rows[].votes`), the share of the team's reviewed fields whose value people changed
    (cached)."""
    from django.core.cache import cache
    from django.db.models import Max

    from extraction.models import Document, ReviewEvent

    # keyed by how far reviewing has got, so a new decision is counted at once
    team = _team(team_id)
    reviewed = Document.objects.filter(batch__doctype=doctype, batch__trial=False, batch__team=team,
                                       review_status__in=_REVIEWED).count()
    last_event = ReviewEvent.objects.aggregate(last=Max("id"))["last"] or 0
    return cache.get_or_set(f"confidence-corrected-rates:{team}:{doctype}:{reviewed}:{last_event}",
                            lambda: _corrected_rates(doctype, team), _RATES_SECONDS)


def _corrected_rates(doctype: str, team: int) -> dict[str, float]:
    seen: Counter = Counter()
    changed: Counter = Counter()
    rows = (FieldValue.objects.filter(
        extraction__doctype=doctype, extraction__document__batch__trial=False, extraction__document__batch__team=team,
        extraction__document__review_status__in=[ReviewStatus.VERIFIED.value, ReviewStatus.CORRECTED.value])
        .order_by("-id").values_list("path", "value", "model_value")[:_RECENT_LABELS])
    for path, value, model_value in rows:
        kind = field_kind(path)
        seen[kind] += 1
        changed[kind] += value != model_value
    return {kind: changed[kind] / n for kind, n in seen.items()}


def suspicious_threshold(*, doctype: str, team_id: int | None = None) -> float | None:
    """The team's chosen suspicious-pass threshold for the type; None when none was chosen (no pass is
    routed)."""
    return (SuspiciousPassThreshold.objects.filter(doctype=doctype, team=_team(team_id))
            .values_list("threshold", flat=True).first())
