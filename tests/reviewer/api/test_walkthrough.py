"""docs/api_walkthrough.py, the example of docs/API.md, run as another system would run it: against the app over
HTTP with a token, a real worker on Redis, and the script's own webhook receiver registered as an endpoint."""

from __future__ import annotations

import subprocess
import sys

import pytest

from extraction.models import Document, Extraction, FieldValue, ReviewEvent
from reviewer.api.services import token_create
from reviewer.webhooks.services import endpoint_create
from sheetgen.generate import generate_acta
from tests.support.faults import free_port
from tests.support.paths import ROOT
from tests.support.worker import WorkerProcess

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


@pytest.mark.timeout(420)
def test_the_api_walkthrough_uploads_hears_the_batch_finish_reads_proofs_and_verifies_a_flagged_one(
        live_server, worker_env, users, settings, tmp_path):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True  # the receiver is on this machine
    port = free_port()
    endpoint = endpoint_create(url=f"http://127.0.0.1:{port}/", events=["batch.finished"], user=users["admin"])
    files = []
    for seed, errors in ((301, ()), (302, ("sum_mismatch",))):
        path = tmp_path / f"acta-{seed}.pdf"
        path.write_bytes(generate_acta(seed=seed, errors=errors).pdf_bytes)
        files.append(str(path))
    worker = WorkerProcess({**worker_env, "WEBHOOK_ALLOW_PRIVATE_URLS": "true"}, tmp_path / "worker.log")
    worker.start()
    try:
        run = subprocess.run(
            [sys.executable, "docs/api_walkthrough.py", "--doctype", "acta", "--listen", f"127.0.0.1:{port}",
             "--correct", "rows[0].votes=7", "--timeout", "240", *files],
            cwd=ROOT, capture_output=True, text=True, timeout=300,
            env={"PATH": "/usr/bin:/bin", "PROOFDESK_URL": live_server.url, "WEBHOOK_SECRET": endpoint.secret,
                 "PROOFDESK_TOKEN": token_create(user=users["admin"], name="walkthrough").secret,
                 "REVIEWER_TOKEN": token_create(user=users["reviewer"], name="walkthrough").secret})
    finally:
        worker.stop()
    assert run.returncode == 0, run.stdout + run.stderr
    assert "batch.finished" in run.stdout
    flagged = Document.objects.get(filename="acta-302.pdf")
    assert flagged.review_status in ("verified", "corrected")
    assert ReviewEvent.objects.filter(document=flagged, user=users["reviewer"], kind="verify").exists()
    current = Extraction.objects.current_for(flagged)
    assert FieldValue.objects.get(extraction=current, path="rows[0].votes").value == 7
    cited = FieldValue.objects.filter(extraction=current).exclude(proofs=[]).first()
    assert f'p1 "{cited.proofs[0]["text"]}' in run.stdout  # each field is printed with the words of its proof
