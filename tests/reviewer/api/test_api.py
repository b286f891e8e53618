"""The API's behaviour: tokens, idempotent uploads, cursor pages, problems, limits and the desk's guards."""

from __future__ import annotations

import hashlib
import io

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from PIL import Image

from extraction.models import Batch, Document, ReviewEvent
from extraction.states import ReviewStatus, Status
from reviewer.api import throttle
from reviewer.api.models import ApiToken
from reviewer.api.services import token_create
from tests.support.desk_data import flagged_acta

pytestmark = pytest.mark.django_db
PROBLEM = "application/problem+json"


def bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


@pytest.fixture(autouse=True)
def fresh_limits():
    cache.clear()  # the per-token counters live in the cache
    yield
    cache.clear()


@pytest.fixture
def api_as(users):
    """api_as("reviewer") -> (client, headers) calling the API with a new token of that role's user."""

    def make(role: str):
        return Client(), bearer(token_create(user=users[role], name=f"{role} test").secret)

    return make


def png_file(name: str = "page.png", shade: int = 255) -> SimpleUploadedFile:
    buf = io.BytesIO()
    Image.new("RGB", (60, 80), (shade, shade, shade)).save(buf, format="PNG")
    return SimpleUploadedFile(name, buf.getvalue(), content_type="image/png")


def assert_problem(response, status: int, field: str | None = None) -> dict:
    assert response.status_code == status, (response.status_code, response.content[:300])
    assert response["Content-Type"] == PROBLEM
    body = response.json()
    assert body["status"] == status and body["title"] and body["detail"] and body["instance"] == response.request["PATH_INFO"]
    if field is not None:
        assert body["field"] == field and body["errors"][0]["field"] == field
    return body


# --- tokens ------------------------------------------------------------------------------------------


def test_a_new_token_is_shown_once_and_only_its_digest_is_stored(client, users):
    client.force_login(users["reviewer"])
    page = client.post(reverse("token_list"), {"name": "my script"})
    assert page.status_code == 200 and "no-store" in page["Cache-Control"]
    token = ApiToken.objects.get(user=users["reviewer"])
    secret = page.context["new"].secret
    assert secret in page.content.decode()
    assert token.digest == hashlib.sha256(secret.encode()).hexdigest()
    assert all(secret not in str(value) for value in ApiToken.objects.filter(pk=token.pk).values().get().values())
    assert secret not in client.get(reverse("token_list")).content.decode()  # never shown again
    assert Client().get("/api/v1/documents", headers=bearer(secret)).status_code == 200


def test_a_revoked_token_is_refused_with_401(client, users):
    secret = token_create(user=users["reviewer"], name="old").secret
    assert Client().get("/api/v1/documents", headers=bearer(secret)).status_code == 200
    client.force_login(users["reviewer"])
    token = ApiToken.objects.get(user=users["reviewer"])
    client.post(reverse("token_list"), {"revoke": token.id})
    response = Client().get("/api/v1/documents", headers=bearer(secret))
    assert_problem(response, 401)
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_nobody_revokes_another_users_token(client, users):
    secret = token_create(user=users["reviewer"], name="mine").secret
    client.force_login(users["admin"])
    client.post(reverse("token_list"), {"revoke": ApiToken.objects.get().id})
    assert ApiToken.objects.get().revoked_at is None
    assert Client().get("/api/v1/documents", headers=bearer(secret)).status_code == 200


def test_a_request_without_a_token_or_with_a_made_up_one_is_refused_with_401():
    assert_problem(Client().get("/api/v1/documents"), 401)
    assert_problem(Client().get("/api/v1/documents", headers=bearer("pd_not-a-token")), 401)


def test_a_disabled_users_token_is_refused(users):
    secret = token_create(user=users["reviewer"], name="x").secret
    users["reviewer"].is_active = False
    users["reviewer"].save()
    assert_problem(Client().get("/api/v1/documents", headers=bearer(secret)), 401)


# --- batches ------------------------------------------------------------------------------------------


def upload(client, headers, *, key: str | None, name: str = "api batch", shade: int = 255):
    if key is not None:
        headers = {**headers, "Idempotency-Key": key}
    return client.post("/api/v1/batches", {"name": name, "doctype": "acta", "ocr_engine": "pdf-text",
                                           "files": [png_file(shade=shade), png_file("b.png", shade=200)]},
                       headers=headers)


