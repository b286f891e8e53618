"""In a real browser (issue 42): an admin defines a utility bill from nothing with buttons and pickers only, a
comparison of two dates and a condition over amounts, tries it on a bill while the page shows the trial's
progress, saves version 1, changes a rule and saves version 2."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from extraction.models import DocTypeVersion, Document, Violation
from extraction.pipeline.process import document_process
from tests.support.desk_browser import login
from tests.support.utility_bills import bill_pdf, reads_bills

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FIELDS = [("Account number", "text"), ("Period start", "date"), ("Period end", "date"),
          ("Previous balance", "money"), ("New charges", "money"), ("Amount due", "money")]


def _insert(page, rule: int, label: str) -> None:
    page.select_option(f"#rule-{rule} select.insert-field", label=label)


def test_an_admin_defines_a_utility_bill_with_buttons_and_pickers_tries_it_and_saves_two_versions(
        live_server, page, users, llm_env, tmp_path):
    llm_env.always(reads_bills)
    sample = tmp_path / "bill.pdf"
    sample.write_bytes(bill_pdf(amount_due="60.00"))  # the amount due does not close: 10.00 + 40.00
    base = live_server.url
    login(page, base, "admin")
    page.click("nav >> text=Types")
    page.click("text=New type")
    page.fill("input[name=label]", "Utility bill")
    for i, (label, kind) in enumerate(FIELDS):
        if i:
            page.click("button[value=add-field]")
        page.fill(f"input[name=field-{i}-label]", label)
        page.select_option(f"select[name=field-{i}-kind]", kind)
    page.click("button[value=add-rule]")  # the rules' pickers now offer every field
    page.wait_for_selector("#rule-1")

    page.select_option("select[name=rule-0-kind]", "compare")
    page.fill("input[name=rule-0-label]", "The period ends after it begins")
    page.select_option("select[name=rule-0-field]", label="Period end")
    page.select_option("select[name=rule-0-operator]", ">")
    page.select_option("select[name=rule-0-other]", label="Period start")
    page.fill("input[name=rule-0-message]", "The period ends on {found}, not {expected}.")

    page.select_option("select[name=rule-1-kind]", "condition")
    page.fill("input[name=rule-1-label]", "The amount due is the balance plus the charges")
    _insert(page, 1, "Amount due")
    page.locator("#rule-1-expression").press_sequentially("= ")
    _insert(page, 1, "Previous balance")
    page.locator("#rule-1-expression").press_sequentially("+ ")
    _insert(page, 1, "New charges")
    assert page.input_value("#rule-1-expression").strip() == "amount_due = previous_balance + new_charges"
    page.fill("input[name=rule-1-message]", "The amount due is {found}, not {expected}.")

    page.set_input_files("input[name=sample]", str(sample))
    page.select_option("select[name=ocr_engine]", "pdf-text")
    page.click("#try-button")
    expect(page.locator("#trial-progress")).to_be_visible()  # the request only queued it
    document_process(document_id=Document.objects.get(batch__trial=True).id)  # a worker reads it meanwhile
    expect(page.locator("#trial-result h2")).to_contain_text("flagged", timeout=10_000)
    broken = Violation.objects.filter(extraction__document__batch__trial=True).values_list("message", flat=True)
    assert [m.split(". ")[0] for m in broken] == ["The amount due is 60, not equal to 50.00"]  # the bill's only mistake
    assert not DocTypeVersion.objects.exists()

    page.click("#save-button")
    page.wait_for_selector("#versions")
    v1 = DocTypeVersion.objects.get(name="utility_bill")
    assert [f["key"] for f in v1.definition["fields"]] == [
        "account_number", "period_start", "period_end", "previous_balance", "new_charges", "amount_due"]
    compare, condition = v1.definition["rules"]
    assert (compare["field"], compare["operator"], compare["other"]) == ("period_end", ">", "period_start")
    assert condition["expression"] == "amount_due = previous_balance + new_charges"

    page.select_option("select[name=rule-0-operator]", ">=")  # a period of one day is a period
    page.click("#save-button")
    page.wait_for_selector("#versions")
    versions = dict(DocTypeVersion.objects.filter(name="utility_bill").values_list("version", "definition"))
    assert sorted(versions) == [1, 2] and versions[2]["rules"][0]["operator"] == ">="
