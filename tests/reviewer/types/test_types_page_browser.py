"""In a real browser: an admin defines a type from nothing, tries it on a receipt, saves it and uploads a batch
under it; a reviewer then sees the flagged receipt with the sentence the admin wrote for the broken rule."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from extraction.models import Batch, DocTypeVersion, Document
from extraction.pipeline.process import document_process
from tests.support.desk_browser import login
from tests.support.receipts import OLD_RULE, reads_receipts, receipt

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_admin_defines_a_type_tries_it_saves_it_and_a_reviewer_reads_its_rule(live_server, page, browser, users,
                                                                                 llm_env, tmp_path):
    llm_env.always(reads_receipts)
    old, new = tmp_path / "old.pdf", tmp_path / "new.pdf"
    old.write_bytes(receipt("02/03/2019"))
    new.write_bytes(receipt("06/05/2024"))
    base = live_server.url
    login(page, base, "admin")
    page.click("nav >> text=Types")
    page.click("text=New type")
    page.fill("input[name=name]", "shop_receipt")
    page.fill("input[name=label]", "Shop receipt")
    page.fill("textarea[name=instructions]", "You read shop receipts.")
    for i, (key, label, kind) in enumerate([("company", "Company", "text"), ("date", "Date", "date"),
                                            ("total", "Total", "money")]):
        if i:
            page.click("button[value=add-field]")  # a row more, in place
        page.fill(f"input[name=field-{i}-key]", key)
        page.fill(f"input[name=field-{i}-label]", label)
        page.select_option(f"select[name=field-{i}-kind]", kind)
        page.check(f"input[name=field-{i}-required]")
    page.click("button[value=preview]")  # the fields come back as the rules' choices
    page.fill("input[name=rule-0-code]", "policy_date")
    page.fill("input[name=rule-0-label]", "Older than the policy allows")
    page.select_option("select[name=rule-0-kind]", "date_range")
    page.select_option("select[name=rule-0-field]", "date")
    page.fill("input[name=rule-0-after]", "2020-01-01")
    page.fill("input[name=rule-0-message]", OLD_RULE)

    page.click("button[value=preview]")
    assert "- date: Date. (as YYYY-MM-DD; required)" in page.inner_text("#preview-prompt")

    page.set_input_files("input[name=sample]", str(old))
    page.select_option("select[name=ocr_engine]", "pdf-text")
    page.click("#try-button")
    page.wait_for_selector("#trial-progress")  # the request only queued it; the page follows its progress
    trial = Document.objects.get(batch__trial=True)
    document_process(document_id=trial.id)  # a worker reads it meanwhile
    page.wait_for_selector("#trial-result", timeout=10_000)
    assert "flagged" in page.inner_text("#trial-result h2")
    assert not DocTypeVersion.objects.exists()
    page.click("#trial-desk")
    page.wait_for_selector("#fields a.field")
    assert "Receipts from before 2020 are outside the policy (this one is dated 2019-03-02)." in page.inner_text("main")
    page.go_back()
    page.wait_for_selector("#doctype-form")
    assert page.input_value("input[name=rule-0-message]") == OLD_RULE  # the draft is still there

    page.click("#save-button")
    page.wait_for_selector("#versions")
    assert list(DocTypeVersion.objects.values_list("name", "version")) == [("shop_receipt", 1)]

    page.goto(f"{base}/batches/new/")
    page.fill("input[name=name]", "April receipts")
    page.select_option("select[name=doctype]", "shop_receipt")
    page.select_option("select[name=ocr_engine]", "pdf-text")
    page.set_input_files("input[name=files]", [str(old), str(new)])
    page.click("main form button[type=submit]")
    page.wait_for_load_state()
    batch = Batch.objects.get(name="April receipts")
    assert (batch.doctype, batch.doctype_version, batch.trial) == ("shop_receipt", 1, False)
    for document in batch.documents.all():  # a worker reads them meanwhile
        document_process(document_id=document.id)
    flagged = Document.objects.get(batch=batch, filename="old.pdf")
    assert flagged.status == "flagged" and Document.objects.get(batch=batch, filename="new.pdf").status == "passed"

    reviewer = browser.new_page()
    login(reviewer, base, "reviewer")
    reviewer.goto(f"{base}/queue/")
    reviewer.click(f"text={flagged.filename}")
    reviewer.wait_for_selector("#fields a.field")
    assert ("Receipts from before 2020 are outside the policy (this one is dated 2019-03-02)."
            in reviewer.inner_text("main"))
    reviewer.close()


def test_a_rule_asks_only_for_what_its_kind_reads_and_rows_come_and_go_without_a_reload(live_server, page, users):
    base = live_server.url
    login(page, base, "admin")
    page.goto(base + "/types/new/")
    page.fill("input[name=name]", "utility_bill")
    page.fill("input[name=label]", "Utility bill")
    page.fill("input[name=field-0-label]", "Period start")
    page.select_option("select[name=field-0-kind]", "date")
    page.evaluate("window.kept = 1")  # gone if the page were loaded again
    page.click("button[value=add-field]")
    page.fill("input[name=field-1-label]", "Period end")
    page.select_option("select[name=field-1-kind]", "date")
    page.click("button[value=add-rule]")  # the blank rule and one more, both offered the two dates
    page.wait_for_selector("#rule-1")
    assert page.evaluate("window.kept") == 1
    assert page.input_value("input[name=field-0-label]") == "Period start"
    rule = page.locator("#rule-0")
    page.select_option("select[name=rule-0-kind]", "compare")
    assert rule.locator("label[data-param=other]").is_visible()
    assert not rule.locator("label[data-param=pattern]").is_visible()
    assert not rule.locator("label[data-param=not_future]").is_visible()
    assert "compared with another field" in rule.locator(".kind-explains").inner_text()
    assert rule.locator("select[name=rule-0-other] option").all_inner_texts() == ["—", "Period start", "Period end"]
    page.select_option("select[name=rule-0-kind]", "pattern")
    assert rule.locator("label[data-param=pattern]").is_visible()
    assert not rule.locator("label[data-param=other]").is_visible()
    page.click("button[aria-label='Remove field 2']")
    expect(page.locator("input[name=field-1-label]")).to_have_count(0)
    assert page.input_value("input[name=field-0-label]") == "Period start" and page.evaluate("window.kept") == 1
