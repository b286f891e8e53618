"""`make demo` as a person runs it: it starts, hides its URL list from a 404, and Ctrl-C stops it at once,
worker and pool included, even while the worker is in the middle of a document; so do TERM and the terminal
closing (HUP). The demo is started with a terminal's signal dispositions, whatever the suite inherited: a
process started in the background by a non-interactive shell (some CI runners, nohup) has SIGINT ignored,
Python keeps it so, and bash cannot trap a signal that was ignored when it started."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.support.faults import free_port, wait_until
from tests.support.paths import ROOT

pytestmark = [pytest.mark.slow]


def _processes_of(var_dir: Path) -> list[int]:
    """Processes started for this demo (found by the PROOFDESK_VAR_DIR in their environment)."""
    mine = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if f"PROOFDESK_VAR_DIR={var_dir}".encode() in (proc / "environ").read_bytes():
                mine.append(int(proc.name))
        except OSError:
            continue
    return mine


def _worker_queues(var_dir: Path) -> set[str]:
    """The -Q of every Celery worker of the demo; a worker started without one would take every queue ('*')."""
    queues = set()
    for pid in _processes_of(var_dir):
        try:
            args = (Path("/proc") / str(pid) / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if "worker" in args and any(a.endswith("celery") for a in args):
            queues.add(args[args.index("-Q") + 1] if "-Q" in args else "*")
    return queues


def _state_of(var_dir: Path, log: Path) -> str:
    """What a failure needs to be understood: the demo's processes (state, what they wait in) and its log's end."""
    pids = [str(pid) for pid in _processes_of(var_dir)]
    ps = subprocess.run(["ps", "-o", "pid,ppid,pgid,stat,wchan:24,etime,args", "-p", ",".join(pids) or "0"],
                        capture_output=True, text=True).stdout
    return f"processes left:\n{ps}\nend of the demo's log:\n{log.read_text(errors='replace')[-4000:]}"


def _processing(db: Path) -> int:
    try:
        with sqlite3.connect(db, timeout=1) as conn:
            return conn.execute("select count(*) from extraction_document where status='processing'").fetchone()[0]
    except sqlite3.Error:
        return 0


def _as_in_a_terminal() -> None:
    """In the demo's process, before bash starts: the signals a terminal's job gets, at their defaults."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(sig, signal.SIG_DFL)


# how each way of stopping reaches the demo: Ctrl-C and a closed terminal signal the foreground process group,
# `kill` signals the script
STOPS = {"ctrl_c": (signal.SIGINT, True), "term": (signal.SIGTERM, False), "hangup": (signal.SIGHUP, True)}


@pytest.mark.parametrize("stop", list(STOPS))
def test_the_demo_hides_its_urls_and_stops_within_seconds_of_ctrl_c(tmp_path, stop):
    var_dir, port = tmp_path / "demo", free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "DJANGO_DEBUG")}
    env.update(PROOFDESK_VAR_DIR=str(var_dir), DEMO_PORT=str(port), PYTHONUNBUFFERED="1")
    log = (tmp_path / "demo.log").open("wb")
    demo = subprocess.Popen(["bash", "scripts/demo.sh"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True,  # its own process group, as in a terminal
                            preexec_fn=_as_in_a_terminal)  # noqa: PLW1509 - no threads start before exec
    try:
        wait_until(lambda: "Proofdesk is running" in (tmp_path / "demo.log").read_text(errors="replace"), 240,
                   "the demo starting")
        base = f"http://127.0.0.1:{port}"

        def answers() -> bool:
            try:
                urllib.request.urlopen(base + "/login/", timeout=5)
                return True
            except OSError:
                return False

        wait_until(answers, 60, "the web server answering")
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(base + "/no-such-page/", timeout=10)
        body = missing.value.read().decode()
        assert missing.value.code == 404 and "URLconf" not in body and "urlpatterns" not in body
        with urllib.request.urlopen(base + "/static/css/proofdesk.css", timeout=10) as css:  # static without DEBUG
            assert css.status == 200
        # The worker is reading a sample (OCR of a scan takes seconds): exactly when Ctrl-C used to hang.
        wait_until(lambda: _processing(var_dir / "db.sqlite3"), 120, "the worker starting on a document")
        assert len(_processes_of(var_dir)) >= 4  # the script, the web server, the workers and their pools
        # documents and webhook deliveries on workers of their own: a receiver that hangs never holds a document
        documents = env.get("CELERY_TASK_DEFAULT_QUEUE", "celery")
        assert _worker_queues(var_dir) == {documents, env.get("WEBHOOK_QUEUE", f"{documents}-webhooks")}, \
            _state_of(var_dir, tmp_path / "demo.log")
        sig, to_group = STOPS[stop]
        pressed = time.monotonic()
        if to_group:
            os.killpg(demo.pid, sig)
        else:
            os.kill(demo.pid, sig)
        try:
            demo.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the demo did not stop within 30 s of {stop}\n" + _state_of(var_dir, tmp_path / "demo.log"))
        assert time.monotonic() - pressed < 10, _state_of(var_dir, tmp_path / "demo.log")
        wait_until(lambda: not _processes_of(var_dir), 5, "every demo process gone")
        assert "Proofdesk demo stopped." in (tmp_path / "demo.log").read_text(errors="replace")
    finally:
        for pid in _processes_of(var_dir):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.timeout(600)
def test_the_demo_test_passes_when_the_suite_starts_with_sigint_ignored(tmp_path):
    """As `.ci/run &` from a script starts it: the demo must still stop on Ctrl-C."""
    env = {**os.environ, "TEST_DATABASE_NAME": os.environ.get("TEST_DATABASE_NAME", "test_proofdesk") + "_nested"}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", f"cache_dir={tmp_path}",
         "tests/test_demo.py::test_the_demo_hides_its_urls_and_stops_within_seconds_of_ctrl_c[ctrl_c]"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=540,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))  # noqa: PLW1509 - as a background job
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "1 passed" in run.stdout
