"""In a real browser, issue 28's figures: the dashboard's states come back to life when a re-run queues
documents after the batch had finished, an unsure cell shows one figure with its meaning in its title, and a
batch's rows keep the Textract input folded away on the rows it can help."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from extraction.models import Document, FieldValue
from tests.support.dashboard_data import make_batch, make_doc
from tests.support.desk_browser import login, open_desk

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_dashboards_states_follow_a_rerun_started_after_the_batch_had_finished(live_server, page, users):
    batch = make_batch("finished")
    doc = make_doc(batch, status="passed")
    make_doc(batch, status="passed")
    base = live_server.url
    login(page, base, "admin")
    page.goto(f"{base}/batches/{batch.id}/dashboard/")
    states = page.locator("section.panel", has=page.locator("h2", has_text="Documents by state"))
    expect(states).to_contain_text("passed: 2")
    expect(page.locator("#dashboard-live [role=status]")).to_have_count(0)

    Document.objects.filter(pk=doc.pk).update(status="queued")  # a re-run from another tab queues it again
    status = page.locator("#dashboard-live [role=status]")
    expect(status).to_contain_text("1 document queued or processing", timeout=25_000)
    expect(states).to_contain_text("queued: 1")
    expect(states).to_contain_text("passed: 1")

    Document.objects.filter(pk=doc.pk).update(status="flagged")  # and it finishes
    expect(page.locator("#dashboard-live [role=status]")).to_have_count(0, timeout=10_000)
    expect(states).to_contain_text("flagged: 1")
    expect(states).to_contain_text("queued: 0")


def test_an_unsure_cell_shows_how_sure_it_is_and_not_the_ocrs_100_percent_beside_it(live_server, page, users,
                                                                                      settings):
    settings.DESK_LOW_CONFIDENCE = 0.8
    doc = make_doc(make_batch("cells"), status="flagged")
    FieldValue.objects.filter(extraction__document=doc).update(confidence=1.0)
    FieldValue.objects.filter(extraction__document=doc, path="null_votes").update(field_confidence=0.01)
    base = live_server.url
    login(page, base, "reviewer")
    open_desk(page, base, doc.id)
    unsure = page.locator("#f-null-votes")
    expect(unsure).to_contain_text("1% sure")
    assert "100%" not in unsure.inner_text()
    sure = unsure.locator(".trust")
    assert "100% confidence: clear print, not a right value" in sure.get_attribute("title")
    other = page.locator("#f-valid-votes .conf")
    expect(other).to_have_text("OCR 100%")
    assert "not whether the value is right" in other.get_attribute("title")


def test_the_textract_input_waits_folded_on_a_failed_row_and_is_absent_from_a_passed_one(live_server, page, users):
    batch = make_batch("rows")
    passed = make_doc(batch, status="passed", name="fine.pdf")
    failed = make_doc(batch, status="failed", name="broken.pdf", extraction=False)
    base = live_server.url
    login(page, base, "admin")
    page.goto(f"{base}/batches/{batch.id}/")
    assert page.locator(f'tr[data-document="{passed.id}"] input[name=textract_json]').count() == 0
    row = page.locator(f'tr[data-document="{failed.id}"]')
    file_input = row.locator("input[name=textract_json]")
    expect(file_input).to_be_hidden()
    row.locator("summary").click()
    expect(file_input).to_be_visible()
