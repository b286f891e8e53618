"""Roles, start pages, settings and the state machine."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.urls import reverse

from extraction.models import Batch, Document
from extraction.pipeline import transitions as services
from extraction.states import Status
from tests.support.accounts import PASSWORD
from tests.support.paths import ROOT

# Every page so far, and who may open it. Later views join this matrix in tests/reviewer/test_security.py.
START_PAGES = {"admin": "batch_list", "reviewer": "queue", "supervisor": "audit_home"}
MATRIX = {
    "batch_list": {"admin", "supervisor"},
    "queue": {"admin", "reviewer"},
    "audit_home": {"admin", "supervisor"},
}


def test_the_migration_creates_one_group_per_role(db):
    assert set(Group.objects.values_list("name", flat=True)) >= {"admin", "reviewer", "supervisor"}


@pytest.mark.parametrize("role", ["admin", "reviewer", "supervisor"])
def test_each_role_lands_on_its_own_start_page_after_login(client, users, role):
    response = client.post(reverse("login"), {"username": role, "password": PASSWORD}, follow=True)
    assert response.status_code == 200
    assert response.redirect_chain[-1][0] == reverse(START_PAGES[role])


def test_a_user_without_a_role_is_refused_after_login(client, users):
    response = client.post(reverse("login"), {"username": "outsider", "password": PASSWORD}, follow=True)
    assert response.status_code == 403
    assert b"no Proofdesk role" in response.content


def test_a_wrong_password_shows_the_form_again(client, users):
    response = client.post(reverse("login"), {"username": "admin", "password": "nope"})
    assert response.status_code == 200
    assert b"did not match" in response.content or b"Please enter a correct" in response.content
    assert "_auth_user_id" not in client.session


@pytest.mark.parametrize("url_name", sorted(MATRIX))
@pytest.mark.parametrize("role", ["anonymous", "outsider", "admin", "reviewer", "supervisor"])
def test_every_page_checks_the_role_on_the_server(client_as, url_name, role):
    response = client_as(role).get(reverse(url_name))
    if role == "anonymous":
        assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    elif role in MATRIX[url_name]:
        assert response.status_code == 200
    else:
        assert response.status_code == 403


def test_logout_needs_a_post_and_ends_the_session(client_as):
    client = client_as("admin")
    assert client.get(reverse("logout")).status_code == 405
    client.post(reverse("logout"))
    assert client.get(reverse("batch_list")).status_code == 302


def _document(**fields) -> Document:
    batch = Batch.objects.create(name="b", doctype="invoice")
    return Document.objects.create(batch=batch, filename="a.pdf", sha256="0" * 64, **fields)


def test_a_transition_happens_once_and_a_second_claim_is_refused(db):
    doc = _document()
    assert services.document_transition(document_id=doc.id, to=Status.PROCESSING)
    assert not services.document_transition(document_id=doc.id, to=Status.PROCESSING)
    doc.refresh_from_db()
    assert doc.status == "processing" and doc.attempts == 1 and doc.version == 1


def test_a_transition_the_state_machine_does_not_allow_is_refused(db):
    doc = _document(status="passed")
    assert not services.document_transition(document_id=doc.id, to=Status.PROCESSING)
    doc.refresh_from_db()
    assert doc.status == "passed"


@pytest.mark.django_db(transaction=True)
def test_two_workers_racing_for_one_document_only_one_wins():
    doc = _document()
    results: list[bool] = []
    barrier = threading.Barrier(8)

    def claim():
        barrier.wait()
        results.append(services.document_transition(document_id=doc.id, to=Status.PROCESSING))
        connection.close()

    threads = [threading.Thread(target=claim) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results.count(True) == 1 and results.count(False) == 7


def test_a_failure_keeps_the_message_on_the_document(db):
    doc = _document()
    assert services.document_fail(document_id=doc.id, code="corrupt_pdf", message="The PDF is truncated.")
    doc.refresh_from_db()
    assert (doc.status, doc.error_code, doc.error_message) == ("failed", "corrupt_pdf", "The PDF is truncated.")
    assert services.document_transition(document_id=doc.id, to=Status.QUEUED)  # retryable


def _manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items()
                if not k.startswith(("LLM_", "OCR_", "MAX_ROUNDS", "DJANGO_ALLOW_ASYNC_UNSAFE"))}
    full_env.update(env)
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=full_env, capture_output=True, text=True, timeout=120
    )


def test_check_deploy_is_clean_with_production_settings(tmp_path):
    env = {
        "PROOFDESK_ENV": "production",
        "SECRET_KEY": "x" * 20 + "-production-secret-key-with-enough-entropy-0123456789",
        "ALLOWED_HOSTS": "proofdesk.example.org",
        "PROOFDESK_VAR_DIR": str(tmp_path),
    }
    result = _manage("check", "--deploy", "--fail-level", "WARNING", env=env)
    assert result.returncode == 0, result.stdout + result.stderr


def test_production_refuses_to_start_without_a_secret_key(tmp_path):
    env = {"PROOFDESK_ENV": "production", "SECRET_KEY": "", "ALLOWED_HOSTS": "x.org", "PROOFDESK_VAR_DIR": str(tmp_path)}
    result = _manage("check", env=env)
    assert result.returncode != 0 and "SECRET_KEY must be set" in result.stderr


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("MAX_ROUNDS", "three", "MAX_ROUNDS='three' is not a whole number"),
        ("MAX_ROUNDS", "0", "MAX_ROUNDS=0 is below the minimum of 1"),
        ("OCR_ENGINE", "magic", "OCR_ENGINE='magic' is not one of"),
        ("LLM_INPUT", "smell", "LLM_INPUT='smell' is not one of"),
        ("DJANGO_DEBUG", "maybe", "DJANGO_DEBUG='maybe' is not a boolean"),
        ("TRUSTED_PROXIES", "10.0.0.1,proxy", "TRUSTED_PROXIES: 'proxy' is not an IP address"),
    ],
)
def test_a_bad_setting_stops_start_up_naming_the_variable(tmp_path, name, value, says):
    result = _manage("check", env={name: value, "PROOFDESK_VAR_DIR": str(tmp_path)})
    assert result.returncode != 0
    assert says in result.stderr


def test_logins_are_throttled_after_repeated_failures(client, users, settings):
    from reviewer.models import LoginThrottle

    settings.LOGIN_MAX_FAILURES = 3
    for _ in range(3):
        assert client.post(reverse("login"), {"username": "reviewer", "password": "wrong"}).status_code == 200
    blocked = client.post(reverse("login"), {"username": "reviewer", "password": PASSWORD})
    assert blocked.status_code == 429 and b"Too many failed logins" in blocked.content
    assert "_auth_user_id" not in client.session
    LoginThrottle.objects.all().delete()  # the lockout ran out
    assert client.post(reverse("login"), {"username": "reviewer", "password": PASSWORD}).status_code == 302


def test_every_post_needs_a_csrf_token(users):
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    assert strict.post(reverse("login"), {"username": "admin", "password": PASSWORD}).status_code == 403
    strict.force_login(users["admin"])
    assert strict.post(reverse("logout")).status_code == 403


def _settings_in_a_clean_process(tmp_path, **env: str) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items()
                if k not in ("DJANGO_DEBUG", "PROOFDESK_ENV", "DATABASE_URL") and not k.startswith("LLM_")}
    full_env.update(PROOFDESK_VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="reviewer.settings", **env)
    show = ("import django; django.setup(); from django.conf import settings; from django.test import Client; "
            "r = Client(raise_request_exception=False).get('/no-such-page/'); "
            "print(settings.DEBUG, r.status_code, b'urlpatterns' in r.content or b'URLconf' in r.content)")
    return subprocess.run([sys.executable, "-c", show], cwd=ROOT, env=full_env, capture_output=True, text=True,
                          timeout=120)


def test_a_server_started_with_nothing_set_has_debug_off_and_its_404_lists_no_urls(tmp_path):
    started = _settings_in_a_clean_process(tmp_path)
    assert started.stdout.split() == ["False", "404", "False"], started.stderr[-2000:]


def test_debug_is_on_only_when_django_debug_asks_for_it(tmp_path):
    started = _settings_in_a_clean_process(tmp_path, DJANGO_DEBUG="1")
    assert started.stdout.split() == ["True", "404", "True"], started.stderr[-2000:]
