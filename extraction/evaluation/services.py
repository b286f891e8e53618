"""Writes of evaluation sets: items gathered from what people confirmed or uploaded with expected values, and
runs of the set read on the workers as hidden batches (extraction/evaluation/selectors.py scores them)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from django.core.files import File
from django.db import transaction
from django.db.models import OuterRef, Subquery
from django.utils import timezone

from extraction.doctypes.registry import get_doctype
from extraction.evaluation.expected import answer_flat, expected_parse
from extraction.models import (
    Batch,
    Document,
    EvaluationItem,
    EvaluationResult,
    EvaluationRun,
    Extraction,
    ReviewEvent,
)
from extraction.pipeline.ingest import IncomingFile, batch_add_files
from extraction.states import ReviewStatus

__all__ = ["EvaluationError", "evaluation_item_remove", "evaluation_items_collect", "evaluation_items_upload",
           "evaluation_run_start"]

_CONFIRMING = {EvaluationItem.Source.VERIFIED: [ReviewEvent.Kind.VERIFY],
               EvaluationItem.Source.AUDITED: [ReviewEvent.Kind.AUDIT_AGREE]}


class EvaluationError(ValueError):
    """What cannot be done with a set, in words for the admin."""


def evaluation_items_collect(*, doctype: str, team_id: int) -> dict[str, int]:
    """Add to the team's set of the type every document of the team people confirmed: verified or corrected by
    a reviewer, or agreed with as a whole in a supervisor's audit and not reviewed since. An item already in
    the set takes the values people confirmed last. Returns {"added": n, "updated": n}."""
    confirmed = Document.objects.filter(batch__doctype=doctype, batch__trial=False, batch__team=team_id)
    reviewed = confirmed.filter(review_status__in=[ReviewStatus.VERIFIED.value, ReviewStatus.CORRECTED.value])
    audited = confirmed.filter(review_status=ReviewStatus.UNREVIEWED.value,
                               events__kind=ReviewEvent.Kind.AUDIT_AGREE, events__field="").distinct()
    held = {i.document_id: i for i in EvaluationItem.objects.filter(doctype=doctype, team=team_id,
                                                                    document__isnull=False)
            .only("id", "document_id", "expected", "confirmed_at", "removed_at")}
    new, changed = [], []
    for source, documents in ((EvaluationItem.Source.VERIFIED, reviewed), (EvaluationItem.Source.AUDITED, audited)):
        last = ReviewEvent.objects.filter(document=OuterRef("pk"), kind__in=_CONFIRMING[source]).order_by("-id")
        current = Extraction.objects.filter(document=OuterRef("pk")).newest_first()
        rows = documents.annotate(by=Subquery(last.values("user")[:1]), at=Subquery(last.values("created_at")[:1]),
                                  answer=Subquery(current.values("answer")[:1]))
        for document in rows.iterator(chunk_size=500):
            if document.answer is None:
                continue
            item = held.get(document.id)
            values = {"filename": document.filename, "expected": answer_flat(document.answer), "source": source,
                      "confirmed_by_id": document.by, "confirmed_at": document.at}
            if item is None:
                new.append(EvaluationItem(doctype=doctype, team_id=team_id, document_id=document.id, **values))
            elif item.removed_at is None and (item.expected, item.confirmed_at) != (values["expected"],
                                                                                   values["confirmed_at"]):
                changed.append((item.pk, values))
    with transaction.atomic():
        # a document gathered twice at once (two admins): the one item per document stands, the other is dropped
        EvaluationItem.objects.bulk_create(new, ignore_conflicts=True)
        for pk, values in changed:
            EvaluationItem.objects.filter(pk=pk).update(**values)
    added, updated = len(new), len(changed)
    return {"added": added, "updated": updated}


def evaluation_items_upload(*, doctype: str, team_id: int, files: list[IncomingFile], expected: IncomingFile,
                            user) -> int:
    """Add documents with the values an admin gives for them (extraction/evaluation/expected.py). Every file must
    have its values and every value its file, or nothing is added (EvaluationError names which). Returns how
    many were added."""
    values = expected_parse(name=expected.filename, data=expected.path.read_bytes())
    names = {Path(f.filename).name for f in files}
    missing, unused = sorted(names - set(values)), sorted(set(values) - names)
    if missing or unused:
        said = ([f"no expected values for {', '.join(missing)}"] if missing else []) + (
            [f"{expected.filename} names files not uploaded: {', '.join(unused)}"] if unused else [])
        raise EvaluationError("; ".join(said) + ".")
    with transaction.atomic():
        for incoming in files:
            name = Path(incoming.filename).name
            item = EvaluationItem(doctype=doctype, team_id=team_id, filename=name, expected=values[name],
                                  source=EvaluationItem.Source.UPLOADED, confirmed_by=user)
            with incoming.path.open("rb") as fh:
                item.file.save(name, File(fh), save=False)
            item.save()
    return len(files)


def evaluation_item_remove(*, doctype: str, team_id: int, item_id: int) -> str:
    """Take a document out of the type's set (a wrong value confirmed, a document that does not belong): a file
    uploaded for the set is deleted with its values; a document people confirmed stays out when the set is
    gathered again. Runs started after it leave it out; a decision to make a version live keeps the figures it
    was made on. Returns its name."""
    item = EvaluationItem.objects.filter(doctype=doctype, team=team_id, pk=item_id, removed_at__isnull=True).first()
    if item is None:
        raise EvaluationError("That document is not in the set (anymore).")
    if item.document_id is None:
        item.file.delete(save=False)
        EvaluationItem.objects.filter(pk=item.pk).delete()
    else:  # kept, marked: gathering what people confirmed again does not bring it back
        EvaluationItem.objects.filter(pk=item.pk).update(removed_at=timezone.now())
    return item.filename


def evaluation_run_start(*, doctype: str, team_id: int, version: int | None, options: dict, ocr_engine: str,
                         user) -> EvaluationRun:
    """Read the set again under `version` with the run's `options` (rerun_options: model, input mode,
    rounds) and `ocr_engine`, beside a run of the live version with the instance's settings for comparison
    (one run when the two are the same). Each run is a hidden batch the workers read like any other."""
    items = list(EvaluationItem.objects.filter(doctype=doctype, team=team_id, removed_at__isnull=True)
                 .select_related("document"))
    if not items:
        raise EvaluationError("The evaluation set is empty: add the documents people verified, or upload documents "
                              "with their expected values.")
    live = get_doctype(doctype).version
    version = version or live
    engine = ocr_engine or "auto"
    candidate = _run_start(doctype=doctype, team_id=team_id, version=version, options=options, ocr_engine=engine,
                           items=items, user=user)
    if (version, options, engine) != (live, {}, "auto"):
        baseline = _run_start(doctype=doctype, team_id=team_id, version=live, options={}, ocr_engine="auto",
                              items=items, user=user)
        EvaluationRun.objects.filter(pk=candidate.pk).update(compared_with=baseline)
        candidate.compared_with = baseline
    return candidate


def _run_start(*, doctype: str, team_id: int, version: int | None, options: dict, ocr_engine: str,
               items: list[EvaluationItem], user) -> EvaluationRun:
    label = get_doctype(doctype, version).label
    batch = Batch.objects.create(
        name=f"Evaluation of {label}" + (f" v{version}" if version else ""), doctype=doctype, doctype_version=version,
        ocr_engine=ocr_engine, settings={**options, **({"doctype_version": version} if version else {})},
        trial=True, created_by=user, team_id=team_id)
    run = EvaluationRun.objects.create(doctype=doctype, team_id=team_id, version=version,
                                       settings={**options, "ocr": ocr_engine}, batch=batch, created_by=user)
    with tempfile.TemporaryDirectory(prefix="proofdesk-evaluation-") as tmp:
        for item in items:
            path = Path(tmp) / f"item-{item.pk}"
            source = item.document.original if item.document_id else item.file
            with source.open("rb") as fh, path.open("wb") as out:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    out.write(chunk)
            document = batch_add_files(batch=batch, files=[IncomingFile(item.filename, path)])[0]
            EvaluationResult.objects.create(run=run, item=item, document_id=document.duplicate_of_id or document.id)
            path.unlink()
    return run
