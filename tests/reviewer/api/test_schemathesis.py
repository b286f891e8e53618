"""Schemathesis against the API's own OpenAPI document, as an admin, a reviewer and a supervisor: generated
requests (bodies, queries, headers the schema allows, and some it does not) find no 5xx and no response that
breaks the schema. The ids in paths are real objects', so the operations run past their 404s."""

from __future__ import annotations

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from reviewer.api.api import api
from reviewer.api.services import token_create
from tests.support.desk_data import flagged_acta

ROLES = ("admin", "reviewer", "supervisor")
CHECKS = [not_a_server_error, response_schema_conformance, status_code_conformance, content_type_conformance]

schema = schemathesis.openapi.from_dict(api.get_openapi_schema())
schema.app = get_wsgi_application()


@pytest.fixture
def in_process_wsgi():
    """Requests served in this thread keep the test's database connection, as Django's test client does."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def api_world(db, users, in_process_wsgi):
    acta = flagged_acta(seed=62)
    ids = {"batch_id": acta.document.batch_id, "document_id": acta.document.id, "number": 1, "name": "acta",
           "run_id": 1}
    tokens = {role: token_create(user=users[role], name="schemathesis").secret for role in ROLES}
    return ids, tokens


@schema.parametrize()
@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.filter_too_much])
def test_no_generated_request_gets_a_server_error_or_a_response_outside_the_schema(case, api_world, settings):
    settings.API_RATE_LIMIT = 10_000
    ids, tokens = api_world
    case.path_parameters = {name: ids.get(name, value) for name, value in (case.path_parameters or {}).items()}
    for role in ROLES:
        case.headers = {**(case.headers or {}), "Authorization": f"Bearer {tokens[role]}"}
        case.call_and_validate(checks=CHECKS)
