"""Process one document: render its pages, OCR them into blocks, run the extraction loop.

Each step writes its own rows; a fault ends the document as FAILED with a message, retryable. The worker
checks its lease between steps (each page rendered, read and stored; each round of the loop), so a worker
whose document another run took stops at its next step and writes nothing more.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable
from pathlib import Path

from botocore.exceptions import BotoCoreError, ClientError
from django.conf import settings
from django.core.files import File
from django.db import transaction
from django.utils import timezone

from extraction.confidence.second_engine import page_words
from extraction.models import Block, Document, Page
from extraction.ocr.blocks import OcrEngine, OcrError, OcrPage, PageImage, SourceDocument
from extraction.ocr.geometry import PageSize
from extraction.pipeline import render
from extraction.pipeline.dispatch import documents_dispatch, documents_dispatch_pending
from extraction.pipeline.engines import engine_for
from extraction.pipeline.extract import extraction_run
from extraction.pipeline.lease import ClaimLost, document_lease
from extraction.pipeline.storage import local_path
from extraction.pipeline.transitions import (
    ABANDONED,
    document_claim_for_processing,
    document_close_orphaned_runs,
    document_fail,
    document_transition,
    lease_expired,
)
from extraction.states import Status

log = logging.getLogger(__name__)


def document_process(*, document_id: int, options: dict | None = None, task_id: str = "") -> str:
    """Claim a queued document and take it to a final state. Returns what happened, for logs.

    While it works, the claim's lease is renewed (extraction.pipeline.lease); every final write is fenced
    by the claim, so a document is finished once even if the reaper took it back from a stalled worker.
    """
    claim = document_claim_for_processing(document_id=document_id, task_id=task_id)
    if not claim:
        return "not claimed"  # someone else has it, or it is already done: a second delivery is a no-op
    document = Document.objects.select_related("batch").get(pk=document_id)
    options = options or document.run_options or None
    with document_lease(document_id=document_id, claim=claim) as lease:
        try:
            lease.check()
            engine = (options or {}).get("ocr_engine")  # a re-run with another engine reads the pages again
            if engine or not document.pages.exists() or not document.blocks.exists():
                document_read(document=document, engine=engine, check=lease.check)
            lease.check()
            return extraction_run(document=document, options=options, lease=lease)
        except ClaimLost:
            document_close_orphaned_runs(document_id=document_id, extraction_id=lease.extraction_id,
                                         message=ABANDONED + "this worker lost its claim on the document (its lease "
                                                             "ran out); another run took it over.")
            return "claim lost"
        except (render.RenderError, OcrError) as exc:
            document_fail(document_id=document_id, code="render" if isinstance(exc, render.RenderError) else "ocr",
                          message=str(exc), claim=claim)
            return "failed"
        except (BotoCoreError, ClientError) as exc:  # OCR engines wrap their own: this is the file store (S3)
            document_fail(document_id=document_id, code="storage", claim=claim,
                          message=f"The file store could not be reached or refused a request ({exc}). Nothing was "
                                  "lost: the document can be retried once the store answers.")
            return "failed"
        except Exception as exc:  # a fault we did not foresee still ends in a clear, retryable state
            log.exception("document %s failed", document_id)
            document_fail(document_id=document_id, code="internal",
                          message=f"Processing stopped: {type(exc).__name__}: {exc}", claim=claim)
            return "failed"


def _carry_on() -> None:
    pass


def document_read(*, document: Document, engine: str | None = None, check: Callable[[], None] = _carry_on
                  ) -> list[Page]:
    """Render and OCR a document (with `engine`, else the batch's), replacing its pages and blocks.

    `check` (the worker's Lease.check) runs between pages; what it raises stops the read and stores nothing."""
    with tempfile.TemporaryDirectory(prefix="proofdesk-pages-") as tmp, local_path(document.original.name) as source:
        rendered = render.render_document(
            source=source, kind=document.kind, out_dir=Path(tmp), dpi=settings.RENDER_DPI,
            renderer=settings.RENDERER, max_pages=settings.UPLOAD_MAX_PAGES, check=check,
        )
        ocr_pages = _ocr(document=document, source=source, rendered=rendered, engine=engine, check=check)
        second = _second_reading(document=document, source=source, rendered=rendered, read=ocr_pages, check=check)
        with transaction.atomic():
            document.pages.all().delete()
            pages = []
            for rendered_page in rendered:
                check()  # raised inside the transaction: the pages stored so far are rolled back
                pages.append(_save_page(document=document, rendered_page=rendered_page))
            by_number = {p.number: p for p in pages}
            for ocr_page in ocr_pages:
                page = by_number.get(ocr_page.number)
                if page is None:
                    raise OcrError(f"the OCR engine returned page {ocr_page.number}, which the document does not have")
                page.engine = ocr_page.engine
                page.second_engine, page.second_words = second.get(page.number, ("", []))
                page.save(update_fields=["engine", "second_engine", "second_words"])
                blocks_save(document=document, page=page, ocr_page=ocr_page)
            Document.objects.filter(pk=document.pk).update(page_count=len(pages))
    return pages


def _ocr(*, document: Document, source: Path, rendered: list[render.RenderedPage], engine: str | None = None,
         check: Callable[[], None] = _carry_on) -> list[OcrPage]:
    if document.textract_import and not engine:
        from extraction.ocr.textract_json import load_textract_json

        with document.textract_import.open("rb") as fh:
            return load_textract_json(fh.read(), sizes={r.number: PageSize(r.width, r.height) for r in rendered})
    name = engine or document.batch.ocr_engine or settings.OCR_ENGINE
    images = [PageImage(number=r.number, path=r.path, width=r.width, height=r.height) for r in rendered]
    return _read_in_steps(engine_for(name), name=name, source=source, kind=document.kind, images=images, check=check)


# Engines that read the original file as one job (Textract: one asynchronous job per PDF, and a one-page
# "document" would be sent the original file): they are given every page at once.
_WHOLE_FILE_ENGINES = frozenset({"textract"})


def _read_in_steps(reader: OcrEngine, *, name: str, source: Path, kind: str, images: list[PageImage],
                   check: Callable[[], None]) -> list[OcrPage]:
    """The engine's pages, read OCR_PAGE_WORKERS pages at a time (the pages an engine reads at once) with
    `check` before each step, so a worker that lost its document stops at its next page."""
    if name in _WHOLE_FILE_ENGINES:
        check()
        return reader.read(SourceDocument(path=source, kind=kind, pages=images))
    step = max(1, settings.OCR_PAGE_WORKERS)
    pages: list[OcrPage] = []
    for start in range(0, len(images), step):
        check()
        pages += reader.read(SourceDocument(path=source, kind=kind, pages=images[start:start + step]))
    return pages


def _second_reading(*, document: Document, source: Path, rendered: list[render.RenderedPage], read: list[OcrPage],
                    check: Callable[[], None] = _carry_on) -> dict[int, tuple[str, list]]:
    """page number -> (engine, words) as settings.OCR_SECOND_ENGINE reads the pages another engine read; empty
    when it is not set. A failure is logged and the document goes on without it (the signal stays neutral)."""
    name = settings.OCR_SECOND_ENGINE
    if not name:
        return {}
    already = {p.number for p in read if p.engine == name}
    images = [PageImage(number=r.number, path=r.path, width=r.width, height=r.height)
              for r in rendered if r.number not in already]
    if not images:
        return {}
    try:
        pages = _read_in_steps(engine_for(name), name=name, source=source, kind=document.kind, images=images,
                               check=check)
    except (OcrError, BotoCoreError, ClientError) as exc:
        log.warning("document %s: the second OCR engine (%s) could not read it: %s", document.pk, name, exc)
        return {}
    return {p.number: (name, page_words(p)) for p in pages}


def _save_page(*, document: Document, rendered_page: render.RenderedPage) -> Page:
    page = Page(document=document, number=rendered_page.number, width=rendered_page.width, height=rendered_page.height)
    with rendered_page.path.open("rb") as fh:
        page.image.save(f"page-{rendered_page.number:04d}.png", File(fh), save=False)
    with rendered_page.preview_path.open("rb") as fh:
        page.preview.save(f"page-{rendered_page.number:04d}-preview.jpg", File(fh), save=False)
    page.save()
    return page


def blocks_save(*, document: Document, page: Page, ocr_page: OcrPage) -> list[Block]:
    """Store a page's blocks with their parent links (two passes: rows first, then parents)."""
    rows = [
        Block(
            document=document, page=page, key=b.id[:100], type=b.type.value, text=b.text,
            left=b.bbox.left, top=b.bbox.top, width=b.bbox.width, height=b.bbox.height,
            polygon=[list(p) for p in b.polygon] if b.polygon else None, confidence=b.confidence,
            order=b.order, row=b.row, column=b.column, row_span=b.row_span, column_span=b.column_span,
        )
        for b in ocr_page.blocks
    ]
    created = Block.objects.bulk_create(rows, batch_size=1000)
    by_key = {b.key: b for b in created}
    with_parent = []
    for ocr_block, row in zip(ocr_page.blocks, created, strict=True):
        parent = by_key.get(ocr_block.parent or "")
        if parent is not None and parent.pk != row.pk:
            row.parent_id = parent.pk
            with_parent.append(row)
    Block.objects.bulk_update(with_parent, ["parent"], batch_size=1000)
    return created


def documents_requeue_stuck() -> int:
    """The reaper (Celery beat, every REAPER_INTERVAL_SECONDS). Documents whose worker stopped renewing its
    lease (killed, machine gone) go back to the queue, the runs it left open closed on record; then every
    queued document whose message never reached the broker, or was lost by it, is sent again
    (extraction.pipeline.dispatch). A live worker keeps its document however long it works."""
    now = timezone.now()
    requeued = []
    for document_id in Document.objects.filter(lease_expired(now=now), status=Status.PROCESSING.value).values_list(
            "id", flat=True):
        with transaction.atomic():
            # guarded on the lease in the same update: a heartbeat that arrived since the query wins
            if document_transition(document_id=document_id, to=Status.QUEUED, where=lease_expired(now=now),
                                   keep_run_options=True):
                document_close_orphaned_runs(document_id=document_id, now=now)
                requeued.append(document_id)
    documents_dispatch(requeued)
    return len(requeued) + documents_dispatch_pending(now=now)
