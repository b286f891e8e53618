"""Under pytest-xdist each worker gets its own files, queues and (through pytest-django) database.

Loaded with `-p` (pyproject's addopts) so that it runs before pytest-django reads the settings: the
environment it changes is what reviewer/settings.py reads. Outside xdist it does nothing."""

from __future__ import annotations

import os

_worker = os.environ.get("PYTEST_XDIST_WORKER")  # set by xdist before a worker reads its configuration
if _worker:
    if not os.environ.get("PROOFDESK_VAR_DIR"):  # run bare (not through scripts/test.sh): one folder per run
        from tests.support.paths import ROOT

        os.environ["PROOFDESK_VAR_DIR"] = str(ROOT / "var" / "test" / os.environ["PYTEST_XDIST_TESTRUNUID"])
    for _name in ("PROOFDESK_VAR_DIR", "MEDIA_ROOT"):
        if os.environ.get(_name):
            os.environ[_name] = os.path.join(os.environ[_name], _worker)
    # A Celery worker started by one xdist worker must never take another's messages.
    _queue = os.environ.get("CELERY_TASK_DEFAULT_QUEUE") or "celery"
    os.environ["CELERY_TASK_DEFAULT_QUEUE"] = f"{_queue}-{_worker}"
    if os.environ.get("WEBHOOK_QUEUE"):
        os.environ["WEBHOOK_QUEUE"] = f"{os.environ['WEBHOOK_QUEUE']}-{_worker}"
