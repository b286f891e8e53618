"""A batch through a real Celery worker on Redis: every document reaches a final state."""

from __future__ import annotations

import time

import pytest

from extraction.models import Batch, Document, Round
from extraction.pipeline.ingest import IncomingFile, batch_create_from_files
from sheetgen.generate import generate_acta
from tests.support import badfiles

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def wait_for_final(batch: Batch, timeout: float = 180) -> dict[str, str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        states = dict(Document.objects.filter(batch=batch).values_list("filename", "status"))
        if states and all(s in ("passed", "flagged", "failed") for s in states.values()):
            return states
        time.sleep(0.5)
    raise AssertionError(f"documents still not final after {timeout}s: {states}")


def test_a_queued_batch_is_processed_by_the_worker(celery_worker_process, tmp_path):
    clean = tmp_path / "clean.pdf"
    clean.write_bytes(generate_acta(seed=11).pdf_bytes)
    wrong = tmp_path / "wrong.pdf"
    wrong.write_bytes(generate_acta(seed=12, errors=["sum_mismatch"]).pdf_bytes)
    corrupt = badfiles.make_corrupt_pdf(tmp_path)
    batch = batch_create_from_files(
        name="worker", doctype="acta", ocr_engine="auto",
        files=[IncomingFile(p.name, p) for p in (clean, wrong, corrupt)],
    )
    states = wait_for_final(batch)
    assert states["corrupt.pdf"] == "failed"
    assert states["wrong.pdf"] == "flagged"
    doc = Document.objects.get(batch=batch, filename="wrong.pdf")
    extraction = doc.extractions.get()
    assert extraction.reader == "template" and extraction.stop_reason in ("exhausted", "stagnated")
    assert Round.objects.filter(extraction=extraction, state="completed").count() == 1
    assert extraction.violations.filter(code="sum_valid_votes").exists()
    assert doc.truth and len(doc.truth["counts"]) == 38


def test_the_services_send_the_task_by_the_name_it_is_registered_under():
    from extraction.pipeline.dispatch import PROCESS_DOCUMENT
    from extraction.pipeline.tasks import process_document

    assert process_document.name == PROCESS_DOCUMENT


def test_the_worker_and_its_pool_run_below_the_web_process_so_a_batch_yields_the_cpu(celery_worker_process):
    import os
    import subprocess

    from django.conf import settings

    main = celery_worker_process.proc.pid
    children = [int(pid) for pid in subprocess.run(["pgrep", "-P", str(main)], capture_output=True, text=True,
                                                    check=False).stdout.split()]
    assert children, "the prefork pool has a process"
    web = os.getpriority(os.PRIO_PROCESS, 0)
    assert web < settings.WORKER_NICENESS
    for pid in [main, *children]:
        assert os.getpriority(os.PRIO_PROCESS, pid) == settings.WORKER_NICENESS
