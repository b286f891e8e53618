"""STORAGE_BACKEND=s3 against a real S3 API on loopback (moto's server, started here): uploads, a real worker's
pipeline, page images and downloads, and a bucket that stops answering in the middle of a batch."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from contextlib import contextmanager

import boto3
import pytest
from botocore.config import Config
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from extraction.models import Batch, Document, Page, Upload
from extraction.pipeline.requeue import document_requeue
from extraction.pipeline.s3 import store_breaker
from tests.support import badfiles
from tests.support.acta_pipeline import scanned_acta
from tests.support.faults import assert_processed_once, free_port, silent_listener, wait_final, wait_until
from tests.support.paths import ROOT
from tests.support.worker import WorkerProcess

pytestmark = [pytest.mark.worker, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

BUCKET = "proofdesk-test"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1"}
# The client's bounds, as settings.py builds them from AWS_S3_CONNECT_TIMEOUT, AWS_S3_READ_TIMEOUT and
# AWS_MAX_ATTEMPTS (shorter here); a call to a store that never answers ends within BOUND seconds.
TIMEOUT, ATTEMPTS = 2.0, 2
BOUND = ATTEMPTS * TIMEOUT + 1.0 + 3.0  # the attempts, botocore's backoff between them (under 1 s), slack


class S3:
    """moto's S3 server on 127.0.0.1; stop() makes the bucket unreachable, start() brings it back with its data."""

    def __init__(self) -> None:
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.server = None

    def start(self) -> None:
        from moto.server import ThreadedMotoServer

        self.server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)
        self.server.start()

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None

    def client(self):
        return boto3.client("s3", endpoint_url=self.endpoint, region_name="us-east-1",
                            aws_access_key_id="testing", aws_secret_access_key="testing")

    def keys(self) -> dict[str, bytes]:
        listed = self.client().list_objects_v2(Bucket=BUCKET).get("Contents", [])
        return {o["Key"]: self.client().get_object(Bucket=BUCKET, Key=o["Key"])["Body"].read() for o in listed}


@pytest.fixture
def s3(settings, monkeypatch):
    store = S3()
    store.start()
    for name, value in CREDENTIALS.items():
        monkeypatch.setenv(name, value)
    store.client().create_bucket(Bucket=BUCKET)
    # This process as settings.py configures STORAGE_BACKEND=s3 (the worker below gets the variables themselves).
    settings.AWS_STORAGE_BUCKET_NAME = BUCKET
    settings.AWS_S3_ENDPOINT_URL = store.endpoint
    settings.AWS_S3_REGION_NAME = "us-east-1"
    settings.AWS_DEFAULT_ACL = None
    settings.AWS_QUERYSTRING_AUTH = True
    settings.AWS_S3_FILE_OVERWRITE = False
    settings.AWS_S3_CLIENT_CONFIG = Config(connect_timeout=TIMEOUT, read_timeout=TIMEOUT,
                                           retries={"mode": "standard", "total_max_attempts": ATTEMPTS})
    settings.STORAGES = {**settings.STORAGES, "default": {"BACKEND": "extraction.pipeline.s3.GuardedS3Storage"}}
    store_breaker().reset()
    yield store
    store.stop()
    store_breaker().reset()