def test_an_upload_makes_a_batch_with_a_document_per_file_and_its_progress(api_as):
    client, headers = api_as("admin")
    response = upload(client, headers, key=None)
    assert response.status_code == 201, response.content
    body = response.json()
    batch = Batch.objects.get(pk=body["id"])
    assert batch.documents.count() == 2 and body["progress"]["total"] == 2
    progress = client.get(f"/api/v1/batches/{batch.id}", headers=headers).json()["progress"]
    assert progress["queued"] + progress["failed"] == 2


def test_a_retried_upload_with_the_same_key_creates_one_batch(api_as):
    client, headers = api_as("admin")
    first = upload(client, headers, key="upload-1")
    again = upload(client, headers, key="upload-1")
    assert (first.status_code, again.status_code) == (201, 200)
    assert first.json()["id"] == again.json()["id"] and again["Idempotent-Replayed"] == "true"
    assert Batch.objects.count() == 1 and Document.objects.count() == 2


def test_the_same_key_with_another_upload_is_refused_and_creates_nothing(api_as):
    client, headers = api_as("admin")
    upload(client, headers, key="upload-2")
    other = upload(client, headers, key="upload-2", shade=10)  # another file's content
    assert_problem(other, 422, field="Idempotency-Key")
    renamed = upload(client, headers, key="upload-2", name="another name")
    assert_problem(renamed, 422, field="Idempotency-Key")
    assert Batch.objects.count() == 1


def test_an_upload_with_an_unknown_type_names_the_field(api_as):
    client, headers = api_as("admin")
    response = client.post("/api/v1/batches", {"name": "x", "doctype": "nope", "files": [png_file()]},
                           headers=headers)
    assert_problem(response, 422, field="doctype")
    assert not Batch.objects.exists()


