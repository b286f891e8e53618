"""Exports: a batch's final values equal what the reviewers saved, with proofs; the review events as a log."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.urls import reverse

from extraction.models import FieldValue
from extraction.rules.answers import get_value, iter_fields
from reviewer.audit import services as audit
from reviewer.batches.export import batch_events, batch_export_documents, csv_cell
from reviewer.desk import services as review
from tests.support.dashboard_data import (
    make_batch,
    make_doc,
)
from tests.support.desk_data import flagged_acta

pytestmark = pytest.mark.django_db

ROLES = ["anonymous", "outsider", "reviewer", "supervisor", "admin"]
EXPORTS = ["batch_export_values_csv", "batch_export_values_json", "batch_export_events_csv",
           "batch_export_events_json"]


@pytest.fixture
def reviewed(users):
    """A real flagged acta the reviewer corrected and verified, and a real passed acta a supervisor disagreed with."""
    flagged = flagged_acta(seed=21)
    batch = flagged.document.batch
    passed = flagged_acta(seed=22, wrong_row=None, batch=batch)
    path = f"rows[{flagged.wrong_row}].votes_words"
    result = review.field_edit(document_id=flagged.document.id, user=users["reviewer"], path=path,
                               raw_value=flagged.true_words, expected_version=flagged.document.version)
    review.document_verify(document_id=flagged.document.id, user=users["reviewer"], expected_version=result.version)
    sample = audit.audit_sample_draw(batch=batch, user=users["supervisor"],
                                     request=audit.sample_request(count=1, seed=1))
    audit.audit_item_decide(item_id=sample.items.get().id, user=users["supervisor"], verdict="disagree",
                            note="=HYPERLINK(\"http://evil\")", wrong_fields=["null_votes"])
    return batch, flagged, passed, path


def _json(client, name, batch):
    response = client.get(reverse(name, args=[batch.id]))
    assert response.status_code == 200
    return json.loads(response.content)


def _csv(client, name, batch):
    response = client.get(reverse(name, args=[batch.id]))
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    return list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))


def test_the_json_export_has_the_values_the_reviewer_saved_with_status_stop_reason_reviewer_and_proofs(
        client_as, reviewed):
    batch, flagged, passed, path = reviewed
    data = _json(client_as("admin"), "batch_export_values_json", batch)
    docs = {d["document_id"]: d for d in data["documents"]}
    assert data["batch"]["id"] == batch.id and set(docs) == {flagged.document.id, passed.document.id}

    mine = docs[flagged.document.id]
    assert (mine["status"], mine["review_status"], mine["reviewer"]) == ("flagged", "corrected", "reviewer")
    assert mine["stop_reason"] == "exhausted"
    flagged.extraction.refresh_from_db()
    saved = {p: n["value"] for p, n in iter_fields(flagged.extraction.answer)}
    exported = {f["path"]: f["value"] for f in mine["fields"]}
    assert exported == saved and exported[path] == flagged.true_words
    field = next(f for f in mine["fields"] if f["path"] == path)
    assert field["corrected"] and field["model_value"] != flagged.true_words
    proof = field["proofs"][0]
    assert proof["page"] == 1 and set(proof["bbox"]) == {"left", "top", "width", "height"}
    assert 0 <= proof["bbox"]["left"] <= 1

    other = docs[passed.document.id]
    assert other["status"] == "flagged" and other["reviewer"] == ""  # flagged by the audit, not reviewed yet


def test_the_csv_export_has_one_row_per_field_with_the_same_values_and_page_boxes(client_as, reviewed):
    batch, flagged, _, path = reviewed
    rows = _csv(client_as("admin"), "batch_export_values_csv", batch)
    mine = [r for r in rows if r["document_id"] == str(flagged.document.id)]
    assert len(mine) == FieldValue.objects.filter(extraction=flagged.extraction).count()
    row = next(r for r in mine if r["field"] == path)
    assert row["value"] == flagged.true_words and row["reviewer"] == "reviewer" and row["corrected"] == "true"
    assert row["status"] == "flagged" and row["stop_reason"] == "exhausted"
    assert row["proofs"].startswith("p1 [") and row["proofs"].count(",") >= 3
    votes = next(r for r in mine if r["field"] == "rows[0].votes")
    assert votes["value"] == str(get_value(flagged.extraction.answer, "rows[0].votes"))


def test_both_exports_carry_each_fields_confidence(client_as, reviewed):
    batch, flagged, _, path = reviewed
    FieldValue.objects.filter(extraction=flagged.extraction, path=path).update(field_confidence=0.123456,
                                                                             confidence_version=2)
    data = _json(client_as("admin"), "batch_export_values_json", batch)
    mine = next(d for d in data["documents"] if d["document_id"] == flagged.document.id)
    field = next(f for f in mine["fields"] if f["path"] == path)
    assert (field["confidence"], field["confidence_version"]) == (0.1235, 2)
    rows = _csv(client_as("admin"), "batch_export_values_csv", batch)
    row = next(r for r in rows if r["document_id"] == str(flagged.document.id) and r["field"] == path)
    assert row["confidence"] == "0.1235"


def test_a_document_without_an_extraction_still_has_a_row(client_as, db):
    batch = make_batch("bare")
    make_doc(batch, status="failed", extraction=False)
    rows = _csv(client_as("admin"), "batch_export_values_csv", batch)
    assert len(rows) == 1 and rows[0]["status"] == "failed" and rows[0]["field"] == ""
    assert list(batch_export_documents(batch=batch))[0]["extraction"] is None


def test_the_audit_log_lists_every_event_with_who_what_before_after_and_note(client_as, reviewed):
    batch, flagged, passed, path = reviewed
    events = _json(client_as("supervisor"), "batch_export_events_json", batch)["events"]
    kinds = [e["kind"] for e in events]
    assert kinds == ["edit", "verify", "audit_disagree"]
    edit = events[0]
    assert (edit["user"], edit["field"], edit["after"]) == ("reviewer", path, flagged.true_words)
    assert events[2]["user"] == "supervisor" and events[2]["document_id"] == passed.document.id
    assert events[2]["note"] == '=HYPERLINK("http://evil")'
    rows = _csv(client_as("supervisor"), "batch_export_events_csv", batch)
    assert [r["kind"] for r in rows] == kinds
    assert rows[2]["note"] == "'=HYPERLINK(\"http://evil\")"  # a spreadsheet will not run it
    assert len(list(batch_events(batch=batch))) == 3


@pytest.mark.parametrize(("value", "cell"), [
    (None, ""), (True, "true"), (12, "12"), (-3, "-3"), ("=1+1", "'=1+1"), ("+A1", "'+A1"), ("@SUM", "'@SUM"),
    ("-x", "'-x"), ("plain", "plain"), ([1, "a"], '[1, "a"]'),
])
def test_csv_cells_are_plain_text_and_never_formulas(value, cell):
    assert csv_cell(value) == cell


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("name", EXPORTS)
def test_exports_are_for_admins_and_supervisors(client_as, role, name):
    batch = make_batch("roles")
    make_doc(batch)
    response = client_as(role).get(reverse(name, args=[batch.id]))
    if role == "anonymous":
        assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    elif role in ("admin", "supervisor"):
        assert response.status_code == 200
        ext = name.rsplit("_", 1)[1]
        assert response["Content-Disposition"].startswith(f'attachment; filename="batch-{batch.id}-')
        assert response["Content-Disposition"].endswith(f'.{ext}"')
    else:
        assert response.status_code == 403


def test_exporting_an_unknown_batch_is_not_found(client_as):
    assert client_as("admin").get(reverse("batch_export_values_json", args=[424242])).status_code == 404
