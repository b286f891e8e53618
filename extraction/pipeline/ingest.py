"""Batches from uploaded files: every file is kept, each document-to-be becomes a Document row."""

from __future__ import annotations

import logging
import tempfile
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.files import File
from django.db import transaction

from extraction.doctypes.registry import UnknownDocumentType, get_doctype
from extraction.models import Batch, Document, Upload
from extraction.pipeline import dispatch, intake
from extraction.pipeline.transitions import document_moved
from extraction.states import Status

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class IncomingFile:
    filename: str
    path: Path  # a local file the caller owns until the call returns


def intake_limits() -> intake.Limits:
    return intake.Limits(
        max_file_bytes=settings.UPLOAD_MAX_FILE_MB * 1024 * 1024,
        max_pages=settings.UPLOAD_MAX_PAGES,
        max_pixels=settings.UPLOAD_MAX_PIXELS,
        render_dpi=settings.RENDER_DPI,
        max_zip_files=settings.UPLOAD_MAX_ZIP_FILES,
    )


# A stored file keeps its own name where every store can hold it: a file system takes 255 bytes for one name,
# and Django may add 8 characters to a name already taken.
NAME_MAX_BYTES = 200


def clean_filename(name: str) -> str:
    """The file's own name (no folders); one longer than NAME_MAX_BYTES in UTF-8 is cut, with "…" where it was
    cut, and keeps its extension (the intake compares it with the content)."""
    base = Path(name.replace("\\", "/")).name or "unnamed"
    if len(base.encode()) <= NAME_MAX_BYTES:
        return base
    stem, dot, extension = base.rpartition(".")
    suffix = f".{extension}" if dot and stem and len(extension) <= 10 else ""
    budget = NAME_MAX_BYTES - len(f"…{suffix}".encode())
    return base[: len(base) - len(suffix)].encode()[:budget].decode(errors="ignore") + "…" + suffix


def batch_create(*, name: str, doctype: str, ocr_engine: str, options: dict | None = None, user=None,
                 team_id: int | None = None) -> Batch:
    """A batch of a type, in `team_id` (the default team without one); a type defined in the app is taken at its
    live version, which the batch keeps."""
    try:
        version = get_doctype(doctype).version
    except UnknownDocumentType:
        version = None  # the document type check is the caller's (forms, commands); processing names it
    return Batch.objects.create(name=name, doctype=doctype, doctype_version=version, ocr_engine=ocr_engine,
                                settings=options or {}, created_by=user,
                                **({"team_id": team_id} if team_id is not None else {}))


def batch_add_files(*, batch: Batch, files: list[IncomingFile], queue: bool = True,
                    limits: intake.Limits | None = None) -> list[Document]:
    """Store every file unchanged, expand zips, check each document (against `limits`, else the settings'),
    and queue the good ones.

    A bad file or zip member becomes a FAILED document with the reason; the rest goes on.
    """
    limits = limits or intake_limits()
    documents: list[Document] = []
    seen: dict[str, Document] = {
        d.sha256: d for d in batch.documents.filter(duplicate_of__isnull=True).exclude(sha256="")
    }
    with tempfile.TemporaryDirectory(prefix="proofdesk-intake-") as tmp:
        for index, incoming in enumerate(files):
            upload = _store_upload(batch=batch, incoming=incoming)
            out_dir = Path(tmp) / str(index)
            out_dir.mkdir()
            for entry in intake.expand_upload(
                path=incoming.path, filename=incoming.filename, out_dir=out_dir, limits=limits
            ):
                # A file that is its own document is stored once, as the upload (not a zip member: a copy).
                whole = entry.path == incoming.path
                documents.append(_document_from_entry(batch=batch, upload=upload, entry=entry, seen=seen, limits=limits,
                                                      whole_upload=whole))
    # A file refused at intake ends here: said as a worker's ending is (transitions.document_moved), once every
    # document of the upload exists, so a batch of refused files is finished and one with good files is not.
    with transaction.atomic():
        for document in documents:
            if document.status == Status.FAILED.value:
                document_moved.send(sender=Document, document_id=document.id, to=Status.FAILED)
    if queue:  # False when the caller processes the documents itself (manage.py extract)
        dispatch.documents_queue([d.id for d in documents if d.status == Status.QUEUED.value])
    return documents


