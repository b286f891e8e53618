"""Webhooks without a worker: the URL guard, signatures, the retry schedule, the pages and who may use them, and
the events recorded with the state changes they report (the outbox)."""

from __future__ import annotations

import pytest
from django.db import transaction
from django.urls import reverse
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from extraction.pipeline.ingest import IncomingFile, batch_create_from_files
from extraction.pipeline.process import document_process
from extraction.pipeline.requeue import document_requeue
from reviewer.desk import services as review
from reviewer.webhooks import backoff, signing, urlguard
from reviewer.webhooks.models import Delivery, Endpoint, Event
from reviewer.webhooks.services import WebhookError, endpoint_create, event_body
from sheetgen.generate import generate_acta
from tests.support import badfiles
from tests.support.desk_data import flagged_acta
from tests.support.webhook_data import acta_batch


def resolving_to(*addresses: str):
    return lambda host, port: list(addresses)


PURE = ("backoff", "events", "sender", "signing", "urlguard")


def test_the_guard_the_signing_the_sender_and_the_schedule_import_neither_django_nor_celery():
    """Pure by their imports (the `reviewer` package itself loads the Celery app, so they cannot be imported
    apart from it as tests/architecture/test_pure_domain.py does for extraction)."""
    import ast
    from pathlib import Path

    for name in PURE:
        tree = ast.parse((Path(backoff.__file__).parent / f"{name}.py").read_text())
        imported = {n.name for node in ast.walk(tree) if isinstance(node, ast.Import) for n in node.names}
        imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
        roots = {m.split(".")[0] for m in imported}
        assert not roots & {"django", "celery", "kombu"}, name
        assert {m for m in imported if m.startswith("reviewer")} <= {f"reviewer.webhooks.{p}" for p in PURE}, name


# --- the URL guard -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("url", ["ftp://example.com/x", "file:///etc/passwd", "javascript:alert(1)", "example.com/x",
                                 "https://user:pw@example.com/", "https:///nohost", "http://example.com:99999/"])
def test_only_http_and_https_urls_with_a_host_are_accepted(url):
    with pytest.raises(urlguard.UnsafeUrl):
        urlguard.check(url, resolver=resolving_to("93.184.216.34"))


@pytest.mark.parametrize("url", ["http://127.0.0.1/hook", "http://10.1.2.3/hook", "http://[::1]:8080/hook",
                                 "http://localhost/hook", "http://169.254.169.254/latest/meta-data",
                                 "http://192.168.0.7/", "http://[::ffff:127.0.0.1]/", "http://0.0.0.0/",
                                 "http://100.64.0.1/", "http://224.0.0.1/"])
def test_loopback_private_link_local_and_reserved_addresses_are_refused(url):
    with pytest.raises(urlguard.UnsafeUrl, match="address"):
        urlguard.check(url)  # the real resolver: these are literal addresses, or localhost


@pytest.mark.parametrize("url", [
    "http://[::127.0.0.1]/", "http://[::7f00:1]/", "http://[::10.0.0.1]/", "http://[::169.254.169.254]/",  # IPv4-compatible
    "http://[64:ff9b::7f00:1]/", "http://[64:ff9b::a9fe:a9fe]/", "http://[64:ff9b:1::7f00:1]/",  # NAT64
    "http://[64:ff9b:1::808:808]/",  # NAT64's local-use prefix: the site's own translator, refused whole
    "http://[2002:7f00:1::]/", "http://[2002:a00:1::1]/", "http://[2002:a9fe:a9fe::]/",  # 6to4
    "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",  # Teredo, whose client is a documentation address
    "http://[::ffff:10.0.0.1]/", "http://[::ffff:7f00:1]/",  # IPv4-mapped, in hex too
    "http://[::ffff:0:7f00:1]/", "http://[::ffff:0:a00:1]/",  # SIIT's IPv4-translated (::ffff:0:a.b.c.d)
    "http://[2606:4700::5efe:a00:1]/", "http://[2606:4700::200:5efe:7f00:1]/",  # ISATAP interface identifiers
])
def test_every_ipv6_form_that_embeds_a_private_ipv4_address_is_refused(url):
    with pytest.raises(urlguard.UnsafeUrl, match="private, loopback, link-local or reserved"):
        urlguard.check(url)


