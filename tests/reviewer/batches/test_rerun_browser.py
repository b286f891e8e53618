"""In a real browser: an admin re-runs a batch and the dashboard shows the new run as it finishes, unreloaded."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from extraction.models import Document
from extraction.pipeline.ingest import IncomingFile, batch_create_from_files
from extraction.pipeline.process import document_process
from sheetgen.generate import generate_acta
from tests.support.desk_browser import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_dashboard_shows_a_new_run_as_it_finishes_without_a_reload(live_server, page, users, tmp_path):
    files = []
    for seed in (81, 82):
        path = tmp_path / f"acta-{seed}.pdf"
        path.write_bytes(generate_acta(seed=seed).pdf_bytes)
        files.append(IncomingFile(path.name, path))
    batch = batch_create_from_files(name="rerun-live", doctype="acta", ocr_engine="pdf-text", files=files,
                                    queue=False)
    for doc in batch.documents.all():
        document_process(document_id=doc.id)
    base = live_server.url
    login(page, base, "admin")
    page.goto(f"{base}/batches/{batch.id}/rerun/")
    page.select_option("select[name=scope]", "all")
    page.click("#rerun-form button[type=submit]")
    page.wait_for_url(f"{base}/batches/{batch.id}/dashboard/")
    column = [h.strip() for h in page.locator("#runs thead th").all_inner_texts()].index("Runs")
    assert page.locator("#runs tbody tr").first.locator("td").nth(column).inner_text() == "2"  # the re-run is queued
    for doc in Document.objects.filter(batch=batch):  # a worker reads them meanwhile
        document_process(document_id=doc.id)
    page.wait_for_function("() => document.querySelector('#runs tbody tr').querySelectorAll('td')"
                           f"[{column}].textContent.trim() === '4'", timeout=10_000)
    # the runs table and the states are two swaps of the same poll: under load one may land a moment later
    expect(page.locator("main")).not_to_contain_text("queued or processing", timeout=10_000)
