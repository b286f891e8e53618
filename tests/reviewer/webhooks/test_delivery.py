"""Webhook deliveries against a real HTTP receiver on loopback: success, failure and backoff, a receiver that
hangs, the claim that keeps one attempt to one worker, and end to end with real workers, one of them killed."""

from __future__ import annotations

import dataclasses
import os
import re
import ssl
import subprocess
import threading
import time
from collections import Counter
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.utils import timezone
from standardwebhooks.webhooks import Webhook

from extraction.models import Document
from extraction.pipeline.ingest import IncomingFile, batch_create_from_files
from reviewer.desk import services as review
from reviewer.webhooks import backoff, sender, signing, urlguard
from reviewer.webhooks.models import Attempt, Delivery, Endpoint, Event
from reviewer.webhooks.services import (
    INTERRUPTED,
    deliveries_queue,
    deliveries_queue_due,
    delivery_attempt,
    delivery_replay,
    endpoint_create,
)
from sheetgen.generate import generate_acta
from tests.support.accounts import give_roles
from tests.support.faults import free_port, wait_until
from tests.support.paths import ROOT
from tests.support.webhook_data import acta_batch
from tests.support.worker import WorkerProcess


class Receiver:
    """An HTTP receiver on 127.0.0.1 that verifies each delivery's signature and answers `status` (a number, or
    "hang": never answers). Stopped, its port refuses connections: the receiver is down."""

    def __init__(self, secret: str, port: int | None = None, status: int | str = 200, answer: bytes | None = None,
                 tls: ssl.SSLContext | None = None):
        self.secret, self.port, self.status, self.answer = secret, port or free_port(), status, answer
        self.tls = tls  # HTTPS with this server context
        self.received: list[dict] = []
        self.server: ThreadingHTTPServer | None = None
        self.release = threading.Event()  # lets hanging handlers end when the test is over

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}/hooks?from=proofdesk"

    def start(self) -> Receiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["content-length"]))
                try:
                    Webhook(receiver.secret).verify(body, dict(self.headers))
                    verified = True
                except Exception:
                    verified = False
                status = receiver.status
                receiver.received.append({"id": self.headers["webhook-id"], "verified": verified, "path": self.path,
                                          "status": status, "body": body})
                if status == "hang":
                    receiver.release.wait(30)
                    return
                self.send_response(status)
                self.end_headers()
                self.wfile.write(receiver.answer if receiver.answer is not None
                                 else b"thanks" if status < 300 else b"not now")

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.server.daemon_threads = True
        if self.tls is not None:
            self.server.socket = self.tls.wrap_socket(self.server.socket, server_side=True)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.release.set()
        if self.server:
            self.server.shutdown()
            self.server.server_close()

    def ok_ids(self) -> Counter:
        return Counter(r["id"] for r in self.received if isinstance(r["status"], int) and r["status"] < 300)


@pytest.fixture
def receiver(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    made: list[Receiver] = []

    def start(**kwargs) -> Receiver:
        made.append(Receiver(signing.new_secret(), **kwargs).start())
        return made[-1]

    yield start
    for r in made:
        r.stop()


def _delivery(url: str, secret: str, *, events=("document.passed",), age: timedelta = timedelta()) -> Delivery:
    created = timezone.now() - age
    endpoint = Endpoint.objects.create(url=url, secret=secret, events=list(events))
    event = Event.objects.create(type="document.passed", created_at=created,
                                 payload={"type": "document.passed", "timestamp": created.isoformat(),
                                          "data": {"document": {"id": 1}}})
    return Delivery.objects.create(event=event, endpoint=endpoint, next_attempt_at=created, created_at=created)


def test_a_delivery_the_receiver_accepts_is_signed_recorded_and_not_sent_again(db, receiver):
    r = receiver()
    delivery = _delivery(r.url, r.secret)
    assert delivery_attempt(delivery_id=delivery.id) == "delivered"
    assert [(x["id"], x["verified"], x["path"]) for x in r.received] == [(delivery.event_id, True,
                                                                          "/hooks?from=proofdesk")]
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.next_attempt_at) == ("delivered", 1, None)
    attempt = delivery.attempt_rows.get()
    assert (attempt.status_code, attempt.response_excerpt, attempt.error) == (200, "thanks", "")
    assert attempt.finished_at and attempt.duration_ms is not None
    assert delivery_attempt(delivery_id=delivery.id) == "not due"  # a duplicate message sends nothing
    assert len(r.received) == 1


