"""Run the validation loop over a read document and record every round, the best answer and its proofs."""

from __future__ import annotations

import logging
import os
import time
from dataclasses import replace
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from extraction.confidence.services import fieldconfidence_save, suspicious_pass_check
from extraction.doctypes.selectors import batch_doctype
from extraction.llm.config import LlmConfig, llm_config_from_env
from extraction.models import Block, Document, Extraction, FieldValue, Page, Round, Violation
from extraction.ocr.blocks import BBox, BlockType, OcrBlock, OcrPage
from extraction.ocr.geometry import PageSize
from extraction.pipeline.lease import ClaimLost, Lease
from extraction.pipeline.propose import proposal_run
from extraction.pipeline.transitions import document_transition
from extraction.proofs.resolve import resolve_proofs
from extraction.reading.loop import Attempt, RoundOutcome
from extraction.reading.rounds import read_pages
from extraction.rules.answers import iter_fields
from extraction.rules.violations import RuleContext
from extraction.states import Status, StopReason

log = logging.getLogger(__name__)


def llm_config(*, overrides: dict | None = None) -> LlmConfig | None:
    """The configured endpoint (environment), with a batch's overrides (model, input mode)."""
    config = llm_config_from_env(os.environ)
    if config is None:
        return None
    overrides = overrides or {}
    changes = {"model": overrides.get("llm_model"), "input_mode": overrides.get("llm_input")}
    return replace(config, **{k: v for k, v in changes.items() if v})


def ocr_pages_of(*, document: Document) -> list[OcrPage]:
    """The stored blocks as the pure code's OcrPages; OcrBlock.id is the Block's primary key."""
    pages: dict[int, OcrPage] = {}
    page_numbers: dict[int, int] = {}
    sizes: dict[int, PageSize] = {}  # the page image's pixels: what every distance on the page is measured in
    for pk, number, width, height in Page.objects.filter(document=document).values_list(
            "id", "number", "width", "height"):
        page_numbers[pk] = number
        sizes[pk] = PageSize(width, height)
        pages[number] = OcrPage(number=number)
    for b in Block.objects.filter(document=document).order_by("page__number", "order", "id").iterator(chunk_size=2000):
        number = page_numbers[b.page_id]
        pages[number].blocks.append(
            OcrBlock(
                id=str(b.pk), type=BlockType(b.type), page=number, text=b.text,
                bbox=BBox(b.left, b.top, b.width, b.height), confidence=b.confidence,
                parent=str(b.parent_id) if b.parent_id else None, order=b.order,
                row=b.row, column=b.column, row_span=b.row_span, column_span=b.column_span,
                page_size=sizes[b.page_id],
            )
        )
    return [pages[n] for n in sorted(pages)]


class _RoundRecorder:
    """Saves a Round row before each call and completes it after (every attempt is on record)."""

    def __init__(self, extraction: Extraction, lease: Lease | None = None):
        self.extraction = extraction
        self.lease = lease
        self.current: Round | None = None
        self.reply: Any = None
        self.started = 0.0

    def round_started(self, number: int, attempt: Attempt) -> None:
        if self.lease is not None:
            self.lease.check()  # the document was taken back: no more rounds, no more bills
        self.current = Round.objects.create(extraction=self.extraction, number=number)
        self.reply = None
        self.started = time.monotonic()

    def record_request(self, request: Any) -> None:
        Round.objects.filter(pk=self.current.pk).update(request={"messages": request})

    def round_finished(self, number: int, outcome: RoundOutcome) -> None:
        reply = self.reply
        usage = getattr(reply, "usage", None)
        fields = {
            "state": Round.State.FAILED if outcome.faulted else Round.State.COMPLETED,
            "raw_answer": _raw_text(outcome, reply),
            "parsed": outcome.answer,
            "violations": [v.to_dict() for v in outcome.violations],
            "error": f"{type(outcome.error).__name__}: {outcome.error}" if outcome.error else "",
            "prompt_tokens": getattr(usage, "prompt_tokens", 0) or 0,
            "completion_tokens": getattr(usage, "completion_tokens", 0) or 0,
            "cost": Decimal(str(round(getattr(reply, "cost", 0) or 0, 6))),
            "latency_ms": int((time.monotonic() - self.started) * 1000),
            "finished_at": timezone.now(),
        }
        Round.objects.filter(pk=self.current.pk).update(**fields)