def test_a_batch_on_s3_survives_the_bucket_going_away_mid_batch(worker_env, users, client, tmp_path, s3):
    env = {**worker_env, **CREDENTIALS, "STORAGE_BACKEND": "s3", "AWS_STORAGE_BUCKET_NAME": BUCKET,
           "AWS_S3_ENDPOINT_URL": s3.endpoint, "AWS_MAX_ATTEMPTS": "2"}
    files = [scanned_acta(tmp_path, seed=seed) for seed in (91, 92, 93)]
    client.force_login(users["admin"])
    response = client.post(reverse("batch_upload"), {
        "name": "on-s3", "doctype": "acta", "ocr_engine": "rapidocr",
        "files": [f.path.open("rb") for f in files]})
    assert response.status_code == 302
    batch = Batch.objects.get(name="on-s3")
    stored = s3.keys()
    for upload in Upload.objects.filter(batch=batch):  # every upload in the bucket, unchanged
        assert hashlib.sha256(stored[upload.file.name]).hexdigest() == upload.sha256

    worker = WorkerProcess(env, tmp_path / "worker.log")  # one process: the documents go one after another
    worker.start()
    try:
        first = batch.documents.order_by("id").first()
        wait_until(lambda: batch.documents.filter(pk=first.pk, status__in=["passed", "flagged"]).exists(), 120,
                   "the first document done")
        s3.stop()  # the bucket is unreachable while the next ones are read
        states = wait_final(batch, timeout=180)
        failed = list(batch.documents.filter(status="failed"))
        assert failed, states
        for doc in failed:
            assert doc.error_code == "storage" and "can be retried" in doc.error_message, doc.error_message

        s3.start()  # back, with everything it held
        for doc in failed:
            assert document_requeue(document_id=doc.id)
        states = wait_final(batch, timeout=240)
        assert set(states.values()) <= {"passed", "flagged"}, states
        assert_processed_once(batch)
    finally:
        worker.stop()

    # Page images and downloads come from the bucket, behind the login.
    page = Page.objects.filter(document=first).first()
    image = client.get(reverse("desk_page_image", args=[first.id, page.number]))
    assert image.status_code == 200 and b"".join(image.streaming_content) == s3.keys()[page.image.name]
    annotated = client.get(reverse("desk_page_annotated", args=[first.id, page.number]))
    assert annotated.status_code == 200 and annotated.content.startswith(b"\x89PNG")
    assert annotated["Content-Disposition"].startswith("attachment")
    stored = s3.keys()
    assert all(doc.original.name in stored for doc in batch.documents.all())  # nothing lost


STORE_AWAY = "File storage is unavailable"


@contextmanager
def store_away(how: str, s3: S3, settings):
    """The bucket refusing connections (moto stopped) or never answering (a port that takes connections and
    says nothing); back as it was afterwards."""
    if how == "refused":
        s3.stop()
        try:
            yield
        finally:
            s3.start()
            store_breaker().reset()
        return
    with silent_listener() as port:
        settings.AWS_S3_ENDPOINT_URL = f"http://127.0.0.1:{port}"
        settings.STORAGES = {**settings.STORAGES}  # a new storage, with the new endpoint
        try:
            yield
        finally:
            settings.AWS_S3_ENDPOINT_URL = s3.endpoint
            settings.STORAGES = {**settings.STORAGES}
            store_breaker().reset()  # back: the breaker's few seconds are not what these tests wait for


def _timed(call):
    started = time.monotonic()
    response = call()
    return response, time.monotonic() - started


@pytest.mark.parametrize("how", ["refused", "silent"])
def test_an_upload_while_the_store_is_away_answers_503_saying_nothing_was_lost_and_leaves_nothing_behind(
        users, client, tmp_path, s3, settings, how):
    client.force_login(users["admin"])
    files = [SimpleUploadedFile(p.name, p.read_bytes())
             for p in (badfiles.make_pdf(tmp_path, "a.pdf"), badfiles.make_png(tmp_path, "b.png"))]
    stored_before = s3.keys()  # moto's buckets live as long as the test process
    with store_away(how, s3, settings):
        response, took = _timed(lambda: client.post(reverse("batch_upload"), {
            "name": "store-away", "doctype": "acta", "ocr_engine": "auto", "files": files}))
    page = response.content.decode()
    assert response.status_code == 503, page[:2000]
    assert STORE_AWAY in page and "Nothing was lost, and nothing was half-saved" in page
    assert took < BOUND, took  # not the web server's timeout
    assert not Batch.objects.exists() and not Upload.objects.exists() and not Document.objects.exists()
    assert s3.keys() == stored_before  # no file stored without its rows


@pytest.mark.parametrize("how", ["refused", "silent"])
def test_page_images_while_the_store_is_away_answer_503_within_the_clients_bounds(users, client, tmp_path, s3,
                                                                                  settings, how):
    batch = Batch.objects.create(name="stored", doctype="acta")
    doc = Document.objects.create(batch=batch, filename="a.png", status="passed", sha256="0" * 64)
    page = Page(document=doc, number=1, width=40, height=30)
    page.image.save("page-0001.png", ContentFile(badfiles.make_png(tmp_path).read_bytes()))
    client.force_login(users["reviewer"])
    urls = [reverse("desk_page_image", args=[doc.id, 1]), reverse("desk_page_annotated", args=[doc.id, 1])]
    assert [client.get(url).status_code for url in urls] == [200, 200]

    with store_away(how, s3, settings):
        for url in urls:
            response, took = _timed(lambda url=url: client.get(url))
            assert response.status_code == 503, url
            assert STORE_AWAY in response.content.decode() and "every stored file is kept" in response.content.decode()
            assert took < BOUND, (url, took)
    assert client.get(urls[0]).status_code == 200  # back: nothing was lost


