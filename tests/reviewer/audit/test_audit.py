"""Supervisor audits: reproducible samples, verdicts, disagreements that reach the reviewers, the estimate."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from extraction.common import stats
from extraction.models import Document, ReviewEvent, Violation
from reviewer.audit import services as audit
from reviewer.audit.selectors import audit_summary
from reviewer.desk.selectors import queue_documents_open
from reviewer.models import AuditItem, AuditSample
from tests.support.dashboard_data import make_batch, make_doc
from tests.support.desk_data import flagged_acta

pytestmark = pytest.mark.django_db

ROLES = ["anonymous", "outsider", "reviewer", "supervisor", "admin"]
ALLOWED = {"supervisor", "admin"}


def passed_batch(n: int = 10, name: str = "audited"):
    batch = make_batch(name)
    docs = [make_doc(batch) for _ in range(n)]
    return batch, docs


def draw(batch, user, *, count=None, percent=None, seed=7) -> AuditSample:
    return audit.audit_sample_draw(batch=batch, user=user,
                                   request=audit.sample_request(count=count, percent=percent, seed=seed))


# --- drawing ------------------------------------------------------------------------------------------


def test_a_sample_records_its_seed_and_population_and_draws_the_same_documents_again(users):
    batch, docs = passed_batch(10)
    make_doc(batch, status="flagged", rounds=[["row_digits_words_mismatch"]])  # not in the population
    sample = draw(batch, users["supervisor"], count=3, seed=123)

    chosen = sorted(sample.items.values_list("document_id", flat=True))
    assert sample.size == 3 and sample.population == 10 and sample.seed == 123
    assert sample.population_ids == sorted(d.id for d in docs)
    assert chosen == stats.draw_sample([d.id for d in docs], 3, 123) == audit.audit_sample_redraw(sample=sample)
    assert sample.created_by == users["supervisor"] and sample.requested_label == "3 documents"


def test_a_percentage_is_rounded_up_and_a_missing_seed_is_drawn_and_recorded(users):
    batch, _ = passed_batch(10)
    sample = audit.audit_sample_draw(batch=batch, user=users["supervisor"],
                                     request=audit.sample_request(percent="25"))
    assert sample.size == 3 and sample.requested_kind == "percent" and sample.requested_label == "25 %"
    assert 0 <= sample.seed < audit.MAX_SEED
    assert audit.audit_sample_redraw(sample=sample) == sorted(sample.items.values_list("document_id", flat=True))


def test_a_later_sample_never_draws_a_document_already_sampled(users):
    batch, _ = passed_batch(5)
    first = draw(batch, users["supervisor"], count=3)
    second = draw(batch, users["supervisor"], count=5)
    a = set(first.items.values_list("document_id", flat=True))
    b = set(second.items.values_list("document_id", flat=True))
    assert second.size == 2 and not a & b and len(a | b) == 5
    with pytest.raises(audit.AuditError, match="already in a sample"):
        draw(batch, users["supervisor"], count=1)


@pytest.mark.parametrize("kwargs", [{"count": "0"}, {"count": "x"}, {"percent": "0"}, {"percent": "150"},
                                    {"count": "2", "percent": "5"}, {}, {"count": "2", "seed": "-1"},
                                    {"percent": "1.234"}])
def test_a_bad_request_for_a_sample_is_refused_with_a_reason(kwargs):
    with pytest.raises(audit.AuditError):
        audit.sample_request(**kwargs)


@pytest.mark.parametrize(("amount", "kind"), [
    ("nan", "percent"), ("NaN", "percent"), ("sNaN", "percent"), ("inf", "percent"), ("-inf", "percent"),
    ("Infinity%", "percent"), ("1e999999", "percent"), ("1e-999999", "percent"),
    ("100000", "count"), ("9" * 30, "count"), ("²", "count"),
])
def test_a_sample_of_a_non_finite_or_out_of_range_amount_is_refused_on_the_form(client_as, amount, kind):
    batch, _ = passed_batch(3)
    response = client_as("supervisor").post(reverse("audit_sample_create", args=[batch.id]),
                                            {"amount": amount, "kind": kind, "seed": "5"}, follow=True)
    assert response.status_code == 200 and response.redirect_chain[-1][0].startswith(
        reverse("audit_batch", args=[batch.id]))
    messages = [str(m) for m in response.context["messages"]]
    assert len(messages) == 1 and ("percentage" in messages[0] or "number of documents" in messages[0])
    assert not AuditSample.objects.filter(batch=batch).exists()


def test_the_largest_count_the_sample_keeps_is_still_drawn(users):
    batch, _ = passed_batch(2)
    sample = draw(batch, users["supervisor"], count=str(audit.MAX_COUNT))
    assert sample.size == 2 and sample.requested_label == f"{audit.MAX_COUNT} documents"


# --- verdicts -----------------------------------------------------------------------------------------


def test_agreeing_records_the_verdict_and_an_event_and_leaves_the_document_passed(users):
    batch, _ = passed_batch(2)
    item = draw(batch, users["supervisor"], count=1).items.get()
    audit.audit_item_decide(item_id=item.id, user=users["supervisor"], verdict="agree", note="fine")
    item.refresh_from_db()
    assert (item.verdict, item.decided_by, item.note) == ("agree", users["supervisor"], "fine")
    assert item.extraction == item.document.extractions.first()
    assert Document.objects.get(pk=item.document_id).status == "passed"
    event = ReviewEvent.objects.get(document=item.document, kind="audit_agree")
    assert event.user == users["supervisor"] and event.after["sample"] == item.sample_id


def test_a_disagreement_flags_the_document_for_the_reviewers_with_the_supervisors_note(users):
    batch = make_batch()
    doc = make_doc(batch, rounds=[["row_digits_words_mismatch"], []])  # the loop silenced a rule on rows[4]
    processed_at = doc.processed_at
    item = draw(batch, users["supervisor"], count=1).items.get()

    audit.audit_item_decide(item_id=item.id, user=users["supervisor"], verdict="disagree",
                            note="Row 5 says 12 on the page", wrong_fields=["rows[4].votes"])

    doc.refresh_from_db()
    assert (doc.status, doc.review_status) == ("flagged", "unreviewed")
    assert doc.processed_at == processed_at  # the processing time is not rewritten by the audit
    assert doc.id in set(queue_documents_open().values_list("id", flat=True))
    violation = Violation.objects.get(extraction=doc.extractions.first(), code="audit_disagree")
    assert "Row 5 says 12 on the page" in violation.message and violation.fields == ["rows[4].votes"]
    event = ReviewEvent.objects.get(document=doc, kind="audit_disagree")
    assert event.note == "Row 5 says 12 on the page" and event.before["status"] == "passed"
    item.refresh_from_db()
    assert item.wrong_fields == ["rows[4].votes"] and item.rules == ["row_digits_words_mismatch"]


def test_a_disagreement_needs_a_note_and_fields_of_the_document(users):
    batch, _ = passed_batch(1)
    item = draw(batch, users["supervisor"], count=1).items.get()
    with pytest.raises(audit.AuditError, match="note"):
        audit.audit_item_decide(item_id=item.id, user=users["supervisor"], verdict="disagree", note="  ")
    with pytest.raises(audit.AuditError, match="not fields"):
        audit.audit_item_decide(item_id=item.id, user=users["supervisor"], verdict="disagree", note="x",
                                wrong_fields=["rows[99].votes"])
    with pytest.raises(audit.AuditError, match="agree or disagree"):
        audit.audit_item_decide(item_id=item.id, user=users["supervisor"], verdict="maybe")
    item.refresh_from_db()
    assert item.verdict == "pending" and Document.objects.get(pk=item.document_id).status == "passed"


def test_a_verdict_is_given_once_and_only_while_the_document_is_passed(users):
    batch, _ = passed_batch(2)
    first, second = draw(batch, users["supervisor"], count=2).items.order_by("position")
    audit.audit_item_decide(item_id=first.id, user=users["supervisor"], verdict="agree")
    with pytest.raises(audit.AuditError, match="already audited"):
        audit.audit_item_decide(item_id=first.id, user=users["admin"], verdict="disagree", note="late")
    Document.objects.filter(pk=second.document_id).update(status="queued")  # re-run meanwhile
    with pytest.raises(audit.AuditError, match="no longer passed"):
        audit.audit_item_decide(item_id=second.id, user=users["supervisor"], verdict="agree")
    assert ReviewEvent.objects.filter(kind__startswith="audit").count() == 1


def test_the_estimate_moves_with_each_verdict_and_carries_its_wilson_interval(users):
    batch, _ = passed_batch(8)
    items = list(draw(batch, users["supervisor"], count=5).items.order_by("position"))
    assert audit_summary(batch=batch)["audited"] == 0 and audit_summary(batch=batch)["pending"] == 5

    audit.audit_item_decide(item_id=items[0].id, user=users["supervisor"], verdict="disagree", note="wrong",
                            wrong_fields=["valid_votes"])
    s = audit_summary(batch=batch)
    assert (s["disagreed"], s["audited"], s["estimate"].estimate) == (1, 1, 1.0)

    for item in items[1:4]:
        audit.audit_item_decide(item_id=item.id, user=users["supervisor"], verdict="agree")
    s = audit_summary(batch=batch)
    assert (s["disagreed"], s["audited"], s["pending"]) == (1, 4, 1)
    assert s["estimate"].estimate == 0.25
    assert (s["estimate"].low, s["estimate"].high) == stats.wilson_interval(1, 4)
    assert s["by_field"] == [("valid_votes", 1)]
    assert s["by_rule"] == [("(no rule fired on these fields)", "(no rule fired on these fields)", 1)]
    assert s["passed_population"] == 8  # 7 still passed + the one the audit flagged


def test_next_pending_item_skips_decided_and_no_longer_passed_documents(users):
    batch, _ = passed_batch(3)
    a, b, c = draw(batch, users["supervisor"], count=3).items.order_by("position")
    audit.audit_item_decide(item_id=a.id, user=users["supervisor"], verdict="agree")
    Document.objects.filter(pk=b.document_id).update(status="queued")
    assert audit.next_pending_item(sample=a.sample, after_position=a.position) == c


# --- pages --------------------------------------------------------------------------------------------


@pytest.fixture
def sampled(users):
    batch, _ = passed_batch(4)
    sample = draw(batch, users["supervisor"], count=2)
    return batch, sample, sample.items.order_by("position").first()


def _urls(batch, sample, item):
    return {
        "audit_home": reverse("audit_home"),
        "audit_batch": reverse("audit_batch", args=[batch.id]),
        "audit_sample": reverse("audit_sample", args=[sample.id]),
        "audit_item": reverse("audit_item", args=[sample.id, item.id]),
    }


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("name", ["audit_home", "audit_batch", "audit_sample", "audit_item"])
def test_every_audit_page_checks_the_role_on_the_server(client_as, sampled, role, name):
    response = client_as(role).get(_urls(*sampled)[name])
    if role == "anonymous":
        assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    else:
        assert response.status_code == (200 if role in ALLOWED else 403)


@pytest.mark.parametrize("role", ROLES)
def test_only_supervisors_and_admins_draw_samples(client_as, sampled, role):
    batch = sampled[0]
    response = client_as(role).post(reverse("audit_sample_create", args=[batch.id]), {"amount": "1", "kind": "count"})
    expected = {"anonymous": 302, "outsider": 403, "reviewer": 403}.get(role, 302)
    assert response.status_code == expected
    assert AuditSample.objects.filter(batch=batch).count() == (2 if role in ALLOWED else 1)


@pytest.mark.parametrize("role", ROLES)
def test_only_supervisors_and_admins_give_verdicts(client_as, sampled, role):
    _, sample, item = sampled
    response = client_as(role).post(reverse("audit_item_decide", args=[sample.id, item.id]),
                                    {"verdict": "disagree", "note": "wrong total"})
    item.refresh_from_db()
    if role in ALLOWED:
        assert response.status_code == 302 and item.verdict == "disagree"
    else:
        assert response.status_code in (302, 403) and item.verdict == "pending"
        if role != "anonymous":
            assert response.status_code == 403


def test_an_item_of_another_sample_or_a_missing_one_is_not_found(client_as, sampled, users):
    batch, sample, item = sampled
    other = draw(batch, users["supervisor"], count=1)
    client = client_as("supervisor")
    assert client.get(reverse("audit_item", args=[other.id, item.id])).status_code == 404
    assert client.post(reverse("audit_item_decide", args=[other.id, item.id]), {"verdict": "agree"}).status_code == 404
    assert client.get(reverse("audit_sample", args=[99999])).status_code == 404
    assert client.get(reverse("audit_batch", args=[99999])).status_code == 404


def test_a_verdict_post_without_the_csrf_token_is_refused(users, sampled):
    _, sample, item = sampled
    client = Client(enforce_csrf_checks=True)
    client.force_login(users["supervisor"])
    response = client.post(reverse("audit_item_decide", args=[sample.id, item.id]), {"verdict": "agree"})
    assert response.status_code == 403
    item.refresh_from_db()
    assert item.verdict == "pending"


def test_a_supervisor_samples_audits_and_sees_the_estimate_move_on_the_pages(client_as):
    batch, _ = passed_batch(6)
    client = client_as("supervisor")
    page = client.get(reverse("audit_batch", args=[batch.id]))
    assert b"No audited document yet" in page.content and b"6 passed documents" in page.content

    response = client.post(reverse("audit_sample_create", args=[batch.id]),
                           {"amount": "50", "kind": "percent", "seed": "99"})
    sample = AuditSample.objects.get(batch=batch)
    assert response["Location"] == reverse("audit_sample", args=[sample.id]) and sample.size == 3
    items = list(sample.items.order_by("position"))

    response = client.post(reverse("audit_item_decide", args=[sample.id, items[0].id]),
                           {"verdict": "disagree", "note": "Null votes misread", "fields": ["null_votes"]})
    assert response["Location"] == reverse("audit_item", args=[sample.id, items[1].id])  # on to the next
    client.post(reverse("audit_item_decide", args=[sample.id, items[1].id]), {"verdict": "agree"})

    page = client.get(reverse("audit_batch", args=[batch.id])).content.decode()
    assert "50.0 %" in page and "1 disagreement in 2 audited documents" in page
    low, high = stats.wilson_interval(1, 2)
    assert f"{100 * low:.1f} % – {100 * high:.1f} %" in page
    assert "Null votes" in page

    sample_page = client.get(reverse("audit_sample", args=[sample.id])).content.decode()
    assert "gives exactly these documents" in sample_page and "Null votes misread" in sample_page


def test_a_refused_verdict_shows_the_reason_and_keeps_what_was_typed(client_as, sampled):
    _, sample, item = sampled
    response = client_as("supervisor").post(reverse("audit_item_decide", args=[sample.id, item.id]),
                                            {"verdict": "disagree", "note": "", "fields": ["valid_votes"]})
    assert response.status_code == 400
    assert b"Say what is wrong" in response.content
    assert b'value="valid_votes" aria-label="Valid votes is wrong" checked' in response.content


def test_the_item_page_shows_fields_beside_the_page_with_their_proof_boxes_and_escapes_text(client_as, users):
    from extraction.models import Block

    acta = flagged_acta(seed=5, wrong_row=None)  # a real passed acta with resolved proofs
    fv = acta.extraction.fields.get(path="acta_id")
    Block.objects.filter(pk=int(fv.proofs[0]["block_id"])).update(text="<script>alert(1)</script>")
    sample = draw(acta.document.batch, users["supervisor"], count=1)
    item = sample.items.get()
    page = client_as("supervisor").get(reverse("audit_item", args=[sample.id, item.id])).content.decode()
    assert reverse("desk_document", args=[acta.document.id]) in page
    assert "<script>alert(1)" not in page and "&lt;script&gt;alert(1)" in page
    assert reverse("desk_page_image", args=[acta.document.id, 1]) in page  # the page itself, not box numbers
    b = fv.proofs[0]["bbox"]
    assert f'1:{b["left"]:.5f},{b["top"]:.5f},{b["width"]:.5f},{b["height"]:.5f}' in page
    assert ">Acta id</a>" in page and "[0.0" not in page
    assert page.count('name="fields"') == acta.extraction.fields.count()


def test_a_decided_item_shows_its_verdict_and_no_form(client_as, sampled, users):
    _, sample, item = sampled
    audit.audit_item_decide(item_id=item.id, user=users["admin"], verdict="agree")
    page = client_as("supervisor").get(reverse("audit_item", args=[sample.id, item.id])).content.decode()
    assert "Verdict:" in page and 'id="decide-form"' not in page


def test_the_audit_home_lists_each_batch_with_its_audit_counts(client_as, sampled, users):
    batch, sample, item = sampled
    audit.audit_item_decide(item_id=item.id, user=users["supervisor"], verdict="disagree", note="x")
    page = client_as("supervisor").get(reverse("audit_home")).content.decode()
    assert reverse("audit_batch", args=[batch.id]) in page
    assert AuditItem.objects.filter(verdict="disagree").count() == 1
