"""Load: small documents through 2 workers with the scripted LLM; the desk keeps answering.

The suite runs 300 (a busy 2-core machine finishes them in minutes); bench/load.py runs 1,000 for the
figures. The wait and the test's own timeout grow with the count, so that neither cuts the other short."""

from __future__ import annotations

import json
import time

import pytest
from django.db.models import Count
from django.test import Client
from django.urls import reverse

from extraction.models import Document, Round
from extraction.pipeline.ingest import IncomingFile, batch_create_from_files
from tests.support.browser import ARTIFACTS
from tests.support.load import COUNT, ENGINE, TIMEOUT, WAIT, DeskProbe, make_deeds, model_in_own_process
from tests.support.worker import WorkerProcess

pytestmark = [pytest.mark.worker, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.mark.timeout(TIMEOUT)
def test_many_documents_through_two_workers_all_end_final_while_the_desk_answers(
    worker_env, users, tmp_path
):
    paths = make_deeds(tmp_path, COUNT)
    with model_in_own_process() as model_url:
        env = {**worker_env, "LLM_BASE_URL": model_url, "LLM_MODEL": "scripted", "LLM_TIMEOUT": "30"}
        workers = [WorkerProcess(env, tmp_path / f"worker{i}.log") for i in range(2)]
        for worker in workers:
            worker.start()
        try:
            started = time.monotonic()
            batch = batch_create_from_files(name="load", doctype="ownership", ocr_engine=ENGINE,
                                            files=[IncomingFile(p.name, p) for p in paths])
            desk = Client()
            desk.force_login(users["admin"])
            probe = DeskProbe()
            urls = [reverse("batch_detail", args=[batch.id]), reverse("queue"), reverse("batch_list")]
            deadline = time.monotonic() + WAIT
            while time.monotonic() < deadline:
                probe.probe(desk, urls)
                left = Document.objects.filter(batch=batch, status__in=["queued", "processing"]).count()
                if left == 0:
                    break
                time.sleep(1)
            elapsed = time.monotonic() - started
        finally:
            for worker in workers:
                worker.stop()

    states = dict(Document.objects.filter(batch=batch).values_list("status").annotate(n=Count("id")))
    assert sum(states.values()) == COUNT
    from extraction.models import Violation

    broken = list(Violation.objects.filter(extraction__document__batch=batch).values_list("message", flat=True)[:5])
    assert states.get("passed", 0) == COUNT, (states, broken)
    assert Round.objects.filter(extraction__document__batch=batch).count() == COUNT  # one round each, none twice
    assert not probe.failures, probe.failures[:5]
    summary = probe.summary()
    assert summary["p95_ms"] < 5000, summary  # the desk kept answering
    ARTIFACTS.mkdir(exist_ok=True)
    figures = {"documents": COUNT, "workers": 2, "seconds": round(elapsed, 1),
               "documents_per_second": round(COUNT / elapsed, 2), "desk": summary}
    (ARTIFACTS / "load.json").write_text(json.dumps(figures, indent=2))
    print(json.dumps(figures))
