"""In a real browser: a supervisor draws a field sample, judges a field beside its proof on the page, and reads
that kind's wrong rate."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from extraction.models import Document
from reviewer.models import FieldAuditItem
from tests.support.desk_browser import login
from tests.support.desk_data import flagged_acta

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_supervisor_judges_sampled_fields_on_the_page_and_reads_each_kinds_rate(live_server, page, users):
    acta = flagged_acta(seed=58, wrong_row=None)
    batch = acta.document.batch
    base = live_server.url
    login(page, base, "supervisor")
    page.goto(f"{base}/audit/batches/{batch.id}/")
    form = page.locator("#field-sample-form")
    form.locator("input[name=per_stratum]").fill("1")
    form.locator("input[name=seed]").fill("5")
    form.locator("button[type=submit]").click()
    expect(page.locator("h1")).to_contain_text("Field sample")
    assert page.locator('#strata tr[data-kind="acta_id"]').count() == 1

    page.click("#judge-next")
    first = FieldAuditItem.objects.order_by("position").first()
    # the proof, drawn on the page beside the field (the desk redraws the boxes once it starts: wait for them)
    page.wait_for_function("""(path) => {
      const img = document.querySelector("img.page-image");
      const box = [...document.querySelectorAll("#page-pane .proof-box.on")].find(b => b.dataset.path === path);
      if (!img || !box) return false;
      const a = box.getBoundingClientRect(), b = img.getBoundingClientRect();
      return a.width > 0 && a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
    }""", arg=first.path)
    page.check("input[name=verdict][value=wrong]")
    page.fill("textarea[name=note]", "the sheet shows another number")
    page.click("#decide-form button[type=submit]")
    expect(page.locator("#decide-form")).to_be_visible()  # the next field, ready to judge
    assert FieldAuditItem.objects.get(pk=first.pk).verdict == "wrong"
    assert Document.objects.get(pk=acta.document.id).status == "flagged"  # it went to the reviewers

    page.goto(f"{base}/audit/field-samples/{first.sample_id}/")
    row = page.locator(f'#strata tr[data-kind="{first.kind}"]')
    expect(row.locator("[data-judged]")).to_have_text("1")
    expect(row.locator("[data-wrong]")).to_have_text("1")
    assert row.locator("[data-rate]").inner_text().startswith("100.0 % (")