def test_a_refusing_receiver_gets_the_next_attempt_on_the_backoff_and_each_attempt_is_recorded(db, receiver, settings):
    settings.WEBHOOK_BACKOFF_SCALE = 1.0
    r = receiver(status=503)
    delivery = _delivery(r.url, r.secret)
    before = timezone.now()
    assert delivery_attempt(delivery_id=delivery.id) == "will retry"
    delivery.refresh_from_db()
    assert delivery.status == "pending" and delivery.claimed_until is None
    assert timedelta(seconds=4) < delivery.next_attempt_at - before < timedelta(seconds=6)  # 5 s after attempt 1
    assert delivery_attempt(delivery_id=delivery.id) == "not due"  # not before its time
    Delivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now())
    assert delivery_attempt(delivery_id=delivery.id) == "will retry"
    delivery.refresh_from_db()
    assert timedelta(seconds=28) < delivery.next_attempt_at - timezone.now() < timedelta(seconds=31)  # then 30 s
    assert list(delivery.attempt_rows.values_list("number", "status_code", "response_excerpt")) == [
        (2, 503, "not now"), (1, 503, "not now")]


def test_a_delivery_failing_at_the_end_of_its_day_fails_for_good_and_a_replay_tries_once_more(db, receiver):
    r = receiver(status=500)
    delivery = _delivery(r.url, r.secret, age=timedelta(hours=24, seconds=-2))  # its next try (5 s) would fall outside the day
    assert delivery_attempt(delivery_id=delivery.id) == "failed for good"
    delivery.refresh_from_db()
    assert (delivery.status, delivery.next_attempt_at) == ("failed", None)
    assert delivery_attempt(delivery_id=delivery.id) == "not due"
    r.status = 204
    assert delivery_replay(delivery_id=delivery.id)
    assert delivery_attempt(delivery_id=delivery.id) == "delivered"
    assert list(delivery.attempt_rows.values_list("number", "replay", "status_code")) == [(2, True, 204),
                                                                                          (1, False, 500)]


def test_a_receiver_that_hangs_is_cut_by_the_timeout_and_the_attempt_is_recorded_as_a_timeout(db, receiver, settings):
    settings.WEBHOOK_TIMEOUT_SECONDS = 1.0
    r = receiver(status="hang")
    delivery = _delivery(r.url, r.secret)
    started = time.monotonic()
    assert delivery_attempt(delivery_id=delivery.id) == "will retry"
    assert time.monotonic() - started < 3  # the worker is held about the timeout, not until the receiver answers
    attempt = Attempt.objects.get(delivery=delivery)
    assert attempt.timed_out and attempt.status_code is None and attempt.error.startswith("timeout")
    assert 900 <= attempt.duration_ms < 3000


def test_a_receiver_that_is_down_is_a_failed_attempt_with_its_error(db, receiver):
    port = free_port()  # nothing listens
    delivery = _delivery(f"http://127.0.0.1:{port}/", signing.new_secret())
    assert delivery_attempt(delivery_id=delivery.id) == "will retry"
    attempt = Attempt.objects.get(delivery=delivery)
    assert "ConnectionRefused" in attempt.error and not attempt.timed_out


def test_a_url_that_turned_private_is_refused_at_send_time(db, receiver, settings):
    r = receiver()
    delivery = _delivery(r.url, r.secret)
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = False  # as if its DNS now pointed at a private address
    assert delivery_attempt(delivery_id=delivery.id) == "will retry"
    assert Attempt.objects.get(delivery=delivery).error.startswith("refused:")
    assert r.received == []


@pytest.mark.parametrize("answer", ["::ffff:0:7f00:1", "64:ff9b::a00:1", "2002:7f00:1::1", "2606:4700::5efe:a00:1"])
def test_a_host_whose_dns_answer_embeds_a_private_ipv4_address_is_refused_at_send_time(
        db, settings, monkeypatch, answer):
    delivery = _delivery("http://hooks.example.com/hooks", signing.new_secret())
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = False
    monkeypatch.setattr(urlguard, "resolve", lambda host, port: [answer])  # the DNS answer at the attempt
    assert delivery_attempt(delivery_id=delivery.id) == "will retry"
    error = Attempt.objects.get(delivery=delivery).error
    assert error.startswith(f"refused: hooks.example.com resolves to {answer}"), error


