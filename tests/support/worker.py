"""A real Celery worker process on the test database and the configured broker (Redis under `make test`)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.support.paths import ROOT


def _database_url(settings_dict: dict) -> str:
    user = quote(settings_dict.get("USER") or "")
    password = quote(settings_dict.get("PASSWORD") or "")
    auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    host = settings_dict.get("HOST") or "127.0.0.1"
    port = settings_dict.get("PORT") or 5432
    return f"postgres://{auth}{host}:{port}/{settings_dict['NAME']}"


class WorkerProcess:
    def __init__(self, env: dict[str, str], log_path: Path, concurrency: int = 1, queues: list[str] | None = None):
        """`queues`: the queues it takes (-Q); every configured queue when None, as a worker started bare does."""
        self.env, self.log_path, self.concurrency, self.queues = env, log_path, concurrency, queues
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = 60) -> None:
        from reviewer.celery import app

        log = self.log_path.open("ab")
        self.name = f"test{os.getpid()}-{time.monotonic_ns()}@{socket.gethostname()}"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "reviewer", "worker", "--loglevel", "INFO",
             "--concurrency", str(self.concurrency), "-n", self.name,
             "--without-gossip", "--without-mingle", *(["-Q", ",".join(self.queues)] if self.queues else [])],
            cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the Celery worker exited early; see {self.log_path}")
            # The worker's own word, or its answer on the broker this process talks to.
            if f"{self.name} ready." in self.log_path.read_text(errors="replace"):
                return
            if app.control.ping(destination=[self.name], timeout=0.5):
                return
        raise RuntimeError(f"the Celery worker did not answer within {timeout}s; see {self.log_path}")

    def kill(self, sig: int = 9) -> None:
        """Kill the worker and its pool children at once (SIGKILL by default), as a crash would."""
        if self.proc and self.proc.poll() is None:
            subprocess.run(["pkill", f"-{sig}", "-P", str(self.proc.pid)], check=False)
            self.proc.send_signal(sig)
            self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()


@pytest.fixture(scope="session")
def worker_env(django_db_setup, tmp_path_factory):
    from django.conf import settings
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("a real worker needs the test database on PostgreSQL (run `make test`)")
    env = dict(os.environ)
    env["DATABASE_URL"] = _database_url(connection.settings_dict)
    env["CELERY_BROKER_URL"] = settings.CELERY_BROKER_URL
    env["PROOFDESK_VAR_DIR"] = str(settings.VAR_DIR)
    env["MEDIA_ROOT"] = str(settings.MEDIA_ROOT)
    env["PYTHONPATH"] = str(ROOT)
    return env


@pytest.fixture(scope="module")
def celery_worker_process(worker_env, tmp_path_factory):
    """One worker for the tests of a module, stopped after them: a worker left running would take the
    messages of later tests that start workers of their own, whatever order the files run in."""
    from reviewer.celery import app

    app.control.purge()
    worker = WorkerProcess(worker_env, tmp_path_factory.mktemp("worker") / "worker.log")
    worker.start()
    yield worker
    worker.stop()
