"""In a real browser (issue 42): an admin fills a type's evaluation set from the documents people verified,
runs v2 against the live v1 while the page shows the workers' progress, reads the report (per-field accuracy,
false passes, needless reviews, each rule's precision and recall, v2 shown as worse), and makes v2 live only
after the comparison said so; the API gives the same report."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from extraction.doctypes.selectors import doctype_live_version
from extraction.doctypes.services import doctype_version_save
from extraction.models import DocTypeLive, EvaluationRun
from reviewer.api.services import token_create
from tests.support.desk_browser import login
from tests.support.till_receipts import read_and_confirmed, read_on_the_workers_path, reads_till_receipts, till_type

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_admin_sees_v2_let_a_wrong_total_pass_before_making_it_live(live_server, page, users, llm_env, tmp_path):
    llm_env.always(reads_till_receipts)
    read_and_confirmed(users, tmp_path)
    base = live_server.url
    login(page, base, "admin")
    page.click("nav >> text=Types")
    page.click("[aria-label='Evaluation set of Till receipt']")
    page.click("#evaluation-add button:has-text(\"Add the documents people verified\")")
    expect(page.locator("#evaluation-items h2")).to_have_text("In the set (2)")
    doctype_version_save(data=till_type(checks_the_sum=False), user=users["admin"])  # v2: the sum rule removed
    page.reload()

    page.select_option("#evaluation-run-form select[name=version]", "2")
    page.click("#evaluation-run-form button[type=submit]")
    expect(page.locator("#evaluation-progress")).to_contain_text("v2 0 of 2; v1 0 of 2")
    read_on_the_workers_path(EvaluationRun.objects.get(version=2))  # the workers read both runs meanwhile
    expect(page.locator("#evaluation-warnings")).to_contain_text(
        "v2 lets 1 document with a wrong value pass, where v1 lets 0.", timeout=10_000)
    expect(page.locator("#evaluation-progress")).to_have_count(0)

    outcomes = page.locator("#evaluation-outcomes tr.worse")
    expect(outcomes).to_have_count(1)
    expect(outcomes.locator("th")).to_contain_text("Passed but wrong (false pass)")
    expect(outcomes.locator("td")).to_have_text(["1", "0"])
    expect(page.locator("#evaluation-outcomes tr", has_text="Flagged and wrong (caught)").locator("td")).to_have_text(
        ["0", "1"])
    expect(page.locator("#evaluation-fields tr", has_text="Total").locator("td")).to_have_text(
        ["1 of 2 (50 %)", "1 of 2 (50 %)"])
    rule = page.locator("#evaluation-rules tr", has_text="Lines do not add up to the total")
    expect(rule.locator("td")).to_have_text(["—", "fired on 1; right 100 %; caught 100 %"])
    expect(page.locator("#evaluation-documents tr", has_text="second.pdf").locator("td")).to_have_text(
        ["Passed but wrong (false pass); wrong: Total", "Flagged and wrong (caught); wrong: Total"])

    run = EvaluationRun.objects.get(version=2)
    token = token_create(user=users["admin"], name="report").secret
    api = page.request.get(f"{base}/api/v1/evaluations/{run.id}", headers={"Authorization": f"Bearer {token}"}).json()
    assert [arm["outcomes"]["false_pass"] for arm in api["arms"]] == [1, 0] and api["warnings"]

    page.click("text=Make v2 live")
    expect(page.locator("#evaluation-warnings")).to_contain_text("v2 lets 1 document with a wrong value pass")
    assert doctype_live_version(name="till_receipt") == 1  # seeing the comparison changes nothing
    page.click("#make-live")
    expect(page.locator(".messages")).to_contain_text("v2 is live: batches uploaded from now on are read under it")
    assert doctype_live_version(name="till_receipt") == 2
    assert DocTypeLive.objects.latest("id").warnings == ["v2 lets 1 document with a wrong value pass, where v1 lets 0."]
