"""Who may call each API operation: the API's role matrix, as tests/support/url_matrix.py is the pages' (used by
the API's role test and the teams' leak walk)."""

from __future__ import annotations

from reviewer.api.api import api

A, R, S = "admin", "reviewer", "supervisor"

# (method, path) -> who may call it, and the JSON body sent (None: no body). A new operation must be added here.
ALLOWED: dict[tuple[str, str], tuple[set[str], dict | None]] = {
    ("get", "/api/v1/doctypes"): ({A}, None),
    ("get", "/api/v1/doctypes/{name}"): ({A}, None),
    ("post", "/api/v1/batches"): ({A}, None),  # multipart; without files it is a 422 for an admin
    ("get", "/api/v1/batches/{batch_id}"): ({A, S}, None),
    ("post", "/api/v1/batches/{batch_id}/rerun"): ({A}, {"scope": "failed"}),
    ("get", "/api/v1/documents"): ({A, R, S}, None),
    ("get", "/api/v1/documents/{document_id}"): ({A, R, S}, None),
    ("get", "/api/v1/documents/{document_id}/pages/{number}/image"): ({A, R, S}, None),
    ("get", "/api/v1/documents/{document_id}/pages/{number}/annotated"): ({A, R, S}, None),
    ("post", "/api/v1/documents/{document_id}/claim"): ({A, R}, None),
    ("post", "/api/v1/documents/{document_id}/release"): ({A, R}, None),
    ("post", "/api/v1/documents/{document_id}/fields"): ({A, R}, {"field": "acta_id", "value": "1", "version": 0}),
    ("post", "/api/v1/documents/{document_id}/verify"): ({A, R}, {"version": 0}),
    ("post", "/api/v1/documents/{document_id}/reject"): ({A, R}, {"version": 0, "reason": ""}),
    ("post", "/api/v1/doctypes/{name}/evaluations"): ({A}, {}),  # the acta's set is empty: a 422 for an admin
    ("get", "/api/v1/evaluations/{run_id}"): ({A}, None),
}


def operations() -> set[tuple[str, str]]:
    return {(method, path) for path, item in api.get_openapi_schema()["paths"].items() for method in item}
