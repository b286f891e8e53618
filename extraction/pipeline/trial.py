"""Trying a draft document type on one document: a trial batch, read on a worker like any batch."""

from __future__ import annotations

from dataclasses import replace

from django.conf import settings

from extraction.doctypes.defined.check import spec_parse
from extraction.models import Batch, Document
from extraction.pipeline.ingest import IncomingFile, batch_add_files, intake_limits

__all__ = ["doctype_trial_start"]


def doctype_trial_start(*, data: dict, file: IncomingFile, ocr_engine: str, user, team_id: int) -> Document:
    """Queue one document to be read with a draft definition, as a trial batch (kept out of lists, queue and
    audits) that the desk shows on its two panes once a worker has read it: the request that starts it reads
    nothing. The draft is checked first (DefinitionError); a bad file, or one of more than TRIAL_MAX_PAGES
    pages, ends as a FAILED document with its reason at once, as in any batch."""
    spec = spec_parse(data)
    batch = Batch.objects.create(name=f"Trial of {spec.label}", doctype=spec.name, ocr_engine=ocr_engine,
                                 settings={"definition": spec.as_data()}, trial=True, created_by=user,
                                 team_id=team_id)
    limits = intake_limits()
    limits = replace(limits, max_pages=min(limits.max_pages, settings.TRIAL_MAX_PAGES),
                     pages_advice="A trial reads a short sample: try the type on a document of fewer pages, or "
                                  "save it and upload the whole document in a batch.")
    return batch_add_files(batch=batch, files=[file], limits=limits)[0]
