"""The Celery app; configuration comes from Django settings (CELERY_* names)."""

import os

from celery import Celery
from celery.signals import worker_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewer.settings")

app = Celery("proofdesk")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_init.connect
def _yield_to_the_web(**_kwargs) -> None:
    """Lower the worker's priority before its pool starts: the pool's processes and their OCR threads inherit it.
    Only ever lowered (raising it needs privileges), so a worker started under `nice` keeps the lower one."""
    from django.conf import settings

    current = os.getpriority(os.PRIO_PROCESS, 0)
    if current < settings.WORKER_NICENESS:
        os.setpriority(os.PRIO_PROCESS, 0, settings.WORKER_NICENESS)
