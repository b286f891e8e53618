"""Issue 40, finding 1 and 6: a NUL character anywhere text enters (a JSON body, the address, a cookie, a type
definition's file) is refused where it enters, never a server error; under /api/ every refusal is a problem."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from extraction.models import DocTypeVersion, ReviewEvent
from reviewer.api.services import token_create
from tests.support.desk_data import flagged_acta

pytestmark = pytest.mark.django_db
PROBLEM = "application/problem+json"
NUL = "\x00"


def _api(users, role: str = "reviewer") -> tuple[Client, dict[str, str]]:
    secret = token_create(user=users[role], name=f"{role} nul").secret
    return Client(raise_request_exception=False), {"Authorization": f"Bearer {secret}"}


def _assert_refused_as_problem(response, *, mentions: str) -> None:
    assert response.status_code == 400, (response.status_code, response.content[:300])
    assert response["Content-Type"] == PROBLEM
    assert mentions in response.json()["detail"] and "NUL" in response.json()["detail"]


@pytest.mark.parametrize(("action", "body", "field"), [
    ("fields", {"field": "acta_id", "value": f"1{NUL}"}, "value"),
    ("verify", {"note": f"checked{NUL}"}, "note"),
    ("reject", {"reason": f"torn{NUL}"}, "reason"),
    ("fields", {"field": f"acta{NUL}_id", "value": "1"}, "field"),
])
def test_a_nul_in_an_api_json_body_is_refused_as_a_problem_and_writes_nothing(users, action, body, field):
    doc = flagged_acta().document
    client, headers = _api(users)
    assert client.post(f"/api/v1/documents/{doc.id}/claim", headers=headers).status_code == 200
    doc.refresh_from_db()
    events = ReviewEvent.objects.count()
    response = client.post(f"/api/v1/documents/{doc.id}/{action}", json.dumps({**body, "version": doc.version}),
                           content_type="application/json", headers=headers)
    _assert_refused_as_problem(response, mentions=f"“{field}”")
    doc.refresh_from_db()
    assert doc.review_status == "unreviewed" and ReviewEvent.objects.count() == events


def test_a_nul_nested_in_a_json_key_is_found_too(users):
    client, headers = _api(users, "admin")
    response = client.post("/api/v1/batches", json.dumps({"name": "x", "doctype": "acta", "extra": {f"k{NUL}": 1}}),
                           content_type="application/json", headers=headers)
    _assert_refused_as_problem(response, mentions="extra.k")


@pytest.mark.parametrize(("method", "path"), [
    ("get", "/confidence/%00/"),
    ("get", "/confidence/acta%00/"),
    ("post", "/confidence/%00/threshold/"),
    ("get", "/types/%00/"),
    ("get", "/batches/1%00/"),
])
def test_a_nul_in_an_address_is_a_400_page_not_a_server_error(users, method, path):
    client = Client(raise_request_exception=False)
    client.force_login(users["admin"])
    response = getattr(client, method)(path)
    assert response.status_code == 400, (path, response.status_code)
    assert "The address contains a NUL character" in response.content.decode()


@pytest.mark.parametrize("path", ["/api/v1/doctypes/%00", "/api/v1/documents/%00", "/api/v1/documents?status=%00"])
def test_a_nul_in_an_api_address_or_query_is_a_problem(users, path):
    client, headers = _api(users, "admin")
    response = client.get(path, headers=headers)
    _assert_refused_as_problem(response, mentions="NUL")


def test_a_session_cookie_holding_a_nul_is_no_session_and_no_server_error(db):
    client = Client(raise_request_exception=False)
    client.cookies["sessionid"] = "abcdefgh\x00ijklmnop"
    response = client.get(reverse("queue"))
    assert response.status_code == 302 and reverse("login") in response["Location"]  # anonymous: to sign in


def test_a_signed_in_user_with_another_cookie_holding_a_nul_keeps_their_session(users):
    client = Client(raise_request_exception=False)
    client.force_login(users["reviewer"])
    client.cookies["tracker"] = "a\x00b"
    assert client.get(reverse("queue")).status_code == 200


def test_importing_a_definition_whose_yaml_holds_a_nul_says_where_and_saves_nothing(tmp_path):
    path = tmp_path / "nul.yaml"
    path.write_text('name: nul_type\nlabel: "a\\0b"\nfields:\n  - key: total\n    label: Total\n', encoding="utf-8")
    with pytest.raises(CommandError, match=r"label: holds a NUL character"):
        call_command("doctypes", "import", str(path))
    assert not DocTypeVersion.objects.filter(name="nul_type").exists()


def test_importing_a_definition_that_is_not_utf8_says_so(tmp_path):
    path = tmp_path / "latin1.yaml"
    path.write_bytes("name: caf\xe9\n".encode("latin-1"))
    with pytest.raises(CommandError, match="not UTF-8 text"):
        call_command("doctypes", "import", str(path))


# --- finding 6: the server's own limits answer problems under /api/ too ---------------------------------


@pytest.mark.parametrize("megabytes", [20, 30])
def test_a_json_body_over_the_servers_limit_is_a_413_problem_and_logs_no_traceback(users, megabytes, caplog):
    doc = flagged_acta().document
    client, headers = _api(users)
    body = json.dumps({"version": 1, "reason": "x" * (megabytes * 1024 * 1024)})
    response = client.post(f"/api/v1/documents/{doc.id}/reject", body, content_type="application/json",
                           headers=headers)
    assert response.status_code == 413, (response.status_code, response.content[:200])
    assert response["Content-Type"] == PROBLEM and "MB" in response.json()["detail"]
    assert not [r for r in caplog.records if r.exc_info], "a client's too-large body is no server fault"


@pytest.mark.parametrize(("method", "path"), [("get", "/api/v1/nowhere"), ("delete", "/api/v1/doctypes"),
                                              ("get", "/api/v2/documents")])
def test_an_api_address_that_does_not_exist_or_a_method_it_does_not_take_is_a_problem(users, method, path):
    client, headers = _api(users, "admin")
    response = getattr(client, method)(path, headers=headers)
    assert response.status_code in (404, 405), (path, response.status_code)
    assert response["Content-Type"] == PROBLEM, (path, response["Content-Type"])
