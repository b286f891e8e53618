"""Who may use each URL, and a world of documents to point every URL at (used by the role and CSP tests)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import get_resolver, reverse

from extraction.doctypes.services import doctype_version_save
from extraction.models import Block, Extraction, FieldValue, Violation, default_team_id
from extraction.pipeline.ingest import IncomingFile, batch_create_from_files
from extraction.pipeline.process import document_process
from extraction.states import Status
from reviewer.audit.field_audit import field_audit_draw
from reviewer.audit.services import audit_sample_draw, sample_request
from reviewer.webhooks.models import Endpoint
from reviewer.webhooks.services import document_data, event_record
from reviewer.webhooks.signing import new_secret
from sheetgen.generate import generate_acta
from tests.support.accounts import make_users

A, R, S = "admin", "reviewer", "supervisor"
ROLES = ("anonymous", "outsider", A, R, S)

# Who may use each URL (GET unless the view takes only POST). A new URL must be added here.
ALLOWED = {
    "home": {A, R, S}, "batch_list": {A, S}, "batch_upload": {A}, "batch_detail": {A, S},
    "batch_delete": {A}, "document_retry": {A}, "document_textract": {A}, "queue": {A, R}, "queue_next": {A, R},
    "audit_home": {A, S}, "desk_document": {A, R, S}, "desk_proof": {A, R, S},
    "desk_edit": {A, R, S},  # GET falls back to the read-only desk; saving is for reviewers (tested below)
    "desk_verify": {A, R}, "desk_reject": {A, R}, "desk_claim": {A, R}, "desk_release": {A, R},
    "desk_send_back": {A, S}, "desk_history": {A, R, S}, "desk_page_image": {A, R, S},
    "desk_page_annotated": {A, R, S}, "audit_batch": {A, S}, "audit_sample_create": {A, S},
    "audit_sample": {A, S}, "audit_item": {A, S}, "audit_item_decide": {A, S}, "batch_dashboard": {A, S},
    "batch_rerun": {A}, "batch_export_values_csv": {A, S}, "batch_export_values_json": {A, S},
    "batch_export_events_csv": {A, S}, "batch_export_events_json": {A, S},
    "desk_take": {A, R}, "desk_presence": {A, R, S},
    "user_list": {A}, "user_new": {A}, "user_edit": {A}, "user_password": {A},
    "confidence_page": {A, S}, "confidence_threshold": {A, S}, "confidence_refit": {A, S},
    "field_sample_create": {A, S}, "field_sample": {A, S}, "field_item": {A, S}, "field_item_decide": {A, S},
    "doctype_list": {A}, "doctype_new": {A}, "doctype_edit": {A}, "doctype_export": {A},
    "evaluation_set": {A}, "evaluation_run": {A}, "evaluation_run_csv": {A}, "doctype_make_live": {A},
    "token_list": {A, R, S},
    "webhook_list": {A}, "webhook_detail": {A}, "webhook_toggle": {A}, "webhook_delete": {A}, "webhook_replay": {A},
    "team_list": set(),  # an instance admin's (a superuser's): no team role opens it
}
PUBLIC = {"login", "logout"}
POST_ONLY = {"document_retry", "document_textract", "queue_next", "desk_verify", "desk_reject", "desk_claim",
             "desk_release", "desk_send_back", "audit_sample_create", "audit_item_decide", "desk_take",
             "confidence_threshold", "confidence_refit", "field_sample_create", "field_item_decide",
             "webhook_toggle", "webhook_delete", "webhook_replay"}
HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def url_names(patterns=None, prefix=""):
    """Every named URL pattern, with the names of its parameters."""
    for p in patterns if patterns is not None else get_resolver().url_patterns:
        if getattr(p, "namespace", None) == "api":
            continue  # the API answers tokens, not sessions: its matrix is tests/reviewer/api/test_roles.py
        if hasattr(p, "url_patterns"):
            yield from url_names(p.url_patterns, prefix + str(p.pattern))
        else:
            yield p.name, list(p.pattern.converters)


@pytest.fixture
def world(db, users, tmp_path):
    """A processed acta (passed) and a flagged one, with hostile text in the OCR, answer and rules."""
    return build_world(users=users, directory=tmp_path)


@pytest.fixture(scope="module")
def world_kept(django_db_setup, django_db_blocker, tmp_path_factory):
    """The world and its users built once for the tests of a module, as Django's TestCase.setUpTestData does: it
    stays inside a transaction that is rolled back after the module, and each test's own (the `db` fixture's,
    a savepoint within it) rolls back what the test wrote. Only for tests that are not transactional."""
    from django.db import transaction
    from django.test import override_settings

    with django_db_blocker.unblock():
        kept = transaction.atomic()
        kept.__enter__()
    try:
        with django_db_blocker.unblock(), \
                override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]):
            users = make_users()
            built = {**build_world(users=users, directory=tmp_path_factory.mktemp("world")), "users": users}
        yield built
    finally:
        with django_db_blocker.unblock():
            transaction.set_rollback(True)
            kept.__exit__(None, None, None)


def build_world(*, users: dict, directory: Path) -> dict:
    """The world, its files written in `directory`."""
    paths = []
    for seed, errors in ((71, []), (72, ["sum_mismatch"])):
        path = directory / f"acta-{seed}.pdf"
        path.write_bytes(generate_acta(seed=seed, errors=errors).pdf_bytes)
        paths.append(path)
    hostile_name = directory / "x.pdf"
    hostile_name.write_bytes(generate_acta(seed=73).pdf_bytes)
    batch = batch_create_from_files(name=f"batch {HOSTILE}", doctype="acta", ocr_engine="pdf-text",
                                    files=[IncomingFile(p.name, p) for p in paths]
                                    + [IncomingFile(f"{HOSTILE}.pdf", hostile_name)], user=users[A])
    for doc in batch.documents.all():
        document_process(document_id=doc.id)
    passed = batch.documents.get(filename="acta-71.pdf")
    flagged = batch.documents.get(filename="acta-72.pdf")
    assert (passed.status, flagged.status) == (Status.PASSED.value, Status.FLAGGED.value)
    extraction = Extraction.objects.filter(document=flagged).first()
    Block.objects.filter(document=flagged, type="LINE").update(text=HOSTILE)
    FieldValue.objects.filter(extraction=extraction, path="acta_id").update(value=HOSTILE)
    answer = extraction.answer
    answer["acta_id"]["value"] = HOSTILE
    Extraction.objects.filter(pk=extraction.pk).update(answer=answer)
    Violation.objects.filter(extraction=extraction).update(message=HOSTILE)
    sample = audit_sample_draw(batch=batch, user=users[S], request=sample_request(count=1, seed=1))
    fields = field_audit_draw(batch=batch, user=users[S], per_stratum=1, seed=1)
    doctype_version_save(data={"name": "defined", "label": f"Defined {HOSTILE}", "instructions": HOSTILE,
                               "fields": [{"key": "total", "label": HOSTILE, "kind": "money", "purpose": HOSTILE}],
                               "rules": [{"code": "positive", "label": HOSTILE, "kind": "pattern", "field": "total",
                                          "pattern": "[1-9].*", "source": HOSTILE, "message": HOSTILE}]},
                         user=users[A])
    evaluation = _evaluation(users=users, passed=passed, flagged=flagged)
    # a webhook endpoint (made directly: its URL is not resolved) with one delivery, never sent (no commit here)
    endpoint = Endpoint.objects.create(url="https://hooks.example.com/proofdesk", secret=new_secret(),
                                       events=["document.passed"], description=HOSTILE, created_by=users[A])
    event = event_record(event_type="document.passed", data=document_data(passed))
    return {"batch": batch, "passed": passed, "flagged": flagged, "sample": sample, "item": sample.items.first(),
            "field_sample": fields, "field_item": fields.items.first(), "endpoint": endpoint,
            "delivery": event.deliveries.get(), **evaluation}


def _evaluation(*, users: dict, passed, flagged) -> dict:
    """The acta's evaluation set (hostile names and values) with a run read beside the live version (its
    documents are the world's, read already) and one still waiting for a worker; the defined type's v2, saved
    after its set began, so not live."""
    from extraction.evaluation.services import evaluation_run_start
    from extraction.models import EvaluationItem, EvaluationResult, EvaluationRun

    items = [EvaluationItem.objects.create(doctype=doctype, document=document, filename=f"{HOSTILE}.pdf",
                                           expected={"acta_id": HOSTILE}, source="verified", confirmed_by=users[R])
             for doctype, document in (("acta", passed), ("acta", flagged), ("defined", passed))]
    live = EvaluationRun.objects.create(doctype="acta", settings={"ocr": "auto"}, created_by=users[A])
    read = EvaluationRun.objects.create(doctype="acta", settings={"max_rounds": 2, "ocr": "auto"}, compared_with=live,
                                        created_by=users[A])
    for run in (live, read):
        for item in items[:2]:
            EvaluationResult.objects.create(run=run, item=item, document=item.document)
    waiting = evaluation_run_start(doctype="acta", team_id=default_team_id(), version=None, options={"max_rounds": 3},
                                   ocr_engine="", user=users[A])
    doctype_version_save(data={"name": "defined", "label": "Defined, second version", "instructions": HOSTILE,
                               "fields": [{"key": "total", "label": HOSTILE, "kind": "money"}]}, user=users[A])
    return {"evaluation": read, "evaluation_waiting": waiting}


def url_for(name: str, params: list[str], world) -> str:
    """The URL of `name` with its parameters pointing into `world`."""
    fields = name.startswith("field_")  # a field sample's URLs point at the field sample and its fields
    values = {"batch_id": world["batch"].id, "document_id": world["flagged"].id, "number": 1,
              "sample_id": world["field_sample" if fields else "sample"].id,
              "item_id": world["field_item" if fields else "item"].id, "user_id": world["batch"].created_by_id,
              "doctype": "acta", "name": "defined", "endpoint_id": world["endpoint"].id,
              "delivery_id": world["delivery"].id, "run_id": world["evaluation"].id, "version": 2}
    return reverse(name, kwargs={p: values[p] for p in params})
