"""Process one document: render its pages, OCR them into blocks, run the extraction loop.

Each step writes its own rows; a fault ends the document as FAILED with a message, retryable.
"""

from __future__ import annotations

import logging
import tempfile
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.core.files import File
from django.db import transaction
from django.utils import timezone

from extraction import (
    render,
    tasks,  # tasks import services lazily: no cycle
)
from extraction.models import Block, Document, Page
from extraction.ocr.blocks import OcrError, OcrPage, PageImage, SourceDocument
from extraction.services.engines import engine_for
from extraction.services.extract import extraction_run
from extraction.services.transitions import document_claim_for_processing, document_fail, document_transition
from extraction.states import Status
from extraction.storage import local_path

log = logging.getLogger(__name__)


def document_process(*, document_id: int, options: dict | None = None, task_id: str = "") -> str:
    """Claim a queued document and take it to a final state. Returns what happened, for logs."""
    if not document_claim_for_processing(document_id=document_id, task_id=task_id):
        return "not claimed"  # someone else has it, or it is already done: a second delivery is a no-op
    document = Document.objects.select_related("batch").get(pk=document_id)
    try:
        engine = (options or {}).get("ocr_engine")
        if engine or not document.pages.exists() or not document.blocks.exists():
            document_read(document=document, engine=engine)
        return extraction_run(document=document, options=options)
    except (render.RenderError, OcrError) as exc:
        document_fail(document_id=document_id, code="render" if isinstance(exc, render.RenderError) else "ocr",
                      message=str(exc))
        return "failed"
    except Exception as exc:  # a fault we did not foresee still ends in a clear, retryable state
        log.exception("document %s failed", document_id)
        document_fail(document_id=document_id, code="internal", message=f"Processing stopped: {type(exc).__name__}: {exc}")
        return "failed"


def document_read(*, document: Document, engine: str | None = None) -> list[Page]:
    """Render and OCR a document (with `engine`, else the batch's), replacing its pages and blocks."""
    with tempfile.TemporaryDirectory(prefix="proofdesk-pages-") as tmp, local_path(document.original.name) as source:
        rendered = render.render_document(
            source=source, kind=document.kind, out_dir=Path(tmp), dpi=settings.RENDER_DPI,
            renderer=settings.RENDERER, max_pages=settings.UPLOAD_MAX_PAGES,
        )
        ocr_pages = _ocr(document=document, source=source, rendered=rendered, engine=engine)
        with transaction.atomic():
            document.pages.all().delete()
            pages = [_save_page(document=document, rendered_page=r) for r in rendered]
            by_number = {p.number: p for p in pages}
            for ocr_page in ocr_pages:
                page = by_number.get(ocr_page.number)
                if page is None:
                    raise OcrError(f"the OCR engine returned page {ocr_page.number}, which the document does not have")
                page.engine = ocr_page.engine
                page.save(update_fields=["engine"])
                blocks_save(document=document, page=page, ocr_page=ocr_page)
            Document.objects.filter(pk=document.pk).update(page_count=len(pages))
    return pages


def _ocr(*, document: Document, source: Path, rendered: list[render.RenderedPage], engine: str | None = None
         ) -> list[OcrPage]:
    if document.textract_import and not engine:
        from extraction.ocr.textract import load_textract_json

        with document.textract_import.open("rb") as fh:
            return load_textract_json(fh.read())
    reader = engine_for(engine or document.batch.ocr_engine or settings.OCR_ENGINE)
    images = [PageImage(number=r.number, path=r.path, width=r.width, height=r.height) for r in rendered]
    return reader.read(SourceDocument(path=source, kind=document.kind, pages=images))


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


def documents_requeue_stuck(*, older_than: timedelta | None = None) -> int:
    """The reaper. Documents stuck in processing (their worker died) go back to the queue; documents
    queued for long (their message was lost, e.g. a broker restarted without persistence) are sent
    again. A duplicate message is harmless: only one delivery can claim a document."""
    if older_than is None:
        older_than = timedelta(minutes=settings.STUCK_PROCESSING_MINUTES)
    cutoff = timezone.now() - older_than
    stuck = Document.objects.filter(status=Status.PROCESSING.value, processing_started_at__lt=cutoff)
    requeued = [i for i in stuck.values_list("id", flat=True) if document_transition(document_id=i, to=Status.QUEUED)]
    waiting = list(
        Document.objects.filter(status=Status.QUEUED.value, status_changed_at__lt=cutoff)
        .exclude(pk__in=requeued).values_list("id", flat=True)
    )
    with transaction.atomic():
        tasks.queue_documents(requeued + waiting)
    return len(requeued) + len(waiting)