@pytest.mark.parametrize("address", ["2606:4700::1111", "64:ff9b::808:808", "2002:808:808::1", "::ffff:8.8.8.8",
                                     "::ffff:0:808:808", "2606:4700::5efe:808:808"])
def test_ipv6_addresses_that_reach_only_public_addresses_are_accepted(address):
    # a NAT64, 6to4, SIIT or ISATAP address of a public IPv4 address reaches that public address: as allowed as it
    # is, whatever the running Python thinks of the prefix itself (later releases call 2002::/16 not global)
    assert urlguard.check(f"http://[{address}]/").addresses == (address,)


def test_a_hostname_resolving_to_a_private_address_is_refused_even_beside_a_public_one():
    with pytest.raises(urlguard.UnsafeUrl, match="10.0.0.5"):
        urlguard.check("https://hooks.example.com/x", resolver=resolving_to("93.184.216.34", "10.0.0.5"))


def test_a_public_address_is_accepted_and_private_ones_only_when_the_setting_allows_them():
    target = urlguard.check("https://hooks.example.com/x", resolver=resolving_to("93.184.216.34"))
    assert (target.scheme, target.host, target.port, target.addresses) == (
        "https", "hooks.example.com", 443, ("93.184.216.34",))
    assert urlguard.check("http://127.0.0.1:9000/x", allow_private=True).addresses == ("127.0.0.1",)


def test_a_host_that_does_not_resolve_is_refused_with_its_name():
    def fails(host, port):
        raise OSError("Name or service not known")

    with pytest.raises(urlguard.UnsafeUrl, match="nowhere.invalid"):
        urlguard.check("https://nowhere.invalid/", resolver=fails)


