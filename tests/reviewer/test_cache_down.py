"""Issue 40, finding 4: Redis as the cache (CACHE_URL=redis://) is an optimisation. Stopped (hung) or gone
(refused), the API's upload and list and the reviewer's queue answer as without it, within the cache's bound,
and say nothing alarming; back, it counts again. A real redis-server of the test's own, stopped with SIGSTOP."""

from __future__ import annotations

import io
import signal
import time

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from PIL import Image

from extraction.models import Batch
from reviewer.api.services import token_create
from tests.support.desk_data import flagged_acta
from tests.support.faults import free_port, start_redis

pytestmark = pytest.mark.django_db
BOUND = 0.5  # CACHE_TIMEOUT below: what one request may lose to a cache that does not answer


@pytest.fixture
def redis_cache(settings, tmp_path):
    port = free_port()
    proc = start_redis(port, tmp_path)

    def configure(timeout: float = BOUND, retry: float = 5.0) -> None:
        settings.CACHES = {"default": {"BACKEND": "reviewer.cache_backend.BoundedRedisCache",
                                       "LOCATION": f"redis://127.0.0.1:{port}/0",
                                       "OPTIONS": {"timeout": timeout, "retry_seconds": retry}}}

    configure()
    yield proc, configure
    proc.send_signal(signal.SIGCONT)
    proc.kill()
    proc.wait()


def _away(proc, how: str) -> None:
    if how == "hung":
        proc.send_signal(signal.SIGSTOP)  # takes connections, answers nothing
    else:
        proc.kill()
        proc.wait()


def _png() -> SimpleUploadedFile:
    buf = io.BytesIO()
    Image.new("RGB", (60, 80), (255, 255, 255)).save(buf, format="PNG")
    return SimpleUploadedFile("page.png", buf.getvalue(), content_type="image/png")


def _timed(call):
    started = time.monotonic()
    response = call()
    return response, time.monotonic() - started


@pytest.mark.parametrize("how", ["hung", "refused"])
def test_with_the_cache_away_the_api_and_the_queue_answer_as_without_it_and_quickly(users, redis_cache, how,
                                                                                   caplog):
    proc, _ = redis_cache
    flagged_acta()
    admin = {"Authorization": f"Bearer {token_create(user=users['admin'], name='a').secret}"}
    reviewer = Client()
    reviewer.force_login(users["reviewer"])
    assert reviewer.get(reverse("queue")).status_code == 200  # the cache answers: labels kept in it
    _away(proc, how)

    api = Client(raise_request_exception=False)
    answers = [
        _timed(lambda: api.post("/api/v1/batches", {"name": f"while {how}", "doctype": "acta",
                                                    "ocr_engine": "pdf-text", "files": [_png()]}, headers=admin)),
        _timed(lambda: api.get("/api/v1/documents", headers=admin)),
        _timed(lambda: reviewer.get(reverse("queue"))),
    ]
    assert [r.status_code for r, _ in answers] == [201, 200, 200], [r.content[:300] for r, _ in answers]
    assert Batch.objects.filter(name=f"while {how}").exists()
    print(f"cache {how}: upload, list, queue answered in " + ", ".join(f"{took:.2f} s" for _, took in answers))
    # One bound for the first call that finds the cache away; the calls after it skip it.
    assert sum(took for _, took in answers) < BOUND + 3.0, [took for _, took in answers]
    warnings = [r for r in caplog.records if "the cache does not answer" in r.getMessage()]
    assert len(warnings) == 1 and warnings[0].levelname == "WARNING" and not warnings[0].exc_info


def test_while_the_cache_is_away_the_api_rate_limit_is_lifted_not_a_refusal(users, redis_cache, settings):
    proc, _ = redis_cache
    settings.API_RATE_LIMIT = 3
    headers = {"Authorization": f"Bearer {token_create(user=users['reviewer'], name='r').secret}"}
    api = Client()
    assert [api.get("/api/v1/documents", headers=headers).status_code for _ in range(4)] == [200, 200, 200, 429]
    _away(proc, "refused")
    assert [api.get("/api/v1/documents", headers=headers).status_code for _ in range(4)] == [200] * 4


def test_a_cache_that_comes_back_is_used_again_after_its_retry_seconds(users, redis_cache, settings, tmp_path):
    proc, configure = redis_cache
    configure(retry=1.0)
    proc.send_signal(signal.SIGSTOP)
    assert cache.get_or_set("k", lambda: "built", 60) == "built"  # away: built, not kept
    proc.send_signal(signal.SIGCONT)
    assert cache.get("k") is None  # the breaker is open: not asked
    time.sleep(1.1)
    cache.set("k", "kept", 60)
    assert cache.get("k") == "kept"
