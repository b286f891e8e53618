"""Faults around real workers: SIGKILL mid-document and mid-LLM call, a worker slower than its lease, dripping
and hanging model endpoints, the broker down at upload, Redis restarted mid-batch. Each ends with every
document final (0 lost) and processed by exactly one run (0 twice).

No other worker competes: the one tests/extraction/pipeline/test_worker.py starts lives only while its tests run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime

import pytest

from extraction.models import Batch, Document, Round
from extraction.pipeline.ingest import IncomingFile, batch_create_from_files
from extraction.pipeline.process import documents_requeue_stuck
from extraction.pipeline.requeue import document_requeue
from tests.support.acta_pipeline import acta_pdf, model, scanned_acta
from tests.support.faults import (
    assert_processed_once,
    free_port,
    in_django,
    runs_of,
    start_redis,
    wait_final,
    wait_status,
    wait_until,
)
from tests.support.llm_server import reply_delay, reply_drip, reply_hang
from tests.support.paths import ROOT
from tests.support.worker import WorkerProcess

pytestmark = [pytest.mark.worker, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

SLACK = 5.0  # seconds past a deadline allowed on a loaded 2-core machine (claims, OCR, database writes)


def _llm_env(worker_env: dict, server, **extra: str) -> dict:
    return {**worker_env, "LLM_BASE_URL": server.base_url, "LLM_MODEL": "scripted", "LLM_INPUT": "text",
            "LLM_MAX_RETRIES": "1", "LLM_TIMEOUT": "20", "REAPER_INTERVAL_SECONDS": "1", **extra}


def test_a_worker_killed_mid_document_leaves_it_to_be_processed_exactly_once(worker_env, tmp_path):
    env = {**worker_env, "CELERY_VISIBILITY_TIMEOUT": "5", "PROCESSING_LEASE_SECONDS": "3",
           "REAPER_INTERVAL_SECONDS": "1"}
    first = WorkerProcess(env, tmp_path / "first.log")
    first.start()
    try:
        batch = batch_create_from_files(name="killed", doctype="acta", ocr_engine="rapidocr",
                                        files=[scanned_acta(tmp_path, seed=31)])
        doc = batch.documents.get()
        wait_status(doc.id, "processing")
        time.sleep(1)  # well inside the OCR of the scan
        first.kill()  # SIGKILL to the worker and its pool: no chance to ack or clean up
    finally:
        first.stop()
    doc.refresh_from_db()
    assert doc.status == "processing"

    second = WorkerProcess(env, tmp_path / "second.log")
    second.start()
    try:
        states = wait_final(batch)
    finally:
        second.stop()
    doc.refresh_from_db()
    assert states[doc.filename] in ("passed", "flagged")
    assert doc.attempts == 2  # taken back once, by the redelivered message or by the reaper
    assert_processed_once(batch)
    assert list(runs_of(doc).get().rounds.values_list("number", flat=True)) == [1]  # no duplicate rounds


def test_a_worker_killed_during_an_llm_call_leaves_no_round_started_and_the_document_done_once(
        worker_env, llm_server, tmp_path):
    acta, path = acta_pdf(tmp_path, seed=81)
    llm_server.script(reply_hang())  # the first call never answers: the worker is killed while it waits
    llm_server.always(model(acta.printed))
    env = _llm_env(worker_env, llm_server, CELERY_VISIBILITY_TIMEOUT="5", PROCESSING_LEASE_SECONDS="3")
    first = WorkerProcess(env, tmp_path / "first.log")
    first.start()
    try:
        batch = batch_create_from_files(name="killed-llm", doctype="acta", ocr_engine="pdf-text",
                                        files=[IncomingFile(path.name, path)])
        wait_until(lambda: llm_server.requests, 60, "the first LLM call")
        first.kill()
    finally:
        first.stop()
    second = WorkerProcess(env, tmp_path / "second.log")
    second.start()
    try:
        states = wait_final(batch, timeout=120)
    finally:
        second.stop()
    doc = batch.documents.get()
    assert states[doc.filename] == "passed", doc.error_message
    assert_processed_once(batch)
    killed = Round.objects.get(extraction__document=doc, extraction__error__startswith="Abandoned")
    assert killed.state == "failed" and killed.finished_at and "worker" in killed.error
    assert len(llm_server.requests) == 2  # the call that hung, and the one run that finished


def test_a_live_worker_slower_than_its_lease_keeps_its_document_and_it_is_processed_once(
        worker_env, llm_server, tmp_path, settings):
    settings.PROCESSING_LEASE_SECONDS = 2  # the reaper in this process uses it too
    acta, path = acta_pdf(tmp_path, seed=82)
    llm_server.always(reply_delay(7, model(acta.printed)))  # the model thinks for 3.5 leases
    worker = WorkerProcess(_llm_env(worker_env, llm_server, PROCESSING_LEASE_SECONDS="2"), tmp_path / "w.log")
    worker.start()
    try:
        batch = batch_create_from_files(name="slow", doctype="acta", ocr_engine="pdf-text",
                                        files=[IncomingFile(path.name, path)])
        doc = batch.documents.get()
        wait_status(doc.id, "processing")
        while Document.objects.filter(pk=doc.id, status="processing").exists():
            documents_requeue_stuck()  # the reaper, as often as it likes, beside the worker's own
            time.sleep(0.3)
        wait_final(batch)
    finally:
        worker.stop()
    doc.refresh_from_db()
    assert doc.status == "passed" and doc.attempts == 1
    assert doc.extractions.count() == 1  # not even an abandoned one
    assert len(llm_server.requests) == 1  # one bill
    assert_processed_once(batch)


def test_dripping_and_hanging_endpoints_fail_their_documents_by_the_deadline_and_the_worker_moves_on(
        worker_env, llm_server, tmp_path):
    sheets = {name: acta_pdf(tmp_path, seed=seed) for name, seed in (("drip", 83), ("hang", 84), ("fine", 85))}
    ids = {name: acta.printed["acta_id"] for name, (acta, _) in sheets.items()}
    broken = {"drip": reply_drip(1.0), "hang": reply_hang()}
    healthy = False
    first_call: dict[str, datetime] = {}

    def endpoint(body):
        text = json.dumps(body)
        name = next(n for n, acta_id in ids.items() if acta_id in text)
        first_call.setdefault(name, datetime.now(UTC))
        if name in broken and not healthy:
            return broken[name]
        return model(sheets[name][0].printed)(body)

    llm_server.always(endpoint)
    env = _llm_env(worker_env, llm_server, LLM_TIMEOUT="2", LLM_MAX_RETRIES="5", LLM_DOCUMENT_TIMEOUT="5")
    worker = WorkerProcess(env, tmp_path / "w.log")  # one process: a stuck call would hold the whole queue
    worker.start()
    try:
        batch = batch_create_from_files(name="deadlines", doctype="acta", ocr_engine="pdf-text",
                                        files=[IncomingFile(p.name, p) for _, p in sheets.values()])
        states = wait_final(batch, timeout=120)
        docs = {name: batch.documents.get(filename=p.name) for name, (_, p) in sheets.items()}
        assert states[docs["fine"].filename] == "passed"
        for name in broken:
            doc = docs[name]
            assert (doc.status, doc.error_code) == ("failed", "llm"), (name, doc.error_message)
            assert "LLM_DOCUMENT_TIMEOUT" in doc.error_message and "retried" in doc.error_message
            # From its first model call to its end: the document's budget, LLM_DOCUMENT_TIMEOUT, and little more.
            assert (doc.processed_at - first_call[name]).total_seconds() < 5 + SLACK, name
        assert_processed_once(batch)

        healthy = True  # the endpoint recovers: an admin's retry passes
        for name in broken:
            assert document_requeue(document_id=docs[name].id)
        wait_final(batch, timeout=120)
        for name in broken:
            docs[name].refresh_from_db()
            assert docs[name].status == "passed", docs[name].error_message
        assert_processed_once(batch, runs={docs[n].filename: 2 for n in broken})  # the failed run and the retry
    finally:
        worker.stop()


def _upload_in_another_process(env: dict, paths: list, *, name: str, timeout: float = 180) -> tuple[str, float]:
    """An admin's upload through the web app in its own process (its own broker connection): what it printed
    (status, redirect, messages) and how long the request took."""
    upload = f"""