def test_an_attempt_in_flight_holds_its_delivery_and_one_whose_worker_died_is_closed_as_interrupted(db, receiver):
    r = receiver()
    delivery = _delivery(r.url, r.secret)
    now = timezone.now()
    # a worker claimed it and died before it could record anything
    Delivery.objects.filter(pk=delivery.pk).update(attempts=1, claimed_until=now + timedelta(seconds=30))
    Attempt.objects.create(delivery=delivery, number=1, started_at=now)
    assert delivery_attempt(delivery_id=delivery.id) == "not due"
    assert not delivery_replay(delivery_id=delivery.id)
    Delivery.objects.filter(pk=delivery.pk).update(claimed_until=now - timedelta(seconds=1))  # its lease ran out
    assert delivery_attempt(delivery_id=delivery.id) == "delivered"
    assert list(delivery.attempt_rows.values_list("number", "error")) == [(2, ""), (1, INTERRUPTED)]


def test_the_sweep_queues_due_deliveries_without_a_message_and_leaves_the_rest(db, receiver, monkeypatch):
    import reviewer.webhooks.services as services

    sent: list[int] = []
    monkeypatch.setattr(services, "deliveries_queue", lambda ids: sent.extend(ids) or ids)
    monkeypatch.setattr(services, "broker_queue_size", lambda **_: 5)  # messages wait in the broker
    r = receiver()
    due = _delivery(r.url, r.secret)
    later = _delivery(r.url, r.secret)
    Delivery.objects.filter(pk=later.pk).update(next_attempt_at=timezone.now() + timedelta(minutes=1))
    queued = _delivery(r.url, r.secret)
    Delivery.objects.filter(pk=queued.pk).update(queued_at=timezone.now() - timedelta(hours=1))
    assert deliveries_queue_due() == 1 and sent == [due.id]
    monkeypatch.setattr(services, "broker_queue_size", lambda **_: 0)  # sent an hour ago, the broker has nothing: lost
    sent.clear()
    deliveries_queue_due()
    assert sent == [due.id, queued.id]


# --- end to end, with real workers -----------------------------------------------------------------------------


