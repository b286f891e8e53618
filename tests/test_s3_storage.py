"""STORAGE_BACKEND=s3 against a real S3 API on loopback (moto's server, started here): uploads, a real worker's
pipeline, page images and downloads, and a bucket that stops answering in the middle of a batch."""

from __future__ import annotations

import hashlib

import boto3
import pytest
from django.urls import reverse

from extraction.models import Batch, Page, Upload
from extraction.services.requeue import document_requeue
from tests.acta_pipeline import scanned_acta
from tests.faults import assert_processed_once, free_port, wait_final, wait_until
from tests.worker import WorkerProcess

pytestmark = [pytest.mark.worker, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

BUCKET = "proofdesk-test"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1"}


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
    settings.STORAGES = {**settings.STORAGES, "default": {"BACKEND": "storages.backends.s3.S3Storage"}}
    yield store
    store.stop()


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
