"""Supervisor audits: draw a reproducible random sample of a batch's passed documents, record verdicts.

A disagreement sends its document to the reviewers' queue (passed -> flagged through the guarded
transition), with the supervisor's note as a ReviewEvent and as a violation the desk and the queue show.
Each verdict is given once: the write is a conditional UPDATE on a pending item.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from extraction.common import stats
from extraction.models import Batch, Document, Extraction, FieldValue, ReviewEvent, Round, Violation
from extraction.pipeline.transitions import document_transition
from extraction.rules.answers import iter_fields
from extraction.rules.involved import involved_paths
from extraction.states import Status
from reviewer.models import AuditItem, AuditSample, FieldAuditItem

# The code of the violation a disagreement adds to the document's current extraction.
AUDIT_DISAGREE_CODE = "audit_disagree"
MAX_SEED = 2**53  # seeds stay exact in JSON and in a browser's number input
# A requested count is kept in AuditSample.requested_value (7 digits, 2 of them decimals).
MAX_COUNT = 99_999
# ASCII digits, few enough to read: str.isdigit() also takes '²', which int() refuses.
WHOLE_NUMBER = re.compile(r"[0-9]{1,20}")


class AuditError(Exception):
    """An audit action that cannot be done; the message is for the supervisor."""


@dataclass(frozen=True)
class SampleRequest:
    kind: str  # AuditSample.Requested
    value: Decimal
    seed: int


def _shown(text: str) -> str:
    """What the supervisor typed, quoted and short enough for a message."""
    return repr(text if len(text) <= 40 else text[:40] + "…")


def sample_request(*, count: str | int | None = None, percent: str | float | None = None,
                   seed: str | int | None = None) -> SampleRequest:
    """Check what a supervisor asked for (a count or a percentage, optionally a seed); raise AuditError."""
    count = None if count in (None, "") else str(count).strip()
    percent = None if percent in (None, "") else str(percent).strip()
    if (count is None) == (percent is None):
        raise AuditError("Give either a number of documents or a percentage, not both.")
    if count is not None:
        if not WHOLE_NUMBER.fullmatch(count) or not 1 <= int(count) <= MAX_COUNT:
            raise AuditError(f"{_shown(count)} is not a number of documents (a whole number from 1 to {MAX_COUNT}).")
        kind, value = AuditSample.Requested.COUNT, Decimal(int(count))
    else:
        try:
            value = Decimal(percent.rstrip("%").strip())
        except InvalidOperation:
            raise AuditError(f"{_shown(percent)} is not a percentage.") from None
        # NaN and infinities are Decimals too; NaN cannot even be compared, so they are refused first.
        if not value.is_finite() or not (0 < value <= 100) or value != value.quantize(Decimal("0.01")):
            raise AuditError("The percentage must be above 0 and at most 100, with at most two decimals.")
        kind = AuditSample.Requested.PERCENT
    if seed in (None, ""):
        seed_value = secrets.randbelow(MAX_SEED)
    else:
        text = str(seed).strip()
        if not WHOLE_NUMBER.fullmatch(text) or int(text) >= MAX_SEED:
            raise AuditError(f"The seed must be a whole number from 0 to {MAX_SEED - 1}.")
        seed_value = int(text)
    return SampleRequest(kind=kind, value=value, seed=seed_value)


def audit_population(*, batch: Batch) -> list[int]:
    """The passed documents of the batch that no earlier sample of the batch holds (ascending ids)."""
    already = AuditItem.objects.filter(sample__batch=batch).values("document_id")
    return list(
        Document.objects.filter(batch=batch, status=Status.PASSED.value, duplicate_of__isnull=True)
        .exclude(pk__in=already).order_by("id").values_list("id", flat=True)
    )


@transaction.atomic
def audit_sample_draw(*, batch: Batch, user, request: SampleRequest) -> AuditSample:
    """Draw a sample of the passed documents not yet audited; raise AuditError when there are none."""
    Batch.objects.select_for_update().get(pk=batch.pk)  # two supervisors drawing at once take turns
    population = audit_population(batch=batch)
    if not population:
        raise AuditError("Every passed document of this batch is already in a sample, or none has passed yet.")
    if request.kind == AuditSample.Requested.COUNT:
        size = stats.sample_size(population=len(population), count=int(request.value))
    else:
        size = stats.sample_size(population=len(population), percent=float(request.value))
    chosen = stats.draw_sample(population, size, request.seed)
    sample = AuditSample.objects.create(
        batch=batch, seed=request.seed, requested_kind=request.kind, requested_value=request.value,
        population=len(population), population_ids=population, size=size, created_by=user,
    )
    AuditItem.objects.bulk_create([
        AuditItem(sample=sample, document_id=document_id, position=i) for i, document_id in enumerate(chosen)
    ])
    return sample


def audit_sample_redraw(*, sample: AuditSample) -> list[int]:
    """The document ids the sample's seed chooses from its recorded population (equal to its items)."""
    return stats.draw_sample(sample.population_ids, sample.size, sample.seed)