@pytest.mark.worker
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_receiver_down_for_ten_minutes_then_back_gets_every_event_exactly_once_across_a_worker_restart(
        worker_env, tmp_path, settings):
    """The receiver is down (its port refuses connections) for "ten minutes" from the first event, simulated:
    WEBHOOK_BACKOFF_SCALE=0.02 shrinks the day of retries fifty times, so ten minutes are 12 s. Meanwhile a worker
    processes a batch (document.passed, document.flagged, batch.finished), fails its deliveries and is killed with
    SIGKILL; a reviewer's decision is recorded with no worker running (document.reviewed); the receiver comes
    back; a new worker sends what is due. Every event reaches the receiver with a 2xx exactly once by its
    webhook-id, and the database records exactly one successful attempt per delivery."""
    scale = 0.02
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    port = free_port()
    reviewer = User.objects.create_user(username="rev", password="x")
    give_roles(reviewer, "reviewer")
    endpoint = endpoint_create(url=f"http://127.0.0.1:{port}/hooks", user=None,
                               events=["document.passed", "document.flagged", "document.reviewed", "batch.finished"])
    env = {**worker_env, "WEBHOOK_ALLOW_PRIVATE_URLS": "1", "WEBHOOK_BACKOFF_SCALE": str(scale),
           "WEBHOOK_SWEEP_SECONDS": "0.5", "WEBHOOK_TIMEOUT_SECONDS": "2", "DISPATCH_LOST_AFTER_SECONDS": "3",
           "CELERY_VISIBILITY_TIMEOUT": "5", "REAPER_INTERVAL_SECONDS": "1", "PROCESSING_LEASE_SECONDS": "5"}

    first = WorkerProcess(env, tmp_path / "first.log")
    first.start()
    try:
        batch = acta_batch(tmp_path, (71, []), (72, ["sum_mismatch"]), (73, []))
        wait_until(lambda: Event.objects.filter(type="batch.finished").exists(), 120, "the batch to finish")
        first_event = Event.objects.order_by("created_at").first().created_at
        # every one of the batch's four events has failed once (under load the first ones' retries alone could
        # make four failed attempts before the last one was tried)
        wait_until(lambda: Attempt.objects.filter(finished_at__isnull=False).count() >= 4
                   and Delivery.objects.filter(attempts__gte=1).count() >= 4, 30, "failed attempts")
        first.kill()  # SIGKILL, with deliveries pending (and perhaps one in flight)
    finally:
        first.stop()
    connection.close()

    flagged = Document.objects.get(batch=batch, status="flagged")
    review.document_claim(document_id=flagged.id, user=reviewer)
    review.document_reject(document_id=flagged.id, user=reviewer, reason="unreadable",
                           expected_version=Document.objects.get(pk=flagged.id).version)
    assert Event.objects.count() == 5  # 3 documents, the batch, the decision

    back_at = first_event + timedelta(seconds=600 * scale)
    time.sleep(max(0.0, (back_at - timezone.now()).total_seconds()))
    r = Receiver(endpoint.secret, port=port).start()
    second = WorkerProcess(env, tmp_path / "second.log")
    second.start()
    try:
        wait_until(lambda: not Delivery.objects.exclude(status="delivered").exists(), 150, "every delivery")
        time.sleep(2)  # a duplicate would arrive now
    finally:
        second.stop()
        r.stop()

    events = set(Event.objects.values_list("id", flat=True))
    assert set(r.ok_ids()) == events  # none missing
    assert all(n == 1 for n in r.ok_ids().values()), r.ok_ids()  # none twice
    assert all(x["verified"] for x in r.received)
    for delivery in Delivery.objects.all():
        assert delivery.attempt_rows.filter(status_code__gte=200, status_code__lt=300).count() == 1
    # the receiver was down: the batch's events needed more than one attempt, each recorded
    assert Attempt.objects.filter(error__contains="ConnectionRefused").count() >= 4
    assert Delivery.objects.filter(attempts__gt=1).count() >= 4


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_deliveries_have_their_own_queue_so_a_webhook_worker_sends_them_and_never_takes_a_document(
        worker_env, tmp_path, settings):
    """A deployment runs documents and deliveries on separate workers (compose.yaml), so a receiver that hangs
    holds only a delivery worker: here the only worker takes the webhooks' queue, and the deliveries of the
    batch's failed upload arrive while its good document waits, untouched, in the documents' queue."""
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    r = Receiver(signing.new_secret()).start()
    Endpoint.objects.create(url=r.url, secret=r.secret, events=["document.failed"])
    env = {**worker_env, "WEBHOOK_ALLOW_PRIVATE_URLS": "1", "WEBHOOK_SWEEP_SECONDS": "0.5"}
    worker = WorkerProcess(env, tmp_path / "hooks.log", queues=[settings.WEBHOOK_QUEUE])
    worker.start()
    try:
        good, bad = tmp_path / "acta-71.pdf", tmp_path / "empty.pdf"
        good.write_bytes(generate_acta(seed=71).pdf_bytes)
        bad.write_bytes(b"")
        batch = batch_create_from_files(name="hooks", doctype="acta", ocr_engine="pdf-text",
                                        files=[IncomingFile(good.name, good), IncomingFile(bad.name, bad)])
        wait_until(lambda: r.ok_ids(), 30, "the delivery of document.failed")
        time.sleep(2)  # a worker that took documents would have started this one by now
    finally:
        worker.stop()
        r.stop()
    assert Document.objects.get(batch=batch, filename="acta-71.pdf").status == "queued"


