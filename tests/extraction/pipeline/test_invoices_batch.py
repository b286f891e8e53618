"""The invoice intake's yardstick: the shared invoices uploaded as batches yield pages and blocks in which every
expected amount, date and invoice number is found — PDFs through the text layer, PNGs through rapidocr."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from extraction.models import Batch, Document
from extraction.pipeline.extract import ocr_pages_of
from extraction.pipeline.process import document_read
from tests.support.accounts import give_roles
from tests.support.invoice_truth import INVOICES, KNOWN_MISSING, expected_values, load_truth, locate
from tests.support.paths import needs_shared_data

pytestmark = needs_shared_data("invoices")


@pytest.fixture(scope="module")
def read_batches(django_db_setup, django_db_blocker):
    """Upload both batches through the admin page once and read every document (render + OCR)."""
    from django.contrib.auth.models import User
    from django.test import Client

    # The test reads each document itself; no task may go to a worker that might be running.
    with django_db_blocker.unblock(), pytest.MonkeyPatch.context() as patch:
        patch.setattr("extraction.pipeline.dispatch.documents_queue", lambda ids, **kw: None)
        # an invoice is read only by an LLM: the upload form refuses the type without one (never called here)
        patch.setenv("LLM_BASE_URL", "http://127.0.0.1:9/v1")
        patch.setenv("LLM_MODEL", "unused")
        admin = User.objects.create_user("invoice-admin")
        give_roles(admin, "admin")
        client = Client()
        client.force_login(admin)
        batches = {}
        for source, suffix, engine in (("pdf", "pdf", "pdf-text"), ("png", "png", "rapidocr")):
            files = [SimpleUploadedFile(p.name, p.read_bytes()) for p in sorted(INVOICES.glob(f"*.{suffix}"))]
            response = client.post(reverse("batch_upload"), {
                "name": f"invoices-{source}", "doctype": "invoice", "ocr_engine": engine, "files": files})
            assert response.status_code == 302
            batch = Batch.objects.get(name=f"invoices-{source}")
            pages = {}
            for doc in batch.documents.order_by("filename"):
                assert doc.status == "queued", f"{doc.filename}: {doc.error_message}"
                document_read(document=doc)
                pages[doc.filename.rsplit(".", 1)[0]] = ocr_pages_of(document=doc)
            batches[source] = pages
        yield batches
        Document.objects.filter(batch__name__startswith="invoices-").delete()
        Batch.objects.filter(name__startswith="invoices-").delete()
        admin.delete()


def _cases(suffix: str) -> list:
    names = sorted(p.stem for p in INVOICES.glob(f"*.{suffix}")) if INVOICES.is_dir() else []
    return [pytest.param(suffix, n, label, value, id=f"{suffix}-{n}-{label}")
            for n in names for label, value in expected_values(load_truth(n))]


@pytest.mark.parametrize(("source", "name", "label", "value"), _cases("pdf") + _cases("png"))
def test_each_expected_value_is_found_in_the_stored_blocks(read_batches, db, source, name, label, value):
    # `db` keeps these beside the module's other test, so the batches are read once, not twice
    blocks = [b for page in read_batches[source][name] for b in page.blocks]
    assert blocks, f"{name} ({source}) has no blocks"
    found = locate(value, blocks)
    reason = KNOWN_MISSING.get((source, name, label))
    if reason:
        assert found is None, f"{label}={value} is listed as missing ({reason}) but is in {found.text!r}"
    else:
        assert found is not None, f"{label}={value} not found in the stored blocks of {name} ({source})"
        assert found.bbox.left >= 0 and found.bbox.right <= 1.0001 and found.bbox.height > 0


def test_every_page_of_the_batches_is_stored_with_its_engine(read_batches, db):
    for source, engine in (("pdf", "pdf-text"), ("png", "rapidocr")):
        for pages in read_batches[source].values():
            assert pages and all(p.blocks for p in pages)
        stored = Document.objects.filter(batch__name=f"invoices-{source}")
        assert stored.count() == len(read_batches[source])
        assert set(stored.values_list("pages__engine", flat=True)) == {engine}
