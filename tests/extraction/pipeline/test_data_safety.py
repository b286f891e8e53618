"""Processing never touches an uploaded original; deleting a batch is confirmed and recorded."""

from __future__ import annotations

import hashlib

import pytest
from django.core.files.storage import default_storage
from django.urls import reverse

from extraction.models import Batch, Document, Upload
from extraction.pipeline.ingest import IncomingFile, batch_create_from_files
from extraction.pipeline.process import document_process
from extraction.pipeline.requeue import document_requeue
from reviewer.models import BatchDeletion
from sheetgen.generate import generate_acta
from tests.support import badfiles


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def processed(db, tmp_path):
    pdf = tmp_path / "acta.pdf"
    pdf.write_bytes(generate_acta(seed=81).pdf_bytes)
    png = badfiles.make_png(tmp_path)
    inputs = {p.name: p.read_bytes() for p in (pdf, png)}
    batch = batch_create_from_files(name="safe", doctype="acta", ocr_engine="auto",
                                    files=[IncomingFile(p.name, p) for p in (pdf, png)])
    for doc in batch.documents.all():
        document_process(document_id=doc.id)
    return batch, inputs


def test_processing_and_re_running_never_change_an_uploaded_original(processed):
    batch, inputs = processed
    for doc in batch.documents.all():
        assert document_requeue(document_id=doc.id)
        document_process(document_id=doc.id)
    for doc in Document.objects.filter(batch=batch):
        with doc.original.open("rb") as fh:
            stored = fh.read()
        assert stored == inputs[doc.filename] and doc.sha256 == _sha(stored)
    for upload in Upload.objects.filter(batch=batch):
        with upload.file.open("rb") as fh:
            assert _sha(fh.read()) == upload.sha256 == _sha(inputs[upload.filename])


def test_deleting_a_batch_needs_its_name_and_leaves_a_record(processed, client_as,
                                                             django_capture_on_commit_callbacks):
    batch, _ = processed
    names = [u.file.name for u in Upload.objects.filter(batch=batch)]
    client = client_as("admin")
    assert client.get(reverse("batch_delete", args=[batch.id])).status_code == 200
    wrong = client.post(reverse("batch_delete", args=[batch.id]), {"confirm_name": "not it"})
    assert wrong.status_code == 400 and Batch.objects.filter(pk=batch.id).exists()

    with django_capture_on_commit_callbacks(execute=True):  # the files go once the deletion is committed
        response = client.post(reverse("batch_delete", args=[batch.id]), {"confirm_name": "safe", "reason": "test"})
    assert response.status_code == 302
    assert not Batch.objects.filter(pk=batch.id).exists()
    record = BatchDeletion.objects.get(batch_id=batch.id)
    assert record.deleted_by.username == "admin" and record.documents == 2 and record.reason == "test"
    assert sorted(f["filename"] for f in record.files) == ["acta.pdf", "good.png"]
    assert not any(default_storage.exists(n) for n in names)


def test_the_delete_page_counts_a_batchs_documents_in_words(processed, client_as):
    batch, _ = processed
    client = client_as("admin")
    assert "This deletes its 2 documents," in client.get(reverse("batch_delete", args=[batch.id])).content.decode()
    Document.objects.filter(pk=batch.documents.order_by("id").first().pk).delete()
    assert "This deletes its 1 document," in client.get(reverse("batch_delete", args=[batch.id])).content.decode()

@pytest.mark.parametrize("role", ["reviewer", "supervisor", "outsider"])
def test_only_an_admin_may_delete_a_batch(processed, client_as, role):
    batch, _ = processed
    client = client_as(role)
    assert client.post(reverse("batch_delete", args=[batch.id]), {"confirm_name": "safe"}).status_code == 403
    assert Batch.objects.filter(pk=batch.id).exists()