def _demo_workers(env: dict[str, str]) -> list[tuple[list[str] | None, int]]:
    """The Celery workers `make demo` starts, as (the queues it takes, None for every queue; its concurrency).
    bash runs the demo's own variable assignments and worker lines with `setsid` printing its arguments, so the
    commands are expanded exactly as the demo expands them."""
    kept, continued = [], False
    for line in (ROOT / "scripts" / "demo.sh").read_text().splitlines():
        if continued or line.startswith("setsid ") or re.match(r"(export )?[A-Za-z_]\w*=", line):
            kept.append(line)
        continued = (continued or line.startswith("setsid ")) and line.endswith("\\")
    printer = "setsid() { local IFS=$'\\x1f'; printf '%s\\n' \"$*\"; }\n"
    out = subprocess.run(["bash", "-c", printer + "\n".join(kept) + "\nwait\n"], cwd=ROOT, env=env,
                         capture_output=True, text=True, check=True).stdout
    workers = []
    for args in (line.split("\x1f") for line in out.splitlines()):
        if "worker" in args and any(a.endswith("celery") for a in args):
            queues = args[args.index("-Q") + 1].split(",") if "-Q" in args else None
            flag = next((f for f in ("--concurrency", "-c") if f in args), None)
            workers.append((queues, int(args[args.index(flag) + 1]) if flag else os.cpu_count() or 1))
    return workers


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_the_demos_workers_finish_a_document_while_a_webhook_receiver_hangs(worker_env, tmp_path, settings):
    """`make demo` on one machine (scripts/demo.sh): a receiver that hangs holds only the deliveries' worker.
    The demo's workers are started here with its queues and concurrency; deliveries to a receiver that hangs
    go out first, and a document then passes while the first of them is still hanging (one worker taking both
    queues, as `celery -A reviewer worker` does, would hold the document until the attempt's timeout)."""
    settings.WEBHOOK_ALLOW_PRIVATE_URLS, settings.WEBHOOK_TIMEOUT_SECONDS = True, 30.0
    env = {**worker_env, "WEBHOOK_ALLOW_PRIVATE_URLS": "1", "WEBHOOK_TIMEOUT_SECONDS": "30",
           "WEBHOOK_SWEEP_SECONDS": "0.5"}
    demo = _demo_workers(env)
    documents, hooks = settings.CELERY_TASK_DEFAULT_QUEUE, settings.WEBHOOK_QUEUE
    takes = {q for queues, _ in demo for q in (queues or [documents, hooks])}
    assert takes == {documents, hooks}, demo  # nothing is left unserved
    assert all(hooks not in (queues or [hooks]) for queues, _ in demo if documents in (queues or [documents])), demo

    r = Receiver(signing.new_secret(), status="hang").start()
    workers = [WorkerProcess(env, tmp_path / f"demo-{i}.log", concurrency=concurrency, queues=queues)
               for i, (queues, concurrency) in enumerate(demo)]
    try:
        for worker in workers:
            worker.start()
        deliveries_queue([_delivery(r.url, r.secret, events=("document.reviewed",)).id for _ in range(3)])
        wait_until(lambda: r.received, 30, "the receiver to hang on a delivery")
        batch = acta_batch(tmp_path, (71, []))
        wait_until(lambda: batch.documents.get().status == "passed", 25, "the document passing meanwhile")
        assert not Attempt.objects.filter(finished_at__isnull=False).exists()  # the first delivery still hangs
    finally:
        r.stop()  # its hanging answers end, so the workers stop at once
        for worker in workers:
            worker.stop()


# --- issue 40, finding 2: what a receiver answered is always recorded, and the attempt limit always holds ----


def test_a_receivers_answer_holding_a_nul_is_recorded_and_the_event_is_not_sent_again(db, receiver):
    r = receiver(answer=b"ok\x00\x00bye")
    delivery = _delivery(r.url, r.secret)
    assert delivery_attempt(delivery_id=delivery.id) == "delivered"
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("delivered", 1)
    assert delivery.attempt_rows.get().response_excerpt == "ok\ufffd\ufffdbye"
    assert deliveries_queue_due(now=timezone.now() + timedelta(days=2)) == 0
    assert delivery_attempt(delivery_id=delivery.id) == "not due" and len(r.received) == 1


def test_a_refusal_holding_a_nul_is_recorded_and_retried_on_the_backoff(db, receiver):
    r = receiver(status=503, answer=b"busy\x00")
    delivery = _delivery(r.url, r.secret)
    assert delivery_attempt(delivery_id=delivery.id) == "will retry"
    attempt = Delivery.objects.get(pk=delivery.pk).attempt_rows.get()
    assert (attempt.status_code, attempt.response_excerpt) == (503, "busy\ufffd")


def test_when_recording_attempts_fails_every_time_the_receiver_still_gets_at_most_the_attempt_limit(
        db, receiver, monkeypatch):
    from reviewer.webhooks import backoff, services

    def broken_finish(**_kwargs):
        raise RuntimeError("recording failed")

    monkeypatch.setattr(services, "_finish", broken_finish)
    r = receiver()
    delivery = _delivery(r.url, r.secret)
    for _ in range(backoff.MAX_ATTEMPTS + 7):
        try:
            delivery_attempt(delivery_id=delivery.id)
        except RuntimeError:
            pass
        # the claim runs out as if the worker had waited for it
        Delivery.objects.filter(pk=delivery.pk).update(claimed_until=timezone.now() - timedelta(seconds=1))
    assert len(r.received) == backoff.MAX_ATTEMPTS
    deliveries_queue_due()
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("failed", backoff.MAX_ATTEMPTS)


