"""In a real browser, every page of every role runs under the strict Content-Security-Policy without one
violation: no inline script or style, no eval (htmx included), and htmx swaps that keep to it."""

from __future__ import annotations

import pytest

from tests.support.desk_browser import login
from tests.support.url_matrix import ALLOWED, POST_ONLY, url_for, url_names

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Downloads and images are not pages: the browser saves or shows them, no policy applies to run.
NOT_PAGES = {"desk_page_image", "desk_page_annotated", "batch_export_values_csv", "batch_export_values_json",
             "batch_export_events_csv", "batch_export_events_json", "doctype_export", "evaluation_run_csv"}
COLLECT = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", function (e) {
  window.__csp.push(e.violatedDirective + " blocked " + (e.blockedURI || "inline") + " " + (e.sample || ""));
});
"""


def _watch(page) -> list[str]:
    """Console errors, script errors and failed requests (a missing script or stylesheet among them)."""
    problems: list[str] = []

    def on_console(msg) -> None:
        if msg.type == "error" and not msg.text.startswith("Failed to load resource"):  # seen by on_response
            problems.append(f"console: {msg.text}")

    def on_response(response) -> None:
        if response.status >= 400 and not response.url.endswith("/favicon.ico"):
            problems.append(f"HTTP {response.status}: {response.url}")

    page.context.add_init_script(COLLECT)
    page.on("console", on_console)
    page.on("pageerror", lambda err: problems.append(f"page error: {err}"))
    page.on("response", on_response)
    return problems


def _violations(page) -> list[str]:
    return page.evaluate("window.__csp || []")


@pytest.mark.parametrize("role", ["admin", "reviewer", "supervisor"])
def test_every_page_of_every_role_keeps_to_the_content_security_policy(live_server, page, users, world, role):  # noqa: F811
    base = live_server.url
    problems = _watch(page)
    response = page.goto(base + "/login/")
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "style-src 'self'" in policy
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    assert not _violations(page), _violations(page)
    login(page, base, role)
    page.wait_for_load_state("networkidle")

    visited = []
    for name, params in url_names():
        if name not in ALLOWED or role not in ALLOWED[name] or name in POST_ONLY or name in NOT_PAGES:
            continue
        url = base + url_for(name, params, world)
        response = page.goto(url)
        page.wait_for_load_state("networkidle")
        assert response.status < 400, (name, response.status)
        assert "private" in response.headers.get("cache-control", ""), name
        assert _violations(page) == [], (name, _violations(page))
        visited.append(name)
    assert len(visited) >= 6, visited

    # The desk's scripts at work: show a proof (its boxes drawn by desk.js), open and cancel an edit (htmx).
    flagged = world["flagged"]
    page.goto(f"{base}/documents/{flagged.id}/")
    field = page.locator("#fields a.field").first
    path = field.get_attribute("data-path")
    field.click()
    page.wait_for_selector(f'#page-pane[data-field="{path}"]')
    box = page.locator("#page-pane .proof-box.on").first
    if box.count():
        drawn = box.bounding_box()
        assert drawn and drawn["width"] > 0 and drawn["height"] > 0, drawn
    if role in ("admin", "reviewer"):
        page.locator("#fields .edit-link").first.click()
        page.wait_for_selector("#fields .edit-form")
        page.locator("#fields .edit-form .cancel").click()
        page.wait_for_selector("#fields .edit-form", state="detached")
    page.wait_for_load_state("networkidle")
    assert _violations(page) == []
    assert problems == [], problems

    # The watch itself works: an inline style the policy forbids is reported.
    page.evaluate("document.body.insertAdjacentHTML('beforeend', '<div style=\"color: red\">x</div>')")
    page.wait_for_function("window.__csp.length > 0")
    assert "style-src" in _violations(page)[0]


def test_stepping_back_to_a_page_already_seen_applies_no_inline_style(live_server, page, users):
    from tests.support.desk_browser import open_desk
    from tests.support.desk_data import flagged_acta

    acta = flagged_acta(seed=64, pages=3)
    problems = _watch(page)
    login(page, live_server.url)
    open_desk(page, live_server.url, acta.document.id)
    page.wait_for_load_state("networkidle")  # the other pages prefetched, page 1 laid out by the viewer
    page.wait_for_timeout(300)
    for number in ("2", "1", "2", "1"):
        page.click(f'nav.thumbs a.thumb[data-page="{number}"]')
        page.wait_for_selector(f'#page-stage[data-page="{number}"]')
    page.wait_for_load_state("networkidle")
    assert _violations(page) == [], _violations(page)
    assert problems == [], problems
