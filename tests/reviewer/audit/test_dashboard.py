"""The batch dashboard: every figure checked against a batch whose numbers are known by construction."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.urls import reverse

from extraction.doctypes.acta import DOCTYPE as ACTA
from reviewer.batches.selectors import batch_dashboard, field_family, truth_mismatches
from tests.support.dashboard_data import (
    acta_answer,
    counts_for,
    make_batch,
    make_doc,
    truth_of,
)

pytestmark = pytest.mark.django_db

ROLES = ["anonymous", "outsider", "reviewer", "supervisor", "admin"]
LOOP_FIX = [["row_digits_words_mismatch"], []]


@pytest.fixture
def known_batch():
    """10 documents:
    p1-p4 passed in round 1 (p1-p3 right against their truth, p4 wrong in row 1 and so in two totals);
    l1 passed after a second round; l2 the same, then flagged by an audit;
    f1 exhausted on sum_valid_votes (3 rounds; the model's answer was wrong, the reviewer corrected it);
    f2 stagnated on row_digits_words_mismatch (2 rounds); one failed without an extraction; one queued.
    Processing times 1..9 s; every run used 100 + 20 tokens and cost 0.01.
    """
    batch = make_batch("known")
    seconds = iter(range(1, 10))
    usage = {"tokens": (100, 20), "cost": "0.01"}
    right = [counts_for(s) for s in (11, 12, 13)]
    for c in right:
        make_doc(batch, counts=c, truth=truth_of(c), seconds=next(seconds), **usage)
    p4 = counts_for(14)
    off = list(p4)
    off[0] += 1
    make_doc(batch, name="p4.pdf", counts=p4, truth=truth_of(off), seconds=next(seconds), **usage)
    make_doc(batch, rounds=LOOP_FIX, seconds=next(seconds), **usage)
    make_doc(batch, rounds=LOOP_FIX, status="flagged", seconds=next(seconds), **usage)
    f1 = counts_for(15)
    misread = list(f1)
    misread[3] += 2
    make_doc(batch, status="flagged", review_status="corrected", rounds=[["sum_valid_votes"]] * 3, counts=f1,
             truth=truth_of(f1), model_answer=acta_answer(misread), seconds=next(seconds), **usage)
    make_doc(batch, status="flagged", rounds=[["row_digits_words_mismatch"]] * 2, stop_reason="stagnated",
             seconds=next(seconds), **usage)
    make_doc(batch, status="failed", extraction=False, seconds=next(seconds))
    make_doc(batch, status="queued", extraction=False, seconds=None)
    return batch


def test_documents_are_counted_by_state(known_batch):
    d = batch_dashboard(batch=known_batch)
    assert d["total"] == 10
    assert dict(d["by_status"]) == {"queued": 1, "processing": 0, "passed": 5, "flagged": 3, "failed": 1}
    assert dict(d["by_review"])["corrected"] == 1 and dict(d["by_review"])["unreviewed"] == 2


def test_first_round_and_after_the_loop_pass_rates_and_the_loops_gain(known_batch):
    d = batch_dashboard(batch=known_batch)
    assert d["finished"] == 8
    assert (d["first_round_pass"]["k"], d["first_round_pass"]["percent"]) == (4, 50.0)
    assert (d["loop_pass"]["k"], d["loop_pass"]["percent"]) == (6, 75.0)
    assert d["loop_gain"] == pytest.approx(25.0)
    assert round(d["loop_pass"]["low"], 1) == 40.9 and round(d["loop_pass"]["high"], 1) == 92.9  # Wilson 6/8


def test_rounds_stop_reasons_and_flagged_documents_by_rule(known_batch):
    d = batch_dashboard(batch=known_batch)
    assert d["rounds"] == [("1", 4), ("2", 3), ("3", 1)]
    assert dict(d["stop_reasons"]) == {"passed": 6, "stagnated": 1, "exhausted": 1, "error": 0}
    assert {code: n for code, _, n in d["flagged_by_rule"]} == {
        "sum_valid_votes": 1, "row_digits_words_mismatch": 1, "audit_disagree": 1}


def test_tokens_and_cost_per_document_and_per_batch(known_batch):
    d = batch_dashboard(batch=known_batch)
    assert d["tokens"] == {"prompt": 800, "completion": 160, "total": 960, "per_document_mean": 120,
                           "per_document_median": 120}
    assert d["cost"]["total"] == Decimal("0.08") and d["cost"]["per_document_mean"] == pytest.approx(0.01)


def test_median_and_p95_processing_time(known_batch):
    t = batch_dashboard(batch=known_batch)["time"]
    assert t["n"] == 9
    assert t["median"] == pytest.approx(5.0, abs=0.01)
    assert t["p95"] == pytest.approx(8.6, abs=0.01)  # 8 + 0.6 x (9 - 8), linear between closest ranks


def test_accuracy_against_the_truth_before_and_after_review_and_the_passed_but_wrong(known_batch):
    truth = batch_dashboard(batch=known_batch)["truth"]
    assert truth["documents"] == 5
    assert (truth["passed"]["documents"]["k"], truth["passed"]["documents"]["n"]) == (3, 4)
    assert (truth["passed"]["fields"]["k"], truth["passed"]["fields"]["n"]) == (4 * 41 - 3, 4 * 41)
    assert truth["passed_but_wrong"] == 1
    assert (truth["flagged_before"]["documents"]["k"], truth["flagged_before"]["documents"]["n"]) == (0, 1)
    assert truth["flagged_before"]["fields"]["k"] == 41 - 3  # row 4 and the two totals it feeds
    assert (truth["flagged_after"]["documents"]["k"], truth["flagged_after"]["documents"]["n"]) == (1, 1)


def test_a_batch_without_truth_or_documents_has_no_accuracy_and_no_rates():
    d = batch_dashboard(batch=make_batch("empty"))
    assert d["truth"] is None and d["finished"] == 0 and d["loop_gain"] is None
    assert d["time"]["median"] is None and d["rounds"] == []


def test_truth_mismatches_names_each_wrong_count_and_total():
    counts = counts_for(3)
    answer = acta_answer(counts)
    assert truth_mismatches(answer, truth_of(counts), doctype=ACTA) == []
    wrong = list(counts)
    wrong[7] += 1
    assert truth_mismatches(answer, truth_of(wrong), doctype=ACTA) == ["rows[7].votes", "valid_votes", "total_votes"]
    assert truth_mismatches({}, truth_of(counts), doctype=ACTA)[:2] == ["rows[0].votes", "rows[1].votes"]
    assert truth_mismatches(answer, None, doctype=ACTA) is None and truth_mismatches(
        answer, {"acta_id": "x"}, doctype=ACTA) is None
    short = {**answer, "rows": answer["rows"][:-1]}
    assert "rows[37].votes" in truth_mismatches(short, truth_of(counts), doctype=ACTA)


def test_field_families_group_rows():
    assert field_family("rows[12].votes_words") == "rows[].votes_words" and field_family("acta_id") == "acta_id"


# --- the page -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("role", ROLES)
def test_the_dashboard_is_for_admins_and_supervisors(client_as, known_batch, role):
    response = client_as(role).get(reverse("batch_dashboard", args=[known_batch.id]))
    if role == "anonymous":
        assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    else:
        assert response.status_code == (200 if role in ("admin", "supervisor") else 403)


def test_the_dashboard_page_shows_the_figures_and_server_drawn_charts(client_as, known_batch):
    page = client_as("supervisor").get(reverse("batch_dashboard", args=[known_batch.id])).content.decode()
    assert '<b data-passed-but-wrong>1</b>' in page
    assert "50.0 %" in page and "75.0 %" in page and '<b data-gain>25.0</b>' in page
    assert page.count("<svg") == 4 and "<script src=\"http" not in page  # no CDN
    assert "5.0 s" in page and "p95 8.6 s" in page
    assert reverse("batch_export_values_csv", args=[known_batch.id]) in page
    assert reverse("batch_rerun", args=[known_batch.id]) not in page  # re-run is for admins
    admin_page = client_as("admin").get(reverse("batch_dashboard", args=[known_batch.id])).content.decode()
    assert reverse("batch_rerun", args=[known_batch.id]) in admin_page


def test_the_rule_chart_and_the_audit_charts_do_not_mix_up(client_as, known_batch, users):
    from reviewer.audit import services as audit

    sample = audit.audit_sample_draw(batch=known_batch, user=users["supervisor"],
                                     request=audit.sample_request(count=1, seed=5))
    audit.audit_item_decide(item_id=sample.items.get().id, user=users["supervisor"], verdict="disagree",
                            note="wrong", wrong_fields=["null_votes"])
    page = client_as("admin").get(reverse("batch_dashboard", args=[known_batch.id])).content.decode()
    assert "<title>Party votes do not add up to the valid votes: 1</title>" in page  # flagged by rule
    assert "<title>A supervisor disagreed in an audit: 2</title>" in page
    assert "<title>Null votes: 1</title>" in page  # the audit's wrong fields, in words
    assert page.count("<svg") == 7


def test_rule_codes_are_escaped_in_the_charts_and_tables(client_as):
    batch = make_batch("hostile")
    make_doc(batch, status="flagged", rounds=[['<img src=x onerror="alert(1)">']])
    page = client_as("admin").get(reverse("batch_dashboard", args=[batch.id])).content.decode()
    assert "<img src=x" not in page and "&lt;img src=x" in page


def test_an_unknown_batch_is_not_found(client_as):
    assert client_as("admin").get(reverse("batch_dashboard", args=[424242])).status_code == 404


def test_real_actas_through_the_pipeline_are_scored_against_their_qr(client_as, tmp_path):
    from extraction.pipeline.ingest import IncomingFile, batch_create_from_files
    from extraction.pipeline.process import document_process
    from sheetgen.generate import generate_acta

    files = []
    for seed, errors in ((41, []), (42, ["sum_mismatch"])):
        path = tmp_path / f"acta-{seed}.pdf"
        path.write_bytes(generate_acta(seed=seed, errors=errors).pdf_bytes)
        files.append(IncomingFile(filename=path.name, path=path))
    batch = batch_create_from_files(name="real actas", doctype="acta", ocr_engine="pdf-text", files=files)
    outcomes = {d.filename: document_process(document_id=d.id) for d in batch.documents.all()}
    assert outcomes == {"acta-41.pdf": "passed", "acta-42.pdf": "flagged"}

    d = batch_dashboard(batch=batch)
    assert d["truth"]["documents"] == 2
    assert (d["truth"]["passed"]["documents"]["k"], d["truth"]["passed"]["documents"]["n"]) == (1, 1)
    assert d["truth"]["passed_but_wrong"] == 0
    assert (d["truth"]["flagged_before"]["documents"]["k"], d["truth"]["flagged_before"]["documents"]["n"]) == (0, 1)
    assert d["time"]["n"] == 2 and d["time"]["median"] > 0
    page = client_as("admin").get(reverse("batch_dashboard", args=[batch.id]))
    assert page.status_code == 200 and b"passed every rule" in page.content