import time
from django.contrib.auth.models import User
from django.contrib.messages import get_messages
from django.test import Client
client = Client()
client.force_login(User.objects.get(username="admin"))
files = [open(p, "rb") for p in {[str(p) for p in paths]!r}]
started = time.monotonic()
response = client.post("/batches/new/", {{"name": {name!r}, "doctype": "acta", "ocr_engine": "pdf-text",
                                          "files": files}})
took = time.monotonic() - started
print(response.status_code, response.get("Location", ""))
print([str(m) for m in get_messages(response.wsgi_request)])
print(took)
"""
    out = in_django(upload, env, timeout=timeout)
    return out, float(out.splitlines()[-1])


def test_an_upload_while_the_broker_is_down_says_processing_is_delayed_and_is_sent_when_it_is_back(
        worker_env, users, tmp_path):
    port = free_port()
    env = {**worker_env, "CELERY_BROKER_URL": f"redis://127.0.0.1:{port}/0"}  # nothing listens there yet
    paths = [acta_pdf(tmp_path, seed=seed)[1] for seed in (86, 87)]
    out, took = _upload_in_another_process(env, paths, name="broker-down")
    assert took < 60  # the upload does not hang on the broker
    status, location = out.splitlines()[0].split(" ", 1)
    assert status == "302" and "/batches/" in location, out  # no 500
    assert "processing of its 2 queued documents is delayed" in out and "do not upload them again" in out
    batch = Batch.objects.get(name="broker-down")
    assert Batch.objects.filter(name="broker-down").count() == 1
    assert set(batch.documents.values_list("status", flat=True)) == {"queued"}
    assert not batch.documents.filter(dispatched_at__isnull=False).exists()

    redis = start_redis(port, tmp_path)
    back = time.monotonic()
    worker = WorkerProcess({**env, "REAPER_INTERVAL_SECONDS": "20"}, tmp_path / "w.log")  # the default schedule
    try:
        worker.start()
        wait_until(lambda: not batch.documents.filter(dispatched_at__isnull=True, status="queued").exists(),
                   90, "the delayed documents sent")
        assert time.monotonic() - back < 60  # within a minute of the broker's return
        states = wait_final(batch, timeout=120)
        assert set(states.values()) <= {"passed", "flagged"}, states
        assert_processed_once(batch)
    finally:
        worker.stop()
        redis.kill()


def test_an_upload_while_the_broker_hangs_answers_within_seconds_as_when_it_is_down(worker_env, users, tmp_path):
    port = free_port()
    redis = start_redis(port, tmp_path)
    os.kill(redis.pid, signal.SIGSTOP)  # it takes connections and answers nothing
    env = {**worker_env, "CELERY_BROKER_URL": f"redis://127.0.0.1:{port}/0", "CELERY_BROKER_SOCKET_TIMEOUT": "3"}
    try:
        out, took = _upload_in_another_process(env, [acta_pdf(tmp_path, seed=88)[1]], name="broker-hung", timeout=90)
    finally:
        os.kill(redis.pid, signal.SIGCONT)
        redis.kill()
    assert took < 3 + SLACK, out  # one socket timeout, not the web server's
    status, location = out.splitlines()[0].split(" ", 1)
    assert status == "302" and "/batches/" in location, out  # the refused broker's path: no 500
    assert "processing of its 1 queued document is delayed" in out and "do not upload them again" in out
    batch = Batch.objects.get(name="broker-hung")
    assert list(batch.documents.values_list("status", "dispatched_at")) == [("queued", None)]  # the reaper's


@pytest.mark.parametrize(("variable", "value", "message"), [
    ("CELERY_BROKER_SOCKET_TIMEOUT", "soon", "CELERY_BROKER_SOCKET_TIMEOUT='soon' is not a number"),
    ("CELERY_BROKER_CONNECT_TIMEOUT", "0", "CELERY_BROKER_CONNECT_TIMEOUT=0.0 is below the minimum of 0.1")])
def test_a_bad_broker_timeout_stops_start_up_with_its_name(worker_env, variable, value, message):
    env = {**worker_env, "CELERY_BROKER_URL": "redis://127.0.0.1:6379/13", variable: value,
           "DJANGO_SETTINGS_MODULE": "reviewer.settings"}
    done = subprocess.run([sys.executable, "-c", "import django; django.setup()"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode != 0 and message in done.stderr


def test_a_batch_completes_once_when_its_redis_restarts_mid_batch(worker_env, tmp_path):
    port = free_port()
    redis = start_redis(port, tmp_path)
    env = {**worker_env, "CELERY_BROKER_URL": f"redis://127.0.0.1:{port}/0", "REAPER_INTERVAL_SECONDS": "5",
           "DISPATCH_LOST_AFTER_SECONDS": "10"}
    worker = WorkerProcess(env, tmp_path / "worker.log")
    try:
        worker.start()
        files = [scanned_acta(tmp_path, seed=s) for s in (41, 42, 43)]
        in_django("from django.core.management import call_command; call_command('ingest', *%r, "
                  "'--type', 'acta', '--batch', 'redis-restart', '--engine', 'rapidocr')"
                  % [str(f.path) for f in files], env)
        batch = Batch.objects.get(name="redis-restart")
        first = batch.documents.order_by("id").first()
        wait_status(first.id, "processing")
        redis.kill()  # everything queued in it is lost (no persistence)
        redis.wait()
        time.sleep(2)
        redis = start_redis(port, tmp_path)
        # Nobody runs anything by hand: the worker's reaper finds the lost messages and sends them again.
        states = wait_final(batch, timeout=300)
        assert all(s in ("passed", "flagged") for s in states.values()), states
        assert_processed_once(batch)
    finally:
        worker.stop()
        redis.kill()
