"""Field-level audits: a sample stratified by field kind, a verdict per field, each kind's rate and interval."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from extraction.confidence.calibration import sample_size_for_width, stratified_draw, wilson
from extraction.models import Document, FieldValue, ReviewEvent, Violation
from reviewer.audit import field_audit
from reviewer.audit.selectors import field_audit_strata
from reviewer.audit.services import AuditError
from reviewer.confidence.selectors import confidence_labels
from reviewer.models import FieldAuditItem
from tests.support.dashboard_data import make_batch, make_doc
from tests.support.desk_data import flagged_acta

pytestmark = pytest.mark.django_db


def passed_batch(n: int = 5):
    batch = make_batch("fields audited")
    return batch, [make_doc(batch) for _ in range(n)]


def items_of(sample, kind: str) -> list[FieldAuditItem]:
    return list(sample.items.filter(kind=kind).order_by("position"))


def test_each_field_kind_is_drawn_on_its_own_and_the_seed_draws_the_same_fields_again(users):
    batch, docs = passed_batch(5)
    make_doc(batch, status="flagged", rounds=[["row_digits_words_mismatch"]])  # its fields are not passed ones
    strata = field_audit.field_audit_population(batch=batch)
    sample = field_audit.field_audit_draw(batch=batch, user=users["supervisor"], per_stratum=3, seed=11)

    rows = FieldValue.objects.filter(extraction__document__in=docs)
    assert sample.population["acta_id"] == 5 and sample.population["rows[].votes"] == rows.filter(
        path__endswith=".votes", path__startswith="rows[").count()
    assert set(sample.population) == set(strata)
    for kind, n in sample.population.items():
        assert len(items_of(sample, kind)) == min(3, n), kind  # the rare kinds get as many as the common ones
    drawn = {kind: sorted(FieldValue.objects.get(extraction_id=i.extraction_id, path=i.path).pk
                          for i in items_of(sample, kind)) for kind in sample.population}
    assert drawn == {kind: sorted(ids) for kind, ids in stratified_draw(strata, per_stratum=3, seed=11).items()}
    assert drawn == {kind: sorted(ids) for kind, ids in field_audit.field_audit_redraw(sample=sample,
                                                                                        strata=strata).items()}
    assert not sample.items.exclude(document__in=docs).exists()


def test_a_later_field_sample_leaves_out_the_fields_already_sampled(users):
    batch, _ = passed_batch(2)
    first = field_audit.field_audit_draw(batch=batch, user=users["supervisor"], per_stratum=1, seed=1)
    second = field_audit.field_audit_draw(batch=batch, user=users["supervisor"], per_stratum=1, seed=1)
    taken = {(i.extraction_id, i.path) for i in first.items.all()}
    assert taken.isdisjoint({(i.extraction_id, i.path) for i in second.items.all()})
    assert second.population["acta_id"] == 1  # two sheet ids, one already judged
    with pytest.raises(AuditError):
        field_audit.field_audit_draw(batch=batch, user=users["supervisor"], per_stratum="0", seed=1)
    with pytest.raises(AuditError):
        field_audit.field_audit_draw(batch=batch, user=users["supervisor"], per_stratum="many", seed=1)


@pytest.mark.parametrize(("per", "seed"), [("²", "1"), ("1", "³"), ("1", "9" * 5000)])
def test_a_field_sample_asked_in_odd_or_endless_digits_is_refused_with_a_reason(users, per, seed):
    batch, _ = passed_batch(1)
    with pytest.raises(AuditError, match="whole number"):
        field_audit.field_audit_draw(batch=batch, user=users["supervisor"], per_stratum=per, seed=seed)


def test_a_wrong_field_needs_a_note_and_sends_its_passed_document_to_the_reviewers_once(users):
    batch, _ = passed_batch(1)
    sample = field_audit.field_audit_draw(batch=batch, user=users["supervisor"], per_stratum=1, seed=3)
    item = items_of(sample, "rows[].votes")[0]
    with pytest.raises(AuditError, match="Say what the document shows"):
        field_audit.field_audit_decide(item_id=item.id, user=users["supervisor"], verdict="wrong")
    decided = field_audit.field_audit_decide(item_id=item.id, user=users["supervisor"], verdict="wrong",
                                             note="the sheet shows 17")
    assert decided.verdict == "wrong" and decided.decided_by == users["supervisor"]
    document = Document.objects.get(pk=item.document_id)
    assert document.status == "flagged" and document.review_status == "unreviewed"
    violation = Violation.objects.get(extraction_id=item.extraction_id, code="audit_disagree")
    assert violation.fields == [item.path] and "the sheet shows 17" in violation.message
    event = ReviewEvent.objects.get(document=document, kind="audit_disagree")
    assert event.field == item.path and event.after["field_sample"] == sample.id
    with pytest.raises(AuditError, match="already judged"):
        field_audit.field_audit_decide(item_id=item.id, user=users["supervisor"], verdict="right")
    # another field of the same document can still be judged: the kind's estimate needs every drawn field
    other = items_of(sample, "acta_id")[0]
    assert field_audit.field_audit_decide(item_id=other.id, user=users["admin"], verdict="right").verdict == "right"
    assert Violation.objects.filter(extraction_id=item.extraction_id, code="audit_disagree").count() == 1


def test_a_judged_field_labels_that_field_alone_for_calibration(users):
    batch, _ = passed_batch(1)
    FieldValue.objects.update(signals={"rules_broken": 0.0}, field_confidence=0.9)
    sample = field_audit.field_audit_draw(batch=batch, user=users["supervisor"], per_stratum=1, seed=3)
    right, wrong = items_of(sample, "acta_id")[0], items_of(sample, "valid_votes")[0]
    field_audit.field_audit_decide(item_id=right.id, user=users["supervisor"], verdict="right")
    field_audit.field_audit_decide(item_id=wrong.id, user=users["supervisor"], verdict="wrong", note="reads 120")
    labels = {label.path: label.right for label in confidence_labels(doctype=batch.doctype)}
    assert labels == {"acta_id": True, "valid_votes": False}  # the fields nobody judged are not labels


def test_each_kind_gets_its_rate_wilson_interval_the_fields_still_needed_and_the_wrong_fields_implied(users):
    batch, _ = passed_batch(6)
    sample = field_audit.field_audit_draw(batch=batch, user=users["supervisor"], per_stratum=4, seed=8)
    ids = items_of(sample, "acta_id")
    field_audit.field_audit_decide(item_id=ids[0].id, user=users["supervisor"], verdict="wrong", note="x")
    for item in ids[1:3]:
        field_audit.field_audit_decide(item_id=item.id, user=users["supervisor"], verdict="right")
    strata = {s["kind"]: s for s in field_audit_strata(sample=sample, width=0.2)}
    s = strata["acta_id"]
    low, high = wilson(1, 3)
    assert (s["population"], s["drawn"], s["judged"], s["wrong"]) == (6, 4, 3, 1)
    assert (s["rate"], s["low"], s["high"]) == (pytest.approx(1 / 3), pytest.approx(low), pytest.approx(high))
    assert s["more"] == sample_size_for_width(1, 3, width=0.2) and s["more"] > 0
    assert s["wrong_estimate"] == (2, round(low * 6), round(high * 6))
    assert strata["rows[].votes"]["judged"] == 0 and strata["rows[].votes"]["rate"] is None


def test_supervisors_draw_and_judge_fields_on_the_page_and_reviewers_may_not(users):
    batch = flagged_acta(seed=57, wrong_row=None).document.batch  # a passed sheet with its page and blocks
    assert batch.documents.get().status == "passed"
    reviewer, supervisor = Client(), Client()
    reviewer.force_login(users["reviewer"])
    supervisor.force_login(users["supervisor"])
    url = reverse("field_sample_create", args=[batch.id])
    assert reviewer.post(url, {"per_stratum": "2", "seed": "4"}).status_code == 403
    response = supervisor.post(url, {"per_stratum": "2", "seed": "4"})
    sample = batch.field_audit_samples.get()
    assert response.status_code == 302 and response["Location"] == reverse("field_sample", args=[sample.id])
    html = supervisor.get(response["Location"]).content.decode()
    assert 'data-kind="rows[].votes"' in html and "Votes by party" in html
    item = items_of(sample, "rows[].votes")[0]
    page = supervisor.get(reverse("field_item", args=[sample.id, item.id])).content.decode()
    assert f'class="proof-box on" data-path="{item.path}"' in page and 'name="verdict" value="wrong"' in page
    assert reviewer.get(reverse("field_item", args=[sample.id, item.id])).status_code == 403
    decide = reverse("field_item_decide", args=[sample.id, item.id])
    refused = supervisor.post(decide, {"verdict": "wrong"})
    assert refused.status_code == 400 and "Say what the document shows" in refused.content.decode()
    done = supervisor.post(decide, {"verdict": "right"})
    following = FieldAuditItem.objects.get(sample=sample, position=item.position + 1)
    assert done["Location"] == reverse("field_item", args=[sample.id, following.id])
    assert supervisor.get(reverse("field_item", args=[sample.id + 1000, item.id])).status_code == 404
