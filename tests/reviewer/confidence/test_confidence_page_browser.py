"""In a real browser: field confidence where people decide — the desk's least sure fields, a suspicious pass
in the queue, and the confidence page where a supervisor reads calibration and audits per field and chooses
the suspicious-pass threshold."""

from __future__ import annotations

import pytest

from extraction.models import Document, FieldValue, Violation
from tests.support.dashboard_data import make_batch, make_doc
from tests.support.desk_browser import login, open_desk
from tests.support.desk_data import flagged_acta

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_desk_lists_the_least_sure_fields_and_a_click_shows_one_on_the_page(live_server, page, users):
    acta = flagged_acta(seed=71)
    FieldValue.objects.filter(extraction=acta.extraction, path="rows[3].votes").update(field_confidence=0.31)
    FieldValue.objects.filter(extraction=acta.extraction, path="null_votes").update(field_confidence=0.55)
    base = live_server.url
    login(page, base, "reviewer")
    open_desk(page, base, acta.document.id)
    listed = page.locator("#violations .least-sure a.unsure-field")
    assert listed.count() == 2 and "31% sure" in listed.first.inner_text()
    assert page.locator('#fields .cell.unsure a.field[data-path="rows[3].votes"]').is_visible()
    listed.first.click()
    page.wait_for_selector('#page-pane[data-field="rows[3].votes"]')
    assert "rows[" not in page.inner_text("#violations .least-sure")  # people's words, not paths


def test_a_suspicious_pass_waits_in_the_queue_under_its_own_rule(live_server, page, users):
    batch = make_batch("suspicious")
    doc = make_doc(batch, status="flagged", name="quiet.pdf")
    Violation.objects.create(extraction=doc.extractions.get(), code="suspicious_pass", fields=["null_votes"],
                             message="Every rule passes, but null votes is only 12% sure.")
    base = live_server.url
    login(page, base, "reviewer")
    page.goto(base + "/queue/")
    row = page.locator("tr", has_text="quiet.pdf")
    assert "Every rule passes, but a field is hardly trusted" in row.inner_text()


def test_a_supervisor_reads_calibration_and_audits_per_field_and_chooses_the_threshold(live_server, page, users):
    batch = make_batch()
    for k in range(3):
        doc = make_doc(batch, status="flagged", review_status="corrected" if k == 0 else "verified")
        for fv in FieldValue.objects.filter(extraction__document=doc):
            wrong = k == 0 and fv.path == "rows[1].votes"
            FieldValue.objects.filter(pk=fv.pk).update(field_confidence=0.2 if wrong else 0.97, signals={"x": 0},
                                                       corrected=wrong, value="fixed" if wrong else fv.value)
    passed = make_doc(batch)
    FieldValue.objects.filter(extraction__document=passed).update(field_confidence=0.97)
    base = live_server.url
    login(page, base, "supervisor")
    page.click("nav >> text=Confidence")
    page.wait_for_selector("#calibration svg")
    assert page.locator("[data-brier]").inner_text().startswith("0.0")
    votes = page.locator('#strata tr[data-kind="rows[].votes"]')
    assert votes.locator("td").nth(2).inner_text() == "1"  # one wrong count of votes, with its interval
    page.select_option("#strata select[name=width]", "0.05")
    page.click("#strata button[type=submit]")
    page.wait_for_selector('#strata tr[data-kind="acta_id"]')
    # three codes judged, none wrong: a 5-point interval needs many more
    assert int(page.locator('#strata tr[data-kind="acta_id"] [data-more]').inner_text()) > 20
    page.click("#suspicious button:has-text('Use 0.98')")
    page.wait_for_selector("[data-threshold]")
    assert "under 0.980" in page.inner_text("[data-threshold]")
    assert Document.objects.filter(pk=passed.pk).exists()