def test_an_answer_holding_text_the_database_cannot_encode_is_recorded_and_the_event_is_not_sent_again(
        db, receiver, monkeypatch):
    # A lone surrogate: psycopg cannot encode it (UnicodeEncodeError, not a DatabaseError). The real receiver
    # answers; its answer is given one, as a decoder that let it through would.
    real_post = sender.post
    monkeypatch.setattr(sender, "post", lambda **kw: dataclasses.replace(real_post(**kw), excerpt="ok\udc80\x00"))
    r = receiver()
    delivery = _delivery(r.url, r.secret)
    assert delivery_attempt(delivery_id=delivery.id) == "delivered"
    assert Delivery.objects.get(pk=delivery.pk).attempt_rows.get().response_excerpt == "ok\ufffd\ufffd"
    assert delivery_attempt(delivery_id=delivery.id) == "not due" and len(r.received) == 1


def _replayed_after_every_attempt(r: Receiver, monkeypatch) -> tuple[Delivery, list[int]]:
    """A delivery that failed for good after its last attempt, replayed by an admin; the sweep runs meanwhile."""
    from reviewer.webhooks import services

    queued: list[int] = []
    monkeypatch.setattr(services, "deliveries_queue", lambda ids: queued.extend(ids) or ids)
    delivery = _delivery(r.url, r.secret)
    Delivery.objects.filter(pk=delivery.pk).update(status="failed", attempts=backoff.MAX_ATTEMPTS,
                                                   next_attempt_at=None)
    assert delivery_replay(delivery_id=delivery.id)
    deliveries_queue_due()
    return delivery, queued


def test_a_replay_of_a_delivery_that_used_every_attempt_is_sent_once_more(db, receiver, monkeypatch):
    r = receiver()
    delivery, queued = _replayed_after_every_attempt(r, monkeypatch)
    assert queued == [delivery.id]  # the sweep sends it, and does not end it as out of attempts
    assert delivery_attempt(delivery_id=delivery.id) == "delivered"
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, len(r.received)) == ("delivered", backoff.MAX_ATTEMPTS + 1, 1)
    assert delivery.attempt_rows.get().replay


def test_a_replay_whose_recording_fails_is_still_sent_only_once(db, receiver, monkeypatch):
    from reviewer.webhooks import services

    r = receiver()
    delivery, _ = _replayed_after_every_attempt(r, monkeypatch)
    def broken_finish(**_kwargs):
        raise RuntimeError("recording failed")

    monkeypatch.setattr(services, "_finish", broken_finish)
    for _ in range(3):
        try:
            delivery_attempt(delivery_id=delivery.id)
        except RuntimeError:
            pass
        # the claim runs out as if the worker had waited for it
        Delivery.objects.filter(pk=delivery.pk).update(claimed_until=timezone.now() - timedelta(seconds=1))
    assert len(r.received) == 1
    deliveries_queue_due()
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("failed", backoff.MAX_ATTEMPTS + 1)


# --- HTTPS receivers: the certificate is checked against the system's authorities and the URL's host -------


@pytest.fixture
def authority(tmp_path, monkeypatch):
    """A certificate authority the sender trusts, as the system's store would (SSL_CERT_FILE)."""
    import trustme

    ca = trustme.CA()
    bundle = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(bundle))
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    return ca


def _server_context(ca, *names: str) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert(*names).configure_cert(context)
    return context


def test_an_https_receiver_with_a_trusted_certificate_gets_the_signed_delivery(db, receiver, authority):
    r = receiver(tls=_server_context(authority, "127.0.0.1"))
    delivery = _delivery(r.url, r.secret)
    assert r.url.startswith("https://")
    assert delivery_attempt(delivery_id=delivery.id) == "delivered"
    assert [(x["id"], x["verified"]) for x in r.received] == [(delivery.event_id, True)]


@pytest.mark.parametrize("certificate", ["untrusted", "another host"])
def test_an_https_receiver_whose_certificate_does_not_check_gets_nothing_and_the_attempt_says_why(
        db, receiver, authority, certificate):
    import trustme

    if certificate == "untrusted":
        tls = _server_context(trustme.CA(), "127.0.0.1")  # an authority nobody trusts
    else:
        tls = _server_context(authority, "hooks.example.org")  # trusted, but for another name
    r = receiver(tls=tls)
    delivery = _delivery(r.url, r.secret)
    assert delivery_attempt(delivery_id=delivery.id) == "will retry"
    attempt = Delivery.objects.get(pk=delivery.pk).attempt_rows.get()
    assert attempt.status_code is None and "CERTIFICATE_VERIFY_FAILED" in attempt.error, attempt.error
    assert r.received == []  # not one byte of the event went to a receiver that could not prove who it is