def _raw_text(outcome: RoundOutcome, reply: Any) -> str:
    if reply is not None and getattr(reply, "raw_text", None):
        return reply.raw_text
    if isinstance(outcome.raw, str):
        return outcome.raw
    return ""


def extraction_run(*, document: Document, options: dict | None = None, lease: Lease | None = None) -> str:
    """The loop over a document in PROCESSING; ends it PASSED, FLAGGED or FAILED. Returns the new status.

    With a `lease`, rounds start only while the claim holds and the final writes are fenced by it
    (ClaimLost when the document was taken back meanwhile: nothing of this run is finished).
    """
    claim = lease.claim if lease is not None else None
    batch = document.batch
    options = {**(batch.settings or {}), **(options or {})}
    if options.get("propose"):  # a sample to propose a new type's fields from: no type to read it with yet
        return proposal_run(document=document, pages=ocr_pages_of(document=document),
                            config=llm_config(overrides=options), lease=lease)
    doctype = batch_doctype(batch=batch, version=options.get("doctype_version"))
    pages = ocr_pages_of(document=document)
    if doctype.page_truth is not None:
        _record_truth(document=document, doctype=doctype)

    config = llm_config(overrides=options)
    max_rounds = int(options.get("max_rounds") or settings.MAX_ROUNDS)
    if config is None and doctype.offline_reader is None:
        _end(document_id=document.id, to=Status.FAILED, claim=claim, error_code="needs_llm",
             error_message=f"The document type '{doctype.label}' needs an LLM: set LLM_BASE_URL and LLM_MODEL, "
                           "then retry.")
        return Status.FAILED.value

    reader = Extraction.Reader.LLM if config else Extraction.Reader.TEMPLATE
    extraction = Extraction.objects.create(
        document=document, doctype=doctype.name, doctype_version=doctype.version, reader=reader,
        settings={"max_rounds": max_rounds if config else 1,
                  "model": config.model if config else "", "input": config.input_mode if config else "ocr",
                  **({"type_version": doctype.version} if doctype.version else {}),
                  "ocr": ", ".join(sorted({e for e in Page.objects.filter(document=document)
                                           .values_list("engine", flat=True) if e})) or batch.ocr_engine},
    )
    if lease is not None:
        lease.extraction_id = extraction.pk
    recorder = _RoundRecorder(extraction, lease)

    def on_reply(reply: Any) -> None:
        recorder.reply = reply

    reading = read_pages(
        pages=pages, doctype=doctype, config=config, max_rounds=max_rounds, judge=True,
        page_images=_page_images(document=document) if config and config.input_mode != "text" else None,
        deadline=time.monotonic() + config.document_timeout_s if config else None,
        observer=recorder, on_request=recorder.record_request, on_reply=on_reply,
        # a call in flight for a document taken back stops at once
        on_client=(lambda client: lease.on_lost(client.abort)) if lease is not None else None)
    if lease is not None:
        lease.check()
    return _finish(document=document, extraction=extraction, result=reading.result, ctx=reading.ctx, claim=claim)


def _end(*, document_id: int, to: Status, claim: int | None, error_code: str | None = None,
         error_message: str | None = None) -> None:
    """The run's final move, fenced by its claim: ClaimLost when the document is no longer this run's."""
    if not document_transition(document_id=document_id, to=to, claim=claim, error_code=error_code,
                               error_message=error_message) and claim is not None:
        raise ClaimLost(f"document {document_id} was taken back before this run could end it")