def test_registering_an_endpoint_applies_the_guard_and_the_setting(db, users, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = False
    with pytest.raises(WebhookError, match="private"):
        endpoint_create(url="http://127.0.0.1:9/x", events=["document.passed"], user=users["admin"])
    with pytest.raises(WebhookError, match="Choose"):
        endpoint_create(url="http://127.0.0.1:9/x", events=["document.eaten"], user=users["admin"])
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    endpoint = endpoint_create(url="http://127.0.0.1:9/x", events=["batch.finished", "document.passed"],
                               user=users["admin"])
    assert endpoint.events == ["document.passed", "batch.finished"] and endpoint.secret.startswith("whsec_")
    assert Endpoint.objects.count() == 1


# --- signatures ----------------------------------------------------------------------------------------------


def test_a_signature_verifies_with_the_standard_webhooks_verifier_and_fails_when_the_body_changes():
    import time

    secret, body = signing.new_secret(), b'{"type":"document.passed","data":{"document":{"id":7}}}'
    headers = signing.signed_headers(secret=secret, msg_id="evt_1", timestamp=int(time.time()), body=body)
    assert headers["webhook-signature"].startswith("v1,")
    assert Webhook(secret).verify(body, headers)["data"]["document"]["id"] == 7
    with pytest.raises(WebhookVerificationError):
        Webhook(secret).verify(body.replace(b"7", b"8"), headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(signing.new_secret()).verify(body, headers)  # another endpoint's secret


def test_two_secrets_are_never_the_same():
    assert len({signing.new_secret() for _ in range(50)}) == 50


# --- the retry schedule --------------------------------------------------------------------------------------


@pytest.mark.parametrize("scale", [1.0, 0.01])
def test_the_backoff_grows_and_its_last_attempt_starts_within_a_day_of_the_event(scale):
    at, attempts, delays = 0.0, 1, []
    while (wait := backoff.next_attempt_in(attempt=attempts, since_event=at, scale=scale)) is not None:
        delays.append(wait)
        at += wait
        attempts += 1
    assert attempts == backoff.MAX_ATTEMPTS == 11
    assert delays == sorted(delays) and delays[0] == 5 * scale
    assert 20 * 3600 * scale < at <= 24 * 3600 * scale  # retried for most of a day, never past it


def test_an_attempt_that_would_fall_after_the_day_is_not_scheduled():
    assert backoff.next_attempt_in(attempt=9, since_event=23 * 3600, scale=1.0) is None
    assert backoff.next_attempt_in(attempt=1, since_event=0, scale=1.0) == 5


# --- the outbox: events recorded with the state change -------------------------------------------------------


def _endpoint(events, *, active=True, url="https://hooks.example.com/x") -> Endpoint:
    return Endpoint.objects.create(url=url, secret=signing.new_secret(), events=events, active=active)


def test_a_passing_document_records_one_event_and_one_delivery_per_subscribed_endpoint(db, tmp_path,
                                                                                         django_capture_on_commit_callbacks):
    wants = [_endpoint(["document.passed"]), _endpoint(["document.passed", "document.flagged"])]
    _endpoint(["document.flagged", "batch.finished"])  # not subscribed to passing
    _endpoint(["document.passed"], active=False)  # disabled
    batch = acta_batch(tmp_path, (71, []))
    doc = batch.documents.get()
    with django_capture_on_commit_callbacks() as sends:
        assert document_process(document_id=doc.id) == "passed"
    event = Event.objects.get(type="document.passed")
    assert set(Delivery.objects.filter(event=event).values_list("endpoint", flat=True)) == {e.pk for e in wants}
    assert Event.objects.filter(type="document.passed").count() == 1
    document = event.payload["data"]["document"]
    assert (event.payload["type"], document["id"], document["batch"], document["status"], document["stop_reason"]) \
        == ("document.passed", doc.id, batch.id, "passed", "passed")
    assert document["url"] == reverse("desk_document", args=[doc.id])
    assert len(sends) >= 1  # the deliveries are queued once the move commits, not before
    assert Event.objects.filter(type="batch.finished").count() == 1  # its only document ended the batch


def test_nothing_is_stored_when_no_endpoint_subscribes(db, tmp_path):
    _endpoint(["document.failed"])
    batch = acta_batch(tmp_path, (71, []))
    document_process(document_id=batch.documents.get().id)
    assert not Event.objects.exists() and not Delivery.objects.exists()


def test_a_batch_finishes_once_when_its_last_document_ends_and_again_after_a_retry(db, tmp_path):
    _endpoint(["batch.finished"])
    batch = acta_batch(tmp_path, (71, []), (72, ["sum_mismatch"]))
    first, second = batch.documents.order_by("id")
    document_process(document_id=first.id)
    assert not Event.objects.exists()  # one document is still queued
    document_process(document_id=second.id)
    finished = Event.objects.get(type="batch.finished")
    assert {k: finished.payload["data"]["batch"][k] for k in ("id", "documents", "passed", "flagged", "failed")} \
        == {"id": batch.id, "documents": 2, "passed": 1, "flagged": 1, "failed": 0}
    # a supervisor sending the passed one to the reviewers ends no processing: no second finish
    review.document_send_back(document_id=first.id, user=None, reason="look again")
    assert Event.objects.filter(type="batch.finished").count() == 1
    document_requeue(document_id=second.id)
    document_process(document_id=second.id)
    assert Event.objects.filter(type="batch.finished").count() == 2  # the retry's run finished it again


def test_files_refused_at_upload_are_reported_failed_and_a_batch_of_only_those_is_finished(db, tmp_path):
    _endpoint(["document.failed", "batch.finished"])
    refused = [badfiles.make_empty_pdf(tmp_path), badfiles.make_truncated_pdf(tmp_path)]
    batch = batch_create_from_files(name="bad", doctype="acta", ocr_engine="pdf-text",
                                    files=[IncomingFile(p.name, p) for p in refused])
    failed = Event.objects.filter(type="document.failed")
    assert sorted(e.payload["data"]["document"]["id"] for e in failed) == sorted(
        batch.documents.values_list("id", flat=True))
    finished = Event.objects.get(type="batch.finished")
    assert finished.payload["data"]["batch"]["failed"] == 2


def test_a_refused_file_beside_a_good_one_does_not_finish_the_batch_at_upload(db, tmp_path):
    _endpoint(["document.failed", "batch.finished"])
    good = tmp_path / "acta.pdf"
    good.write_bytes(generate_acta(seed=73).pdf_bytes)
    bad = badfiles.make_empty_pdf(tmp_path)
    batch_create_from_files(name="mixed", doctype="acta", ocr_engine="pdf-text",
                            files=[IncomingFile(bad.name, bad), IncomingFile(good.name, good)])
    assert Event.objects.filter(type="document.failed").count() == 1
    assert not Event.objects.filter(type="batch.finished").exists()  # the good one is still queued


def test_a_failed_move_rolled_back_leaves_no_event(db, tmp_path):
    _endpoint(["document.passed", "batch.finished"])
    batch = acta_batch(tmp_path, (71, []))
    doc = batch.documents.get()
    with pytest.raises(RuntimeError), transaction.atomic():
        document_process(document_id=doc.id)
        assert Event.objects.count() == 2
        raise RuntimeError("the transaction of the move rolls back")
    assert not Event.objects.exists() and not Delivery.objects.exists()


def test_a_reviewers_decision_records_document_reviewed(db, users):
    _endpoint(["document.reviewed"])
    acta = flagged_acta(seed=5)
    review.document_claim(document_id=acta.document.id, user=users["reviewer"])
    version = acta.document.__class__.objects.get(pk=acta.document.id).version
    review.document_reject(document_id=acta.document.id, user=users["reviewer"], expected_version=version,
                           reason="unreadable")
    event = Event.objects.get(type="document.reviewed")
    assert event.payload["data"]["document"]["review_status"] == "rejected"
    assert event.deliveries.count() == 1


def test_the_body_is_the_payload_as_compact_json():
    event = Event(id="evt_x", type="document.passed", payload={"type": "document.passed", "data": {"a": 1}})
    assert event_body(event) == b'{"data":{"a":1},"type":"document.passed"}'


# --- pages ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("role", ["reviewer", "supervisor", "outsider"])
def test_only_admins_may_open_or_change_webhooks(client_as, role, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    client = client_as(role)
    assert client.get(reverse("webhook_list")).status_code == 403
    response = client.post(reverse("webhook_list"), {"url": "http://127.0.0.1:9/x", "events": ["document.passed"]})
    assert response.status_code == 403 and not Endpoint.objects.exists()


def test_anonymous_visitors_are_sent_to_the_login(client):
    response = client.get(reverse("webhook_list"))
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_an_admin_registers_an_endpoint_sees_its_secret_and_a_refused_url_says_why(client_as, settings):
    client = client_as("admin")
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = False
    refused = client.post(reverse("webhook_list"), {"url": "http://127.0.0.1:9/x", "events": ["document.passed"]})
    assert refused.status_code == 400 and "private, loopback" in refused.content.decode()
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    response = client.post(reverse("webhook_list"), {"url": "http://127.0.0.1:9/x",
                                                     "events": ["document.passed", "batch.finished"]}, follow=True)
    endpoint = Endpoint.objects.get()
    assert endpoint.secret in response.content.decode()
    assert 'href="/webhooks/"' in client.get(reverse("home"), follow=True).content.decode()  # in the header


def test_an_admin_replays_a_failed_delivery_and_it_is_due_again(client_as, django_capture_on_commit_callbacks):
    client = client_as("admin")
    endpoint = _endpoint(["document.passed"])
    event = Event.objects.create(type="document.passed", payload={}, created_at="2026-01-01T00:00:00Z")
    delivery = Delivery.objects.create(event=event, endpoint=endpoint, status="failed", attempts=11,
                                       created_at="2026-01-01T00:00:00Z")
    page = client.get(reverse("webhook_detail", args=[endpoint.id])).content.decode()
    assert event.id in page and "Replay" in page
    polled = client.get(reverse("webhook_detail", args=[endpoint.id]), HTTP_HX_REQUEST="true").content.decode()
    assert polled.lstrip().startswith('<div id="deliveries"') and event.id in polled  # the list alone
    with django_capture_on_commit_callbacks() as sends:
        response = client.post(reverse("webhook_replay", args=[endpoint.id, delivery.id]), HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and "Replay queued." in response.content.decode()
    delivery.refresh_from_db()
    assert (delivery.status, delivery.replay, delivery.next_attempt_at is not None) == ("pending", True, True)
    assert len(sends) == 1


def test_disabling_and_deleting_an_endpoint(client_as):
    client = client_as("admin")
    endpoint = _endpoint(["document.passed"])
    client.post(reverse("webhook_toggle", args=[endpoint.id]))
    endpoint.refresh_from_db()
    assert not endpoint.active
    client.post(reverse("webhook_delete", args=[endpoint.id]))
    assert not Endpoint.objects.exists()