def test_an_upload_under_a_type_only_an_llm_reads_without_one_names_the_field_and_keeps_nothing(api_as, monkeypatch):
    for name in ("LLM_BASE_URL", "LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    client, headers = api_as("admin")
    response = client.post("/api/v1/batches", {"name": "x", "doctype": "receipt", "files": [png_file()]},
                           headers=headers)
    problem = assert_problem(response, 422, field="doctype")
    assert "No LLM is configured" in str(problem)
    assert not Batch.objects.exists()

def test_a_rerun_queues_the_scope_again(api_as):
    client, headers = api_as("admin")
    acta = flagged_acta(seed=31)
    Document.objects.filter(pk=acta.document.pk).update(original="documents/acta-31.pdf")  # a file was kept
    response = client.post(f"/api/v1/batches/{acta.document.batch_id}/rerun", {"scope": "flagged"},
                           content_type="application/json", headers=headers)
    assert response.status_code == 200 and response.json()["queued"] == [acta.document.id]
    assert Document.objects.get(pk=acta.document.pk).status == Status.QUEUED.value
    bad = client.post(f"/api/v1/batches/{acta.document.batch_id}/rerun", {"scope": "all", "ocr_engine": "paint"},
                      content_type="application/json", headers=headers)
    assert_problem(bad, 422, field="ocr_engine")


# --- document types -----------------------------------------------------------------------------------


def test_a_type_comes_with_its_fields_labels_and_rules(api_as):
    client, headers = api_as("admin")
    names = [t["name"] for t in client.get("/api/v1/doctypes", headers=headers).json()]
    assert {"acta", "invoice"} <= set(names)
    acta = client.get("/api/v1/doctypes/acta", headers=headers).json()
    assert {"path": "valid_votes", "label": "Valid votes"} in acta["fields"]
    assert any(r["code"] == "count_not_integer" and r["label"] for r in acta["rules"])
    assert_problem(client.get("/api/v1/doctypes/nope", headers=headers), 404)
    invoice = client.get("/api/v1/doctypes/invoice", headers=headers).json()  # a type shipped as data
    assert invoice["definition"]["name"] == "invoice" and invoice["editable"]


def test_a_types_source_is_named_as_the_types_page_names_it(api_as):
    client, headers = api_as("admin")
    source = {t["name"]: t["source"] for t in client.get("/api/v1/doctypes", headers=headers).json()}
    assert (source["acta"], source["invoice"]) == ("code", "shipped")
    assert client.get("/api/v1/doctypes/invoice", headers=headers).json()["source"] == "shipped"


def test_every_operation_of_the_api_has_a_summary_in_words_not_its_function_name(client, users):
    client.force_login(users["reviewer"])
    schema = client.get("/api/v1/openapi.json").json()
    operations = [op for path in schema["paths"].values() for op in path.values()]
    assert len(operations) >= 14
    for op in operations:  # ninja's own summary is the function's name in title case ("Doctype Detail Get")
        assert op.get("summary") and op["summary"] != op["summary"].title() and "_" not in op["summary"], op

def test_a_path_the_api_does_not_have_is_a_problem_too(api_as):
    client, headers = api_as("reviewer")
    assert_problem(client.get("/api/v1/nothing/here", headers=headers), 404)
    assert_problem(client.get("/api/v1/documents/not-a-number", headers=headers), 422, field="document_id")


def test_a_method_an_operation_does_not_have_is_a_problem_with_what_is_allowed(api_as):
    client, headers = api_as("reviewer")
    response = client.delete("/api/v1/documents", headers=headers)
    assert_problem(response, 405)
    assert response["Allow"] == "GET" and "use GET" in response.json()["detail"]


# --- documents ----------------------------------------------------------------------------------------


def test_cursor_pagination_walks_every_document_once(api_as):
    client, headers = api_as("supervisor")
    batch = Batch.objects.create(name="many", doctype="acta")
    made = {Document.objects.create(batch=batch, filename=f"d{i}.pdf", sha256=f"{i:064d}",
                                    status=Status.FLAGGED.value if i % 2 else Status.PASSED.value).id
            for i in range(11)}
    seen, cursor, pages = [], None, 0
    while True:
        query = {"limit": 3, "batch": batch.id, **({"cursor": cursor} if cursor else {})}
        body = client.get("/api/v1/documents", query, headers=headers).json()
        seen += [d["id"] for d in body["items"]]
        pages += 1
        cursor = body["next_cursor"]
        if cursor is None:
            break
    assert sorted(seen) == sorted(made) and len(seen) == len(set(seen)) and pages == 4
    flagged = client.get("/api/v1/documents", {"batch": batch.id, "status": "flagged", "limit": 200},
                         headers=headers).json()["items"]
    assert len(flagged) == 5 and {d["status"] for d in flagged} == {"flagged"}


def test_updated_since_keeps_documents_changed_since(api_as):
    client, headers = api_as("supervisor")
    acta = flagged_acta(seed=32)
    body = client.get("/api/v1/documents", {"updated_since": "2999-01-01T00:00:00Z"}, headers=headers).json()
    assert body["items"] == []
    body = client.get("/api/v1/documents", {"updated_since": "2000-01-01T00:00:00Z"}, headers=headers).json()
    assert [d["id"] for d in body["items"]] == [acta.document.id]
    by_type = {t: [d["id"] for d in client.get("/api/v1/documents", {"doctype": t}, headers=headers).json()["items"]]
               for t in ("acta", "invoice")}
    assert by_type == {"acta": [acta.document.id], "invoice": []}


def test_a_bad_filter_or_cursor_is_a_problem_naming_the_field(api_as):
    client, headers = api_as("reviewer")
    assert_problem(client.get("/api/v1/documents", {"status": "lost"}, headers=headers), 422, field="status")
    assert_problem(client.get("/api/v1/documents", {"cursor": "!!"}, headers=headers), 422, field="cursor")
    assert_problem(client.get("/api/v1/documents", {"limit": 0}, headers=headers), 422, field="limit")


def test_a_documents_result_has_fields_with_proofs_and_rules_in_peoples_words(api_as):
    client, headers = api_as("reviewer")
    acta = flagged_acta(seed=33)
    body = client.get(f"/api/v1/documents/{acta.document.id}", headers=headers).json()
    assert (body["status"], body["run"]["stop_reason"], body["version"]) == ("flagged", "exhausted", 2)
    assert body["run"]["rounds"][0]["number"] == 1 and body["run"]["currency"]
    words = next(f for f in body["fields"] if f["path"] == f"rows[{acta.wrong_row}].votes_words")
    assert words["label"] != words["path"] and words["proofs"]
    proof = words["proofs"][0]
    assert proof["page"] == 1 and proof["words"] and 0 <= proof["box"]["left"] <= 1
    rule = next(r for r in body["broken_rules"] if r["code"] == "row_digits_words_mismatch")
    assert rule["label"] and f"rows[{acta.wrong_row}]" not in rule["message"]  # paths read as labels
    assert words["path"] in rule["fields"] and words["label"] in rule["field_labels"]
    page = body["pages"][0]
    image = client.get(page["image"], headers=headers)
    assert image.status_code == 200 and image["Content-Type"] == "image/png"
    annotated = client.get(page["annotated"], {"field": words["path"]}, headers=headers)
    assert annotated.status_code == 200 and annotated.content.startswith(b"\x89PNG")
    assert_problem(client.get(f"/api/v1/documents/{acta.document.id}/pages/9/image", headers=headers), 404)


# --- limits -------------------------------------------------------------------------------------------


def test_a_token_over_its_limit_gets_429_with_the_seconds_left_in_its_window(api_as, settings, monkeypatch):
    settings.API_RATE_LIMIT, settings.API_RATE_WINDOW_SECONDS = 2, 60
    clock = [60 * 29_000_000 + 17.5]  # 17.5 s into a 60 s window: 42.5 s left
    monkeypatch.setattr(throttle.time, "time", lambda: clock[0])
    client, headers = api_as("reviewer")
    assert [client.get("/api/v1/documents", headers=headers).status_code for _ in range(2)] == [200, 200]
    refused = client.get("/api/v1/documents", headers=headers)
    assert_problem(refused, 429)
    assert refused["Retry-After"] == "43"  # rounded up: a client that waits that long is counted afresh
    other_client, other = api_as("supervisor")  # another token has its own count
    assert other_client.get("/api/v1/documents", headers=other).status_code == 200
    clock[0] += 43  # the next window: the token is counted afresh
    assert client.get("/api/v1/documents", headers=headers).status_code == 200


# --- review -------------------------------------------------------------------------------------------


def test_a_reviewer_claims_corrects_and_verifies_through_the_api(api_as):
    client, headers = api_as("reviewer")
    acta = flagged_acta(seed=34)
    doc = acta.document
    claimed = client.post(f"/api/v1/documents/{doc.id}/claim", headers=headers)
    assert claimed.status_code == 200
    path = f"rows[{acta.wrong_row}].votes_words"
    edited = client.post(f"/api/v1/documents/{doc.id}/fields",
                         {"field": path, "value": acta.true_words, "version": claimed.json()["version"]},
                         content_type="application/json", headers=headers)
    assert edited.status_code == 200, edited.content
    body = edited.json()
    assert body["broken_rules"] == [] and next(f for f in body["fields"] if f["path"] == path)["corrected"]
    verified = client.post(f"/api/v1/documents/{doc.id}/verify", {"version": body["version"]},
                           content_type="application/json", headers=headers)
    assert verified.status_code == 200 and verified.json()["review_status"] == ReviewStatus.CORRECTED.value
    assert list(ReviewEvent.objects.filter(document=doc).values_list("kind", flat=True).order_by("id")) == [
        "claim", "edit", "verify"]


def test_typing_again_the_value_a_reviewer_set_writes_nothing(api_as):
    client, headers = api_as("reviewer")
    acta = flagged_acta(seed=40)
    doc = acta.document
    version = client.post(f"/api/v1/documents/{doc.id}/claim", headers=headers).json()["version"]
    edit = {"field": "rows[0].votes", "value": "5"}
    first = client.post(f"/api/v1/documents/{doc.id}/fields", {**edit, "version": version},
                        content_type="application/json", headers=headers).json()
    again = client.post(f"/api/v1/documents/{doc.id}/fields", {**edit, "version": first["version"]},
                        content_type="application/json", headers=headers)
    assert again.status_code == 200 and again.json()["version"] == first["version"] == version + 1
    assert ReviewEvent.objects.filter(document=doc, kind="edit").count() == 1


def test_an_edit_from_a_stale_version_is_refused_and_changes_nothing(api_as):
    client, headers = api_as("reviewer")
    acta = flagged_acta(seed=35)
    doc = acta.document
    client.post(f"/api/v1/documents/{doc.id}/claim", headers=headers)
    stale = client.post(f"/api/v1/documents/{doc.id}/fields",
                        {"field": "rows[0].votes", "value": "5", "version": doc.version - 1},
                        content_type="application/json", headers=headers)
    assert_problem(stale, 409, field="version")
    assert Document.objects.get(pk=doc.pk).version == doc.version
    assert not ReviewEvent.objects.filter(document=doc, kind="edit").exists()


def test_a_write_without_the_callers_claim_is_refused(api_as, users):
    client, headers = api_as("reviewer")
    acta = flagged_acta(seed=36)
    doc = acta.document
    edit = {"field": "rows[0].votes", "value": "5", "version": doc.version}
    assert_problem(client.post(f"/api/v1/documents/{doc.id}/fields", edit, content_type="application/json",
                               headers=headers), 409)
    admin_client, admin = api_as("admin")  # someone else holds it now
    assert admin_client.post(f"/api/v1/documents/{doc.id}/claim", headers=admin).status_code == 200
    taken = client.post(f"/api/v1/documents/{doc.id}/claim", headers=headers)
    assert "admin" in assert_problem(taken, 409)["detail"]
    assert_problem(client.post(f"/api/v1/documents/{doc.id}/verify", {"version": doc.version, "note": "ok"},
                               content_type="application/json", headers=headers), 409)
    assert Document.objects.get(pk=doc.pk).review_status == ReviewStatus.UNREVIEWED.value


def test_a_field_the_type_does_not_let_reviewers_correct_is_refused(api_as):
    client, headers = api_as("reviewer")
    acta = flagged_acta(seed=37)
    doc = acta.document
    version = client.post(f"/api/v1/documents/{doc.id}/claim", headers=headers).json()["version"]
    refused = client.post(f"/api/v1/documents/{doc.id}/fields", {"field": "rows[0].party", "value": "X",
                                                                 "version": version},
                          content_type="application/json", headers=headers)
    assert_problem(refused, 422, field="field")
    not_a_number = client.post(f"/api/v1/documents/{doc.id}/fields", {"field": "rows[0].votes", "value": "twelve",
                                                                      "version": version},
                               content_type="application/json", headers=headers)
    assert_problem(not_a_number, 422, field="value")
    assert Document.objects.get(pk=doc.pk).version == version


def test_verifying_with_broken_rules_needs_a_note_and_rejecting_a_reason(api_as):
    client, headers = api_as("reviewer")
    doc = flagged_acta(seed=38).document
    version = client.post(f"/api/v1/documents/{doc.id}/claim", headers=headers).json()["version"]
    assert_problem(client.post(f"/api/v1/documents/{doc.id}/verify", {"version": version},
                               content_type="application/json", headers=headers), 422, field="note")
    assert_problem(client.post(f"/api/v1/documents/{doc.id}/reject", {"version": version, "reason": " "},
                               content_type="application/json", headers=headers), 422, field="reason")
    rejected = client.post(f"/api/v1/documents/{doc.id}/reject", {"version": version, "reason": "unreadable"},
                           content_type="application/json", headers=headers)
    assert rejected.status_code == 200 and rejected.json()["review_status"] == ReviewStatus.REJECTED.value


def test_a_missing_body_field_is_a_problem_naming_it(api_as):
    client, headers = api_as("reviewer")
    doc = flagged_acta(seed=39).document
    client.post(f"/api/v1/documents/{doc.id}/claim", headers=headers)
    response = client.post(f"/api/v1/documents/{doc.id}/fields", {"field": "rows[0].votes", "value": "5"},
                           content_type="application/json", headers=headers)
    assert_problem(response, 422, field="version")


# --- the document and its docs ------------------------------------------------------------------------


def test_the_openapi_document_and_the_docs_are_served_from_our_own_files(client, users):
    assert client.get("/api/v1/docs").status_code == 302  # people signed in to the app
    client.force_login(users["reviewer"])
    schema = client.get("/api/v1/openapi.json").json()
    assert "/api/v1/documents/{document_id}/fields" in schema["paths"]
    docs = client.get("/api/v1/docs")
    html = docs.content.decode()
    assert docs.status_code == 200 and "/static/ninja/swagger-ui-bundle.js" in html and "https://" not in html
    csp = docs["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "unsafe" not in csp
    for asset in ("ninja/swagger-ui-bundle.js", "ninja/swagger-ui-init.js", "ninja/swagger-ui.css"):
        served = client.get(f"/static/{asset}")
        assert served.status_code == 200, asset
        b"".join(served.streaming_content) if served.streaming else served.content


@pytest.mark.django_db(transaction=True)
def test_two_uploads_at_once_with_the_same_key_make_one_batch(users):
    import threading

    from django.db import connection

    secret = token_create(user=users["admin"], name="parallel").secret
    statuses: list[int] = []
    start = threading.Barrier(2)

    def send() -> None:
        try:
            start.wait()
            statuses.append(upload(Client(), bearer(secret), key="parallel-1").status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=send) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(statuses) == [200, 201]
    assert Batch.objects.count() == 1 and Document.objects.count() == 2
