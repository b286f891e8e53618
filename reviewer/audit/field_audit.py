"""Field-level audits: a sample of a batch's passed fields stratified by field kind, a verdict on each field.

A document-level audit says how many passed documents hold an error; it cannot say which kind of field errs,
because the commonest kind (forty vote rows) drowns the rarer ones (one sheet id). Here each kind is its own
stratum with its own draw, so each gets its own rate and interval. A wrong field of a document that is still
passed sends it to the reviewers, as a disagreeing document audit does. Each verdict is given once: the write
is a conditional UPDATE on a pending item.
"""

from __future__ import annotations

import secrets
from collections import defaultdict

from django.db import transaction
from django.utils import timezone

from extraction.confidence.calibration import stratified_draw
from extraction.confidence.signals import field_kind
from extraction.models import Batch, Document, Extraction, FieldValue
from extraction.states import Status
from reviewer.audit.services import (
    MAX_SEED,
    WHOLE_NUMBER,
    AuditError,
    decide_once,
    next_pending,
    rules_on_fields,
    send_to_reviewers,
    verdict_event,
)
from reviewer.models import FieldAuditItem, FieldAuditSample

MAX_PER_STRATUM = 1000


def field_audit_population(*, batch: Batch) -> dict[str, list[int]]:
    """The FieldValue ids of the current extractions of the batch's passed documents, by field kind; fields an
    earlier field sample of the batch holds are left out."""
    passed = Document.objects.filter(batch=batch, status=Status.PASSED.value, duplicate_of__isnull=True)
    current = passed.annotate(current=Extraction.objects.current_id()).values("current")  # a subquery
    taken = set(FieldAuditItem.objects.filter(sample__batch=batch).values_list("extraction_id", "path"))
    strata: dict[str, list[int]] = defaultdict(list)
    for pk, extraction_id, path in (FieldValue.objects.filter(extraction_id__in=current)
                                    .order_by("id").values_list("id", "extraction_id", "path")):
        if (extraction_id, path) not in taken:
            strata[field_kind(path)].append(pk)
    return dict(strata)


def _whole(raw, *, name: str, low: int, high: int) -> int:
    text = str(raw if raw is not None else "").strip()
    if not WHOLE_NUMBER.fullmatch(text) or not low <= int(text) <= high:
        raise AuditError(f"{name} must be a whole number from {low} to {high}.")
    return int(text)


@transaction.atomic
def field_audit_draw(*, batch: Batch, user, per_stratum: str | int, seed: str | int | None = None
                     ) -> FieldAuditSample:
    """Draw up to `per_stratum` fields of each kind; raise AuditError when nothing is left to draw."""
    per = _whole(per_stratum, name="Fields of each kind", low=1, high=MAX_PER_STRATUM)
    seed_value = secrets.randbelow(MAX_SEED) if seed in (None, "") else _whole(seed, name="The seed", low=0,
                                                                               high=MAX_SEED - 1)
    Batch.objects.select_for_update().get(pk=batch.pk)  # two supervisors drawing at once take turns
    strata = field_audit_population(batch=batch)
    if not strata:
        raise AuditError("No field of a passed document of this batch is left to sample.")
    chosen = stratified_draw(strata, per_stratum=per, seed=seed_value)
    rows = {fv.pk: fv for fv in FieldValue.objects.filter(pk__in=[i for ids in chosen.values() for i in ids])
            .select_related("extraction")}
    sample = FieldAuditSample.objects.create(
        batch=batch, seed=seed_value, per_stratum=per, population={k: len(v) for k, v in strata.items()},
        size=sum(len(ids) for ids in chosen.values()), created_by=user)
    items, position = [], 0
    for kind, ids in chosen.items():
        for pk in sorted(ids, key=lambda i: (rows[i].extraction.document_id, rows[i].position)):
            fv = rows[pk]
            items.append(FieldAuditItem(sample=sample, document_id=fv.extraction.document_id,
                                        extraction_id=fv.extraction_id, path=fv.path, kind=kind, position=position))
            position += 1
    FieldAuditItem.objects.bulk_create(items)
    return sample


def field_audit_redraw(*, sample: FieldAuditSample, strata: dict[str, list[int]]) -> dict[str, list[int]]:
    """What the sample's seed chooses from these strata (the population as it was drawn from)."""
    return stratified_draw(strata, per_stratum=sample.per_stratum, seed=sample.seed)


@transaction.atomic
def field_audit_decide(*, item_id: int, user, verdict: str, note: str = "") -> FieldAuditItem:
    """Say whether a sampled field's value is what the document shows, once. A wrong value needs a note; its
    document, if still passed, goes to the reviewers with that note on the field."""
    note = (note or "").strip()
    if verdict not in (FieldAuditItem.Verdict.RIGHT, FieldAuditItem.Verdict.WRONG):
        raise AuditError("Choose right or wrong.")
    if verdict == FieldAuditItem.Verdict.WRONG and not note:
        raise AuditError("Say what the document shows instead: the reviewers read your note.")
    item = FieldAuditItem.objects.select_related("extraction").get(pk=item_id)
    document = Document.objects.select_for_update().get(pk=item.document_id)
    wrong = verdict == FieldAuditItem.Verdict.WRONG
    rules = rules_on_fields(extraction=item.extraction, paths=[item.path]) if wrong else []
    decide_once(FieldAuditItem, item, already="This field was already judged in this sample.",
                verdict=verdict, note=note, rules=rules, decided_by=user, decided_at=timezone.now())
    after: dict = {"verdict": verdict, "field_sample": item.sample_id, "field": item.path}
    current = Extraction.objects.current_for(document.id)
    if wrong and document.status == Status.PASSED.value and current is not None and current.pk == item.extraction_id:
        send_to_reviewers(document_id=document.id, extraction_id=item.extraction_id, fields=[item.path],
                          message=f"A supervisor found this value wrong in a field audit: {note}")
        after.update(status=Status.FLAGGED.value, rules=rules)
    verdict_event(document=document, user=user, wrong=wrong, field=item.path, after=after, note=note)
    item.refresh_from_db()
    return item


def field_audit_next(*, sample: FieldAuditSample, after_position: int = -1) -> FieldAuditItem | None:
    """The next field of the sample still to judge (wrapping around)."""
    return next_pending(FieldAuditItem.objects.filter(sample=sample), after_position=after_position)