def test_s3_calls_are_bounded_by_the_environment_and_a_bad_bound_stops_start_up():
    env = {**os.environ, **CREDENTIALS, "STORAGE_BACKEND": "s3", "AWS_STORAGE_BUCKET_NAME": BUCKET,
           "DJANGO_SETTINGS_MODULE": "reviewer.settings"}
    show = ("import django; django.setup(); from django.core.files.storage import default_storage as s; "
            "c = s.connection.meta.client.meta.config; print(c.connect_timeout, c.read_timeout, c.retries)")

    def start(**variables: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", show], cwd=ROOT, env={**env, **variables}, capture_output=True,
                              text=True, timeout=120, check=False)

    default = start()
    assert default.stdout.split(" ", 2) == ["3.0", "5.0", "{'mode': 'standard', 'total_max_attempts': 2}\n"], \
        default.stderr[-2000:]
    chosen = start(AWS_S3_CONNECT_TIMEOUT="1", AWS_S3_READ_TIMEOUT="20", AWS_MAX_ATTEMPTS="3")
    assert chosen.stdout.split(" ", 2)[:2] == ["1.0", "20.0"] and "'total_max_attempts': 3" in chosen.stdout
    bad = start(AWS_S3_READ_TIMEOUT="forever")
    assert bad.returncode != 0 and "AWS_S3_READ_TIMEOUT='forever' is not a number" in bad.stderr


def test_deleting_a_batch_while_the_store_is_away_deletes_it_and_leaves_its_files_behind(users, client, tmp_path,
                                                                                          s3, settings):
    from reviewer.models import BatchDeletion

    batch = Batch.objects.create(name="to-delete", doctype="acta")
    upload = Upload(batch=batch, filename="a.png", sha256="0" * 64, size=1)
    upload.file.save("a.png", ContentFile(badfiles.make_png(tmp_path).read_bytes()))
    client.force_login(users["admin"])
    with store_away("refused", s3, settings):
        response = client.post(reverse("batch_delete", args=[batch.id]), {"confirm_name": "to-delete"})
    assert response.status_code == 302  # the rows are gone and recorded, not a 503 after the fact
    assert not Batch.objects.filter(pk=batch.pk).exists() and BatchDeletion.objects.filter(name="to-delete").exists()
    stored = s3.keys()
    assert upload.file.name in stored  # the file the store could not delete is still there, not half-gone


# --- issue 40, finding 5: a hung store holds no web worker for long ---------------------------------------


def _stored_page(tmp_path) -> Document:
    batch = Batch.objects.create(name="stored", doctype="acta")
    doc = Document.objects.create(batch=batch, filename="a.png", status="passed", sha256="0" * 64)
    page = Page(document=doc, number=1, width=40, height=30)
    page.image.save("page-0001.png", ContentFile(badfiles.make_png(tmp_path).read_bytes()))
    return doc


def test_after_a_call_to_a_hung_store_failed_the_next_requests_fail_at_once_and_it_is_tried_again_later(
        users, client, tmp_path, s3, settings):
    settings.STORAGE_BREAKER_SECONDS = 3.0
    doc = _stored_page(tmp_path)
    client.force_login(users["reviewer"])
    url = reverse("desk_page_image", args=[doc.id, 1])
    with silent_listener() as port:
        settings.AWS_S3_ENDPOINT_URL = f"http://127.0.0.1:{port}"
        settings.STORAGES = {**settings.STORAGES}
        first, first_took = _timed(lambda: client.get(url))
        later = [_timed(lambda: client.get(url)) for _ in range(5)]
    assert first.status_code == 503 and TIMEOUT <= first_took < BOUND, first_took
    assert [r.status_code for r, _ in later] == [503] * 5
    assert max(took for _, took in later) < 0.5, [took for _, took in later]  # no call made: the breaker is open

    settings.AWS_S3_ENDPOINT_URL = s3.endpoint  # the store is back; the breaker is still open for a moment
    settings.STORAGES = {**settings.STORAGES}
    assert client.get(url).status_code == 503
    time.sleep(settings.STORAGE_BREAKER_SECONDS)
    assert client.get(url).status_code == 200  # tried again once the breaker's seconds are over


