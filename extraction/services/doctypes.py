"""Writes of the document types admins define: saving a version, trying a draft on one document."""

from __future__ import annotations

from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import Max

from extraction.doctypes.registry import DOCTYPE_CHOICES
from extraction.models import Batch, DocTypeVersion, Document
from extraction.selectors_doctypes import RULE_LABELS_CACHE
from extraction.services.ingest import IncomingFile, batch_add_files
from extraction.services.pipeline import document_process
from extraction.typedef.check import DefinitionError, spec_parse

__all__ = ["doctype_trial_run", "doctype_version_save"]

_SAVE_ATTEMPTS = 3


def doctype_version_save(*, data: dict, user) -> tuple[DocTypeVersion, bool]:
    """Save `data` as the next version of its type; (version, created). A definition equal to the newest
    version saves nothing: versions record changes. DefinitionError lists what is wrong with it."""
    spec = spec_parse(data)
    if spec.name in {name for name, _ in DOCTYPE_CHOICES}:
        raise DefinitionError([f"the name {spec.name!r} is a built-in type's; choose another"])
    definition = spec.as_data()
    for _ in range(_SAVE_ATTEMPTS):
        newest = DocTypeVersion.objects.filter(name=spec.name).order_by("-version").first()
        if newest is not None and newest.definition == definition:
            return newest, False
        try:
            with transaction.atomic():
                # two admins saving at once: the unique (name, version) lets one win; the other tries again
                number = (DocTypeVersion.objects.filter(name=spec.name).aggregate(v=Max("version"))["v"] or 0) + 1
                saved = DocTypeVersion.objects.create(name=spec.name, version=number, label=spec.label,
                                                      definition=definition, created_by=user)
            cache.delete(RULE_LABELS_CACHE)  # the rules' labels may have changed
            return saved, True
        except IntegrityError:
            continue
    raise DefinitionError(["another admin is saving this type right now; save again"])


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
