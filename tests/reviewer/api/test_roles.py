"""Who may call each API operation, checked on the server: the API's role matrix, as tests/support/url_matrix.py is
the pages'. A token acts with its user's roles; no token is a 401, a role that may not is a 403."""

from __future__ import annotations

import pytest
from django.test import Client

from reviewer.api.services import token_create
from tests.support.api_matrix import ALLOWED, operations
from tests.support.desk_data import flagged_acta

A, R, S = "admin", "reviewer", "supervisor"
ROLES = ("anonymous", "outsider", A, R, S)
PROBLEM = "application/problem+json"


def test_every_api_operation_is_in_the_role_matrix():
    assert operations() == set(ALLOWED), "add new operations to ALLOWED with the roles that may call them"


@pytest.fixture
def api_world(db):
    acta = flagged_acta(seed=61)
    return {"batch_id": acta.document.batch_id, "document_id": acta.document.id, "number": 1, "name": "acta",
            "run_id": 1}


@pytest.mark.parametrize("role", ROLES)
def test_every_api_operation_checks_the_role_on_the_server(api_world, users, role):
    client = Client()
    headers = {} if role == "anonymous" else {
        "Authorization": f"Bearer {token_create(user=users[role], name='matrix').secret}"}
    for (method, path), (allowed, body) in ALLOWED.items():
        url = path.format(**api_world)
        if method == "get":
            response = client.get(url, headers=headers)
        elif body is None:
            response = client.post(url, headers=headers)
        else:
            response = client.post(url, body, content_type="application/json", headers=headers)
        if role == "anonymous":
            assert response.status_code == 401, (path, response.status_code)
        elif role in allowed:
            assert response.status_code not in (401, 403, 500), (path, role, response.status_code, response.content)
        else:
            assert response.status_code == 403, (path, role, response.status_code)
        if response.status_code in (401, 403):
            assert response["Content-Type"] == PROBLEM, path


@pytest.mark.parametrize("role", ROLES)
def test_the_api_docs_are_for_people_signed_in_with_a_role(db, users, role):
    client = Client()
    if role != "anonymous":
        client.force_login(users[role])
    for url in ("/api/v1/docs", "/api/v1/openapi.json"):
        response = client.get(url)
        if role == "anonymous":
            assert response.status_code == 302 and "/login/" in response["Location"], url
        elif role == "outsider":
            assert response.status_code == 403, url
        else:
            assert response.status_code == 200, url


def test_a_session_alone_does_not_open_the_api(db, users):
    """The API takes tokens only: a browser signed in to the app is not a caller (no CSRF to forge)."""
    client = Client()
    client.force_login(users[A])
    assert client.get("/api/v1/documents").status_code == 401
    assert client.post("/api/v1/batches").status_code == 401