def test_the_apis_answer_while_the_store_is_away_is_a_problem(users, tmp_path, s3, settings):
    from django.test import Client

    from reviewer.api.services import token_create

    doc = _stored_page(tmp_path)
    secret = token_create(user=users["reviewer"], name="store away").secret
    with store_away("refused", s3, settings):
        response = Client().get(f"/api/v1/documents/{doc.id}/pages/1/image",
                                headers={"Authorization": f"Bearer {secret}"})
    assert response.status_code == 503 and response["Content-Type"] == "application/problem+json"
    assert response["Retry-After"] == "60" and "Every stored file is kept" in response.json()["detail"]


def test_a_web_process_tries_the_store_once_within_its_own_tighter_bound():
    env = {**os.environ, **CREDENTIALS, "STORAGE_BACKEND": "s3", "AWS_STORAGE_BUCKET_NAME": BUCKET,
           "DJANGO_SETTINGS_MODULE": "reviewer.settings"}
    env.pop("PROOFDESK_PROCESS", None)
    show = ("import reviewer.wsgi; from django.core.files.storage import default_storage as s; "
            "c = s.connection.meta.client.meta.config; print(c.connect_timeout, c.read_timeout, c.retries)")
    served = subprocess.run([sys.executable, "-c", show], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=120, check=False)
    assert served.stdout.split(" ", 2) == ["2.0", "2.0", "{'mode': 'standard', 'total_max_attempts': 1}\n"], \
        served.stderr[-2000:]


@pytest.fixture
def gunicorn(worker_env, s3, tmp_path):
    """The app as deployed (gunicorn, 2 sync workers) on the test database, its store a port that never
    answers; yields its base URL."""
    port = free_port()
    with silent_listener() as hung:
        env = {**worker_env, **CREDENTIALS, "STORAGE_BACKEND": "s3", "AWS_STORAGE_BUCKET_NAME": BUCKET,
               "AWS_S3_ENDPOINT_URL": f"http://127.0.0.1:{hung}", "DJANGO_DEBUG": "0",
               "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost"}
        log = (tmp_path / "gunicorn.log").open("wb")
        proc = subprocess.Popen([sys.executable, "-m", "gunicorn", "reviewer.wsgi", "--workers", "2",
                                 "--bind", f"127.0.0.1:{port}", "--timeout", "60"], cwd=ROOT, env=env,
                                stdout=log, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        try:
            wait_until(lambda: _answers(base), 60, "gunicorn serving")
            yield base
        finally:
            proc.terminate()
            proc.wait(timeout=30)
            log.close()


def _answers(base: str, *, timeout: float = 2) -> bool:
    import urllib.request

    try:
        with urllib.request.urlopen(f"{base}/login/", timeout=timeout) as response:
            return response.status == 200
    except OSError:
        return False


def test_six_users_waiting_on_a_hung_store_do_not_hold_both_web_workers(users, tmp_path, gunicorn):
    """The probe's case: six page images asked at once of 2 sync workers while the store hangs. Each worker
    waits out one call (AWS_S3_WEB_TIMEOUT), then answers the rest at once; the login page is not kept waiting."""
    import urllib.error
    import urllib.request
    from concurrent.futures import ThreadPoolExecutor

    from reviewer.api.services import token_create

    doc = _stored_page(tmp_path)
    secret = token_create(user=users["reviewer"], name="six").secret

    def image() -> tuple[int, float]:
        request = urllib.request.Request(f"{gunicorn}/api/v1/documents/{doc.id}/pages/1/image",
                                         headers={"Authorization": f"Bearer {secret}"})
        started = time.monotonic()
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                status = response.status
        except urllib.error.HTTPError as err:
            status = err.code
        return status, time.monotonic() - started

    with ThreadPoolExecutor(max_workers=7) as pool:
        images = [pool.submit(image) for _ in range(6)]
        time.sleep(0.2)
        started = time.monotonic()
        assert _answers(gunicorn, timeout=2.0 + 2.0)  # a worker is free once its one wait is out
        login_took = time.monotonic() - started
        answered = [f.result() for f in images]
    assert [status for status, _ in answered] == [503] * 6
    slowest = max(took for _, took in answered)
    print(f"six page images on a hung store: slowest {slowest:.1f} s; login page {login_took:.1f} s")
    assert slowest < 2.0 * 2 + 2.0, answered  # at most one wait per worker, not one per request
    assert login_took < 2.0 + 2.0, login_took
