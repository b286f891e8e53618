"""In a real browser: each demo role logs in and lands on its start page."""

from __future__ import annotations

import pytest

from tests.support.accounts import PASSWORD
from tests.support.browser import screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize(
    ("role", "path", "heading"),
    [("admin", "/batches/", "Batches"), ("reviewer", "/queue/", "Review queue"), ("supervisor", "/audit/", "Audit")],
)
def test_each_role_logs_in_and_lands_on_its_start_page(live_server, page, users, role, path, heading):
    page.goto(live_server.url + "/")
    assert "/login/" in page.url  # every page needs a login
    page.fill("input[name=username]", role)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(live_server.url + path)
    assert page.locator("h1").first.inner_text() == heading
    screenshot(page, f"start-page-{role}")
