"""Trying a draft document type on one document: a trial batch read here and now."""

from __future__ import annotations

from extraction.doctypes.defined.check import spec_parse
from extraction.models import Batch, Document
from extraction.pipeline.ingest import IncomingFile, batch_add_files
from extraction.pipeline.process import document_process

__all__ = ["doctype_trial_run"]


def doctype_trial_run(*, data: dict, file: IncomingFile, ocr_engine: str, user) -> Document:
    """Read one document with a draft definition, here and now, as a trial batch (kept out of lists,
    queue and audits) that the desk shows on its two panes. The draft is checked first (DefinitionError);
    a bad file ends as a FAILED document with its reason, as in any batch."""
    spec = spec_parse(data)
    batch = Batch.objects.create(name=f"Trial of {spec.label}", doctype=spec.name, ocr_engine=ocr_engine,
                                 settings={"definition": spec.as_data()}, trial=True, created_by=user)
    documents = batch_add_files(batch=batch, files=[file], queue=False)
    document = documents[0]
    document_process(document_id=document.id)  # claims it only if intake queued it
    document.refresh_from_db()
    return document