def _finish(*, document, extraction, result, ctx, claim: int | None = None) -> str:
    sums = Round.objects.filter(extraction=extraction).aggregate(
        prompt_tokens=Sum("prompt_tokens"), completion_tokens=Sum("completion_tokens"), cost=Sum("cost"))
    usage = {key: value or 0 for key, value in sums.items()}
    if result.answer is None and result.reason != StopReason.ERROR.value:
        last = result.rounds[-1].violations[0].message if result.rounds and result.rounds[-1].violations else ""
        to, fields = Status.FAILED, {
            "error_code": "llm_answer",
            "error_message": f"The model gave no usable answer in {len(result.rounds)} rounds ({last}). "
                             "It can be retried, perhaps with another model."}
    elif result.reason == StopReason.ERROR.value:
        error = result.error
        retry_hint = " It can be retried." if getattr(error, "retryable", True) else ""
        to, fields = Status.FAILED, {
            "error_code": "llm",
            "error_message": f"The model could not be reached or answered unusably: {error}.{retry_hint}"}
    else:
        to, fields = (Status.PASSED if result.passed else Status.FLAGGED), {}
    # One transaction: the run's rows and the document's end stand or fall together with the claim.
    with transaction.atomic():
        Extraction.objects.filter(pk=extraction.pk).update(
            stop_reason=result.reason, best_round=result.best.number if result.best else None,
            answer=result.answer, error=str(result.error or ""), finished_at=timezone.now(), **usage,
        )
        if result.answer is not None:
            fieldvalues_save(extraction=extraction, answer=result.answer, ctx=ctx)
            violations_save(extraction=extraction, violations=result.violations, settled=result.settled)
            kept = result.best.number if result.best else len(result.rounds)
            scores = fieldconfidence_save(extraction=extraction, answer=result.answer, violations=result.violations,
                                          ctx=ctx, settled=result.settled, team_id=document.batch.team_id,
                                          round_answers=[r.answer for r in result.rounds if r.number <= kept])
            # every rule passed, yet a field is hardly trusted: people look (the stop reason stays "passed")
            if to == Status.PASSED and suspicious_pass_check(extraction=extraction, scores=scores,
                                                                team_id=document.batch.team_id):
                to = Status.FLAGGED
        _end(document_id=document.id, to=to, claim=claim, **fields)
    return to.value


def fieldvalues_save(*, extraction: Extraction, answer: dict, ctx: RuleContext) -> None:
    """One FieldValue per proved field, with the blocks its proof resolved to (located through the prompt's
    ids even where the model read only the page images, as the desk shows them)."""
    resolved = resolve_proofs(answer, ctx.locating())
    confidence_of = {b.id: b.confidence for b in ctx.blocks}
    FieldValue.objects.filter(extraction=extraction).delete()
    rows = []
    for position, (path, node) in enumerate(iter_fields(answer)):
        proofs = resolved.get(path, [])
        confidences = [confidence_of.get(p.block_id) for p in proofs if confidence_of.get(p.block_id) is not None]
        rows.append(FieldValue(
            extraction=extraction, path=path, position=position, value=node.get("value"), model_value=node.get("value"),
            proofs=[p.to_dict() for p in proofs], confidence=min(confidences) if confidences else None,
        ))
    FieldValue.objects.bulk_create(rows)


REREAD_NOTE = " The model read this again when told and kept its answer: a person must decide."


def violations_save(*, extraction: Extraction, violations, settled: frozenset = frozenset()) -> None:
    """The broken rules of the kept answer; those in `settled` (they survived a re-read, so asking the model
    again would not help) say so to the reviewer."""
    Violation.objects.filter(extraction=extraction).delete()
    Violation.objects.bulk_create([
        Violation(extraction=extraction, code=v.code, message=v.message + (REREAD_NOTE if v.key in settled else ""),
                  fields=list(v.fields), expected=v.expected, found=v.found, subject=v.subject or "")
        for v in violations
    ])


def _page_images(*, document: Document) -> dict[int, Any]:
    """Every page image in memory (the reading applies the type's `prepare_image`, e.g. a QR masked)."""
    from PIL import Image

    from extraction.pipeline.storage import local_path

    images = {}
    for page in document.pages.order_by("number"):
        with local_path(page.image.name) as path:
            image = Image.open(path)
            image.load()
            images[page.number] = image
    return images


def _record_truth(*, document: Document, doctype) -> None:
    """Keep the truth a page states about the document (the acta's QR) for scoring; never shown to the model.
    The first page that states one: a tally sheet printed on a roll prints its QR on its last page."""
    from extraction.pipeline.storage import local_path

    for page in document.pages.order_by("number"):
        with local_path(page.image.name) as path:
            try:
                truth = doctype.page_truth(path)
            except ValueError as err:
                log.info("document %s: page %s states a truth that is not a %s's: %s", document.id, page.number,
                         doctype.name, err)
                return
        if truth:
            Document.objects.filter(pk=document.pk).update(truth=truth)
            return
