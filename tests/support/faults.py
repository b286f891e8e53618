"""Helpers of the fault tests: private Redis servers, Django in another process, exactly-once checks."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

from extraction.models import Batch, Document, Extraction, Round
from extraction.pipeline.transitions import ABANDONED
from tests.support.paths import ROOT

FINAL = ("passed", "flagged", "failed")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def silent_listener() -> Iterator[int]:
    """A port that takes connections and never answers, like a server that hangs (stopped, stalled): the
    kernel completes every handshake into the backlog and nothing ever reads or replies."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(128)
        yield server.getsockname()[1]


def start_redis(port: int, directory) -> subprocess.Popen:
    """A Redis of the test's own, without persistence: killing it loses every message in it."""
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


def in_django(code: str, env: dict[str, str], *, timeout: float = 180) -> str:
    """Run code in a separate Django process (its own broker connection), as the web app would."""
    script = "import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'reviewer.settings'); django.setup()\n"
    result = subprocess.run([sys.executable, "-c", script + code], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=timeout)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def wait_until(predicate, timeout: float, what: str, step: float = 0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    raise AssertionError(f"{what}: not within {timeout} s")


def wait_status(document_id: int, status: str, timeout: float = 90) -> None:
    wait_until(lambda: Document.objects.filter(pk=document_id, status=status).exists(), timeout,
               f"document {document_id} reaching {status}", step=0.1)


def wait_final(batch: Batch, timeout: float = 240) -> dict[str, str]:
    def states():
        found = dict(Document.objects.filter(batch=batch).values_list("filename", "status"))
        return found if found and all(s in FINAL for s in found.values()) else None

    return wait_until(states, timeout, f"every document of {batch.name} final", step=0.5)


def runs_of(document: Document):
    """The runs that really processed the document (not those closed because their worker lost it)."""
    return Extraction.objects.filter(document=document).exclude(error__startswith=ABANDONED)


def assert_processed_once(batch: Batch, *, runs: dict[str, int] | None = None) -> None:
    """0 lost (every document final, no round left open) and 0 processed twice (one run each, or `runs`)."""
    for doc in Document.objects.filter(batch=batch):
        assert doc.status in FINAL, (doc.filename, doc.status)
        expected = (runs or {}).get(doc.filename, 1 if doc.status in ("passed", "flagged") else None)
        if expected is not None:
            assert runs_of(doc).count() == expected, (doc.filename, list(runs_of(doc).values("id", "error")))
        assert not Round.objects.filter(extraction__document=doc, state=Round.State.STARTED).exists(), doc.filename
        assert not Extraction.objects.filter(document=doc, finished_at__isnull=True).exists(), doc.filename
