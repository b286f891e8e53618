"""The confidence page of a document type: calibration from judged fields, wrong rates per field kind with
Wilson intervals, the suspicious-pass threshold chosen from the curve, the judge against people, refits."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from extraction.models import ConfidenceModel, FieldValue, SuspiciousPassThreshold, Violation
from reviewer.confidence.calibration import calibration_summary, judge_agreement, threshold_curve_estimate
from reviewer.models import AuditItem, AuditSample
from tests.support.dashboard_data import make_batch, make_doc

pytestmark = pytest.mark.django_db


def _scored(doc, *, low: dict[str, float] | None = None, wrong: tuple[str, ...] = ()) -> None:
    """Give every field of the document's extraction a confidence (0.99 unless in `low`) and signals; the
    `wrong` ones were corrected by a reviewer."""
    low = low or {}
    for fv in FieldValue.objects.filter(extraction__document=doc):
        score = low.get(fv.path, 0.99)
        FieldValue.objects.filter(pk=fv.pk).update(
            field_confidence=score, signals={"ocr_doubt": 1 - score}, confidence_version=0,
            corrected=fv.path in wrong, value="fixed" if fv.path in wrong else fv.value)


def test_the_summary_measures_stored_confidence_against_what_reviewers_found():
    batch = make_batch()
    for k in range(4):
        doc = make_doc(batch, status="flagged", review_status="corrected" if k < 2 else "verified")
        _scored(doc, low={"rows[1].votes": 0.3}, wrong=("rows[1].votes",) if k < 2 else ())
    make_doc(batch)  # unreviewed: not a label
    summary = calibration_summary(doctype="acta", width=0.02)
    per_doc = FieldValue.objects.filter(extraction__document__batch=batch).count() // 5
    assert summary["fields"] == 4 * per_doc and summary["wrong"] == 2
    # two right fields share the wrong ones' 0.3: all but those pairs rank right
    assert 0.99 < summary["auroc"] < 1 and 0 < summary["brier"] < 0.1
    votes = next(s for s in summary["strata"] if s["kind"] == "rows[].votes")
    assert votes["wrong"] == 2 and votes["low"] < votes["rate"] < votes["high"]
    assert votes["more"] > 0 and votes["high"] - votes["low"] > 0.02


def test_an_audits_wrong_fields_are_labels_too():
    batch = make_batch()
    doc = make_doc(batch)
    _scored(doc)
    sample = AuditSample.objects.create(batch=batch, seed=1, requested_kind="count", requested_value=1,
                                        population=1, size=1)
    AuditItem.objects.create(sample=sample, document=doc, extraction=doc.extractions.get(),
                             verdict=AuditItem.Verdict.DISAGREE, note="wrong code", wrong_fields=["acta_id"])
    summary = calibration_summary(doctype="acta")
    assert summary["wrong"] == 1
    code = next(s for s in summary["strata"] if s["kind"] == "acta_id")
    assert (code["fields"], code["wrong"], code["from_audit"]) == (1, 1, 1)


def test_the_threshold_curve_trades_review_load_for_estimated_false_passes():
    batch = make_batch()
    sure, doubtful = make_doc(batch), make_doc(batch)
    _scored(sure)
    _scored(doubtful, low={"null_votes": 0.6})
    make_doc(batch, status="flagged", rounds=[["sum_valid_votes"]])
    curve = {p["threshold"]: p for p in threshold_curve_estimate(doctype="acta")}
    assert (curve[0.5]["routed"], curve[0.7]["routed"], curve[0.995]["routed"]) == (0, 1, 2)
    assert curve[0.7]["added_load"] == 1.0  # one more review on top of the one flagged document
    assert curve[0.5]["false_passes_left"] > curve[0.7]["false_passes_left"] > curve[0.995]["false_passes_left"] == 0


def test_a_pass_an_audit_found_right_adds_no_expected_wrong_pass_and_the_page_says_so_in_plain_figures(client_as):
    batch = make_batch()
    audited, unchecked, other = make_doc(batch), make_doc(batch), make_doc(batch)
    for doc in (audited, unchecked, other):
        _scored(doc, low={"null_votes": 0.6})
    make_doc(batch, status="flagged", rounds=[["sum_valid_votes"]])
    before = {p["threshold"]: p for p in threshold_curve_estimate(doctype="acta")}[0.5]
    sample = AuditSample.objects.create(batch=batch, seed=1, requested_kind="count", requested_value=1,
                                        population=3, size=1)
    AuditItem.objects.create(sample=sample, document=audited, extraction=audited.extractions.get(),
                             verdict=AuditItem.Verdict.AGREE)
    after = {p["threshold"]: p for p in threshold_curve_estimate(doctype="acta")}
    assert (before["unchecked_left"], after[0.5]["unchecked_left"]) == (3, 2)
    assert after[0.5]["false_passes_left"] == pytest.approx(before["false_passes_left"] * 2 / 3)
    assert after[0.5]["false_passes_left"] <= after[0.5]["unchecked_left"]
    html = client_as("supervisor").get(reverse("confidence_page", args=["acta"])).content.decode()
    rows = {m.group(1): m.group(2) for m in re.finditer(r'<tr><th scope="row">([\d.]+)</th>(.*?)</tr>', html, re.S)}
    assert re.search(r"<td data-left>about \d\.\d of 2</td>", rows["0.5"]), rows["0.5"]
    assert "<td data-routed>0 of 3</td>" in rows["0.5"] and "<td data-load>1</td>" in rows["0.5"]
    assert "<td data-routed>3 of 3</td>" in rows["0.7"] and "<td data-load>4 (1 now, +300 %)</td>" in rows["0.7"]
    assert "<td data-left>none: every pass left was checked</td>" in rows["0.7"]
    assert "extraction/" not in html and "documented prior" not in html

def test_the_judge_is_measured_against_reviewers_on_documents_whose_code_rules_passed():
    batch = make_batch("inv", doctype="invoice")
    accepted_right = make_doc(batch, review_status="verified")
    accepted_wrong = make_doc(batch, review_status="corrected")
    rejected_right = make_doc(batch, status="flagged", review_status="verified", stop_reason="stagnated")
    Violation.objects.create(extraction=rejected_right.extractions.get(), code="rubric:issuer_is_seller",
                             message="judge said no", fields=[])
    code_broken = make_doc(batch, status="flagged", review_status="verified", rounds=[["lines_subtotal"]])
    assert accepted_right and accepted_wrong and code_broken
    found = judge_agreement(doctype="invoice")
    assert (found["documents"], found["agree"], found["false_accepts"], found["false_rejects"]) == (3, 1, 1, 1)


def test_the_page_shows_calibration_strata_curve_and_the_judge_for_rubric_types(client_as):
    batch = make_batch()
    doc = make_doc(batch, status="flagged", review_status="corrected")
    _scored(doc, low={"rows[1].votes": 0.3}, wrong=("rows[1].votes",))
    html = client_as("supervisor").get(reverse("confidence_page", args=["acta"])).content.decode()
    assert "data-brier" in html and "<svg" in html and 'data-kind="rows[].votes"' in html
    assert "no pass is routed" in html and 'id="judge"' not in html and "data-prior" in html
    invoice = client_as("admin").get(reverse("confidence_page", args=["invoice"])).content.decode()
    assert 'id="judge"' in invoice and "data-no-labels" in invoice


@pytest.mark.parametrize("role,status", [("reviewer", 403), ("outsider", 403), ("supervisor", 200), ("admin", 200)])
def test_only_supervisors_and_admins_see_the_confidence_page(client_as, role, status):
    assert client_as(role).get(reverse("confidence_page", args=["acta"])).status_code == status
    response = client_as(role).post(reverse("confidence_threshold", args=["acta"]), {"threshold": "0.9"})
    assert response.status_code == (302 if status == 200 else status)


def test_an_unknown_document_type_is_a_404(client_as):
    assert client_as("admin").get(reverse("confidence_page", args=["nothing"])).status_code == 404


def test_a_supervisor_chooses_and_clears_the_threshold(client_as):
    client = client_as("supervisor")
    client.post(reverse("confidence_threshold", args=["acta"]), {"threshold": "0.95"})
    assert SuspiciousPassThreshold.objects.get(doctype="acta").threshold == 0.95
    assert "under 0.950" in client.get(reverse("confidence_page", args=["acta"])).content.decode()
    client.post(reverse("confidence_threshold", args=["acta"]), {"threshold": "7"})
    assert SuspiciousPassThreshold.objects.get(doctype="acta").threshold == 0.95
    client.post(reverse("confidence_threshold", args=["acta"]), {"threshold": ""})
    assert not SuspiciousPassThreshold.objects.exists()


def test_a_refit_from_the_page_is_shown_old_against_new_and_stored_only_when_confirmed(client_as):
    from reviewer.confidence.services import _held_back

    batch = make_batch()
    # Which documents are held back follows their ids, which the tests run before decide: make documents
    # until 10 corrected ones (20 wrong fields) are outside the held-back share, and one of each kind in it.
    seen = {(False, True): 0, (False, False): 0, (True, True): 0, (True, False): 0}
    k = 0
    while min(seen[False, True], seen[False, False]) < 10 or min(seen[True, True], seen[True, False]) < 1:
        corrected = bool(k % 2)
        doc = make_doc(batch, status="flagged", review_status="corrected" if corrected else "verified")
        _scored(doc, low={"rows[1].votes": 0.3, "rows[2].votes": 0.5},
                wrong=("rows[1].votes", "rows[2].votes") if corrected else ())
        seen[_held_back(doc.id), corrected] += 1
        k += 1
    client = client_as("supervisor")
    html = client.post(reverse("confidence_refit", args=["acta"])).content.decode()
    assert "data-refit" in html and "in use, v0" in html and "refit, v1" in html
    assert not ConfidenceModel.objects.exists()
    against = re.search(r'name="against" value="(\d+)"', html).group(1)
    client.post(reverse("confidence_refit", args=["acta"]), {"save": "1", "against": against, "note": "first"})
    row = ConfidenceModel.objects.get()
    assert (row.version, row.note) == (1, "first")
    html = client.get(reverse("confidence_page", args=["acta"])).content.decode()
    assert "v1 (in use)" in html


def test_a_refit_without_enough_labels_says_so(client_as):
    response = client_as("admin").post(reverse("confidence_refit", args=["acta"]), follow=True)
    assert "prior stays" in response.content.decode() and not ConfidenceModel.objects.exists()


def test_audited_passes_are_estimated_per_band_of_their_least_sure_field(client_as):
    from reviewer.confidence.calibration import audit_by_band

    batch = make_batch()
    sample = AuditSample.objects.create(batch=batch, seed=1, requested_kind="count", requested_value=3,
                                        population=3, size=3)
    for k, (score, verdict) in enumerate([(0.3, "disagree"), (0.3, "agree"), (0.995, "agree")]):
        doc = make_doc(batch)
        _scored(doc, low={"null_votes": score})
        AuditItem.objects.create(sample=sample, document=doc, extraction=doc.extractions.get(), position=k,
                                 verdict=verdict, note="wrong" if verdict == "disagree" else "")
    _scored(make_doc(batch), low={"null_votes": 0.95})  # passed, not audited
    bands = {b["low"]: b for b in audit_by_band(doctype="acta")}
    assert (bands[0.0]["passed"], bands[0.0]["audited"], bands[0.0]["wrong"], bands[0.0]["rate"]) == (2, 2, 1, 0.5)
    assert (bands[0.9]["passed"], bands[0.9]["audited"], bands[0.9]["rate"]) == (1, 0, None)
    assert (bands[0.99]["audited"], bands[0.99]["wrong"]) == (1, 0) and bands[0.99]["ci_high"] < 1
    html = client_as("supervisor").get(reverse("confidence_page", args=["acta"])).content.decode()
    assert 'id="bands"' in html and "0.500 (" in html
