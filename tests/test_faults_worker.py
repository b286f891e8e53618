"""Faults around the worker: SIGKILL in the middle of a document, and the broker restarting mid-batch."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time

import pytest

from extraction.acta.generate import generate_acta, render_scan
from extraction.models import Batch, Document, Extraction
from extraction.services.ingest import IncomingFile, batch_create_from_files
from tests.test_worker import wait_for_final
from tests.worker import ROOT, WorkerProcess

pytestmark = [pytest.mark.worker, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def _scan(tmp_path, seed: int) -> IncomingFile:
    path = tmp_path / f"acta-{seed}.jpg"
    path.write_bytes(render_scan(generate_acta(seed=seed).pdf_bytes, seed=seed))
    return IncomingFile(path.name, path)


def _wait_status(document_id: int, status: str, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if Document.objects.filter(pk=document_id, status=status).exists():
            return
        time.sleep(0.1)
    raise AssertionError(f"document {document_id} never reached {status}")


def test_a_worker_killed_mid_document_leaves_it_to_be_processed_exactly_once(worker_env, tmp_path):
    env = {**worker_env, "CELERY_VISIBILITY_TIMEOUT": "5"}
    first = WorkerProcess(env, tmp_path / "first.log")
    first.start()
    try:
        batch = batch_create_from_files(name="killed", doctype="acta", ocr_engine="rapidocr",
                                        files=[_scan(tmp_path, 31)])
        doc = batch.documents.get()
        _wait_status(doc.id, "processing")
        time.sleep(1)  # well inside the OCR of the scan
        first.kill()  # SIGKILL to the worker and its pool: no chance to ack or clean up
    finally:
        first.stop()
    doc.refresh_from_db()
    assert doc.status == "processing"

    second = WorkerProcess(env, tmp_path / "second.log")
    second.start()
    try:
        states = wait_for_final(batch, timeout=240)
    finally:
        second.stop()
    doc.refresh_from_db()
    assert states[doc.filename] in ("passed", "flagged")
    assert doc.attempts == 2  # the same message, delivered again, took the document back
    finished = Extraction.objects.filter(document=doc).exclude(stop_reason="error")
    assert finished.count() == 1
    assert list(finished.get().rounds.values_list("number", flat=True)) == [1]  # no duplicate rounds


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_redis(port: int, directory) -> subprocess.Popen:
    proc = subprocess.Popen(
        [shutil.which("redis-server"), "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", str(directory)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    for _ in range(50):
        if subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True, text=True).stdout.strip() == "PONG":
            return proc
        time.sleep(0.1)
    raise RuntimeError("private redis-server did not start")


def _in_django(code: str, env: dict[str, str]) -> str:
    """Run code in a separate Django process (its own broker connection), as the web app would."""
    script = "import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'reviewer.settings'); django.setup()\n"
    result = subprocess.run([sys.executable, "-c", script + code], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def test_a_batch_completes_when_its_redis_restarts_mid_batch(worker_env, tmp_path):
    port = _free_port()
    redis = _start_redis(port, tmp_path)
    env = {**worker_env, "CELERY_BROKER_URL": f"redis://127.0.0.1:{port}/0"}
    worker = WorkerProcess(env, tmp_path / "worker.log")
    try:
        worker.start()
        files = [_scan(tmp_path, s) for s in (41, 42, 43)]
        _in_django("from django.core.management import call_command; call_command('ingest', *%r, "
                   "'--type', 'acta', '--batch', 'redis-restart', '--engine', 'rapidocr')"
                   % [str(f.path) for f in files], env)
        batch = Batch.objects.get(name="redis-restart")
        first = batch.documents.order_by("id").first()
        _wait_status(first.id, "processing")
        redis.kill()  # everything queued in it is lost (no persistence)
        redis.wait()
        time.sleep(2)
        redis = _start_redis(port, tmp_path)
        time.sleep(3)
        # The beat runs the reaper every few minutes; here it runs at once.
        resent = _in_django("from datetime import timedelta; from extraction.services.pipeline import "
                            "documents_requeue_stuck; print(documents_requeue_stuck(older_than=timedelta(seconds=0)))", env)
        assert int(resent.strip().splitlines()[-1]) >= 2, resent
        states = wait_for_final(batch, timeout=300)
        assert all(s in ("passed", "flagged") for s in states.values()), states
    finally:
        worker.stop()
        redis.kill()