def _store_upload(*, batch: Batch, incoming: IncomingFile) -> Upload:
    sha = intake.sha256_file(incoming.path)
    upload = Upload(batch=batch, filename=clean_filename(incoming.filename), sha256=sha, size=incoming.path.stat().st_size)
    with incoming.path.open("rb") as fh:
        upload.file.save(upload.filename, File(fh), save=False)
    upload.save()
    return upload


def _document_from_entry(*, batch, upload, entry: intake.Entry, seen: dict, limits: intake.Limits,
                         whole_upload: bool = False) -> Document:
    filename = clean_filename(entry.name)
    doc = Document(batch=batch, upload=upload, filename=filename)
    if entry.path is None:
        # The bytes could not be taken out safely; the upload row keeps the original archive.
        return _save_failed(doc, entry.error)
    if whole_upload:
        doc.sha256, doc.size = upload.sha256, upload.size
        doc.original.name = upload.file.name  # the same stored file: a rejected 60 MB upload is kept once
    else:
        doc.sha256 = intake.sha256_file(entry.path)
        doc.size = entry.path.stat().st_size
        with entry.path.open("rb") as fh:
            doc.original.save(filename, File(fh), save=False)
    if entry.error is not None:
        return _save_failed(doc, entry.error)
    if doc.sha256 in seen:
        first = seen[doc.sha256]
        doc.duplicate_of = first
        return _save_failed(
            doc,
            intake.IntakeError("duplicate", f"Same content as {first.filename} in this batch; it is processed once."),
        )
    try:
        info = intake.inspect_file(path=entry.path, filename=filename, limits=limits)
    except intake.IntakeError as exc:
        return _save_failed(doc, exc)
    doc.kind, doc.mime, doc.page_count = info.kind, info.mime, info.pages
    doc.status = Status.QUEUED.value
    doc.save()
    seen[doc.sha256] = doc
    return doc


def _save_failed(doc: Document, error: intake.IntakeError) -> Document:
    doc.status = Status.FAILED.value
    doc.error_code = error.code[:40]
    doc.error_message = error.message
    doc.save()
    log.info("document %s rejected at intake: %s", doc.filename, error.code)
    return doc


@transaction.atomic
def batch_create_from_files(
    *, name: str, doctype: str, ocr_engine: str, files: list[IncomingFile], options: dict | None = None, user=None,
    queue: bool = True, team_id: int | None = None,
) -> Batch:
    batch = batch_create(name=name, doctype=doctype, ocr_engine=ocr_engine, options=options, user=user,
                         team_id=team_id)
    batch_add_files(batch=batch, files=files, queue=queue)
    return batch


def document_attach_textract(*, document: Document, content: File, filename: str = "textract.json") -> Document:
    """Use a precomputed Textract response instead of running OCR, and process the document again.

    The file is stored as it came and read by the worker (extraction.pipeline.process): a large response takes
    seconds to parse, too long for a web request, and one that is not Textract JSON fails that document with
    the reason, like any bad input."""
    from extraction.pipeline.requeue import document_requeue

    with transaction.atomic():
        locked = Document.objects.select_for_update().get(pk=document.pk)
        if locked.status == Status.PROCESSING.value:
            raise intake.IntakeError("busy", "The document is being processed; attach the JSON when it is done.")
        if locked.textract_import:
            locked.textract_import.delete(save=False)
        locked.textract_import.save(clean_filename(filename), content, save=True)
        locked.pages.all().delete()  # pages and blocks are read again from the attached response
        if locked.status != Status.QUEUED.value:
            document_requeue(document_id=locked.pk)
    locked.refresh_from_db()
    return locked
