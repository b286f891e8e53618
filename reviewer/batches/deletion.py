"""Deleting a batch: an admin's deliberate act, confirmed by the batch's name, recorded for good."""

from __future__ import annotations

import logging

from django.db import transaction

from extraction.models import Batch, Block, Document, Page, Upload
from extraction.states import Status
from reviewer.models import BatchDeletion

log = logging.getLogger(__name__)


class DeletionError(Exception):
    pass


def batch_delete(*, batch_id: int, confirm_name: str, user, reason: str = ""):
    """Delete a batch, its rows and its stored files, leaving a BatchDeletion record."""
    with transaction.atomic():
        batch = Batch.objects.select_for_update().get(pk=batch_id)
        if confirm_name.strip() != batch.name:
            raise DeletionError("Type the batch's name exactly to confirm the deletion.")
        if batch.documents.filter(status=Status.PROCESSING.value).exists():
            raise DeletionError("Documents of this batch are being processed; delete it when they are done.")
        uploads = list(Upload.objects.filter(batch=batch))
        names = [u.file.name for u in uploads if u.file]
        names += [n for n in Document.objects.filter(batch=batch).values_list("original", flat=True) if n]
        names += [n for n in Document.objects.filter(batch=batch).values_list("textract_import", flat=True) if n]
        for image, preview in Page.objects.filter(document__batch=batch).values_list("image", "preview"):
            names += [n for n in (image, preview) if n]
        record = BatchDeletion.objects.create(
            batch_id=batch.id, name=batch.name, doctype=batch.doctype, documents=batch.documents.count(),
            files=[{"filename": u.filename, "sha256": u.sha256, "size": u.size} for u in uploads],
            reason=reason, deleted_by=user,
        )
        Block.objects.filter(document__batch=batch).delete()  # in bulk, before the cascade walks them
        batch.delete()
        transaction.on_commit(lambda: _delete_files(names))
    return record


def _delete_files(names: list[str]) -> None:
    from botocore.exceptions import BotoCoreError, ClientError
    from django.core.files.storage import default_storage

    for name in names:
        try:
            default_storage.delete(name)
        except OSError:
            pass  # a file already gone is what we wanted
        except (BotoCoreError, ClientError):  # the store is away: the batch is gone, its file stays behind
            log.warning("could not delete %s from the file store; it is left there", name, exc_info=True)