def rules_on_fields(*, extraction: Extraction | None, paths: list[str]) -> list[str]:
    """The rule codes that fired on any of these fields in any round of the extraction's loop.

    A passed document broke no rule in the end; this says which rules looked at the wrong values on the
    way (the loop silenced them with a wrong fix). An empty list means no rule covers the error.
    """
    if extraction is None or not paths:
        return []
    codes = set()
    for violations in Round.objects.filter(extraction=extraction).values_list("violations", flat=True):
        for v in violations or []:
            if isinstance(v, dict) and involved_paths(v.get("fields") or [], paths):
                codes.add(str(v.get("code") or "?"))
    return sorted(codes)


def _paths_of(extraction: Extraction | None) -> set[str]:
    if extraction is None:
        return set()
    paths = set(FieldValue.objects.filter(extraction=extraction).values_list("path", flat=True))
    if isinstance(extraction.answer, dict):
        paths |= {p for p, _ in iter_fields(extraction.answer)}
    return paths


@transaction.atomic
def audit_item_decide(*, item_id: int, user, verdict: str, note: str = "",
                      wrong_fields: list[str] | tuple[str, ...] = ()) -> AuditItem:
    """Agree or disagree with a sampled document's values, once.

    A disagreement needs a note; it flags the document for the reviewers with that note, naming the
    fields the supervisor marked as wrong (optional; each must be a field of the document).
    """
    note = (note or "").strip()
    if verdict not in (AuditItem.Verdict.AGREE, AuditItem.Verdict.DISAGREE):
        raise AuditError("Choose agree or disagree.")
    item = AuditItem.objects.select_related("sample").get(pk=item_id)
    document = Document.objects.select_for_update().get(pk=item.document_id)
    if not item.is_pending:
        raise AuditError("This document was already audited in this sample.")
    if document.status != Status.PASSED.value:
        raise AuditError(f"This document is {document.status} now, no longer passed; it cannot be audited.")
    extraction = Extraction.objects.current_for(document.id)
    disagree = verdict == AuditItem.Verdict.DISAGREE
    fields = list(dict.fromkeys(str(f) for f in wrong_fields if str(f).strip())) if disagree else []
    unknown = sorted(set(fields) - _paths_of(extraction))
    if unknown:
        raise AuditError(f"These are not fields of this document: {', '.join(unknown)}.")
    if disagree and not note:
        raise AuditError("Say what is wrong: the reviewers read your note.")
    rules = rules_on_fields(extraction=extraction, paths=fields) if disagree else []

    decide_once(AuditItem, item, already="This document was already audited in this sample.",
                verdict=verdict, note=note, wrong_fields=fields, rules=rules, decided_by=user,
                decided_at=timezone.now(), extraction=extraction)
    after: dict = {"verdict": verdict, "sample": item.sample_id}
    if disagree:
        # the processing time stays what the pipeline took: a move from passed keeps processed_at
        send_to_reviewers(document_id=document.id, extraction_id=extraction.pk if extraction else None,
                          fields=fields, message=f"A supervisor disagreed in an audit: {note}")
        after.update(status=Status.FLAGGED.value, fields=fields, rules=rules)
    verdict_event(document=document, user=user, wrong=disagree, field=", ".join(fields), after=after, note=note)
    item.refresh_from_db()
    return item


def next_pending_item(*, sample: AuditSample, after_position: int = -1) -> AuditItem | None:
    """The next undecided item of the sample whose document is still passed (wrapping around)."""
    return next_pending(AuditItem.objects.filter(sample=sample, document__status=Status.PASSED.value),
                        after_position=after_position)


# --- what the document audit and the field audit (services/field_audit.py) share ---------------------------


def decide_once(model: type[AuditItem | FieldAuditItem], item: AuditItem | FieldAuditItem, *, already: str,
                **verdict) -> None:
    """Record a verdict on an item that is still pending: a conditional UPDATE whose count says whether this call
    gave it; a second verdict (or the loser of two at once) raises AuditError(already)."""
    decided = model.objects.filter(pk=item.pk, verdict=model.Verdict.PENDING).update(**verdict)
    if decided != 1:
        raise AuditError(already)


def send_to_reviewers(*, document_id: int, extraction_id: int | None, fields: list[str], message: str) -> None:
    """Move a passed document to the reviewers' queue (the guarded transition passed -> flagged) and say why on
    its extraction (a Violation the desk and the queue show)."""
    if not document_transition(document_id=document_id, to=Status.FLAGGED, to_reviewers=True):
        raise AuditError("The document changed while you were deciding; reload it and try again.")
    if extraction_id is not None:
        Violation.objects.create(extraction_id=extraction_id, code=AUDIT_DISAGREE_CODE, fields=fields,
                                 message=message)


def verdict_event(*, document: Document, user, wrong: bool, field: str, after: dict, note: str) -> ReviewEvent:
    """The verdict in the document's history; `document` as read before the verdict (its state is `before`)."""
    return ReviewEvent.objects.create(
        document_id=document.id, user=user,
        kind=ReviewEvent.Kind.AUDIT_DISAGREE if wrong else ReviewEvent.Kind.AUDIT_AGREE, field=field[:200],
        before={"status": document.status, "review_status": document.review_status}, after=after, note=note,
    )


def next_pending(items: QuerySet, *, after_position: int) -> AuditItem | FieldAuditItem | None:
    """The first pending item of `items` after `after_position`, else the first pending one (wrapping around)."""
    pending = items.filter(verdict=items.model.Verdict.PENDING).order_by("position", "id")
    return pending.filter(position__gt=after_position).first() or pending.first()
