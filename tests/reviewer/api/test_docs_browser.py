"""In a real browser, the API's interactive docs render offline: every script and stylesheet comes from our own
static files (no CDN), and the strict Content-Security-Policy is kept without one violation."""

from __future__ import annotations

import pytest

from tests.support.desk_browser import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

COLLECT = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", function (e) {
  window.__csp.push(e.violatedDirective + " blocked " + (e.blockedURI || "inline") + " " + (e.sample || ""));
});
"""


def test_the_api_docs_render_from_our_own_files_within_the_policy(live_server, page, users):
    base = live_server.url
    requested: list[str] = []
    problems: list[str] = []
    page.context.add_init_script(COLLECT)
    page.on("request", lambda request: requested.append(request.url))
    page.on("pageerror", lambda err: problems.append(f"page error: {err}"))
    page.on("response", lambda r: problems.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None)
    login(page, base, "reviewer")
    page.goto(base + "/api/v1/docs")
    page.wait_for_selector("#swagger-ui .opblock", timeout=20000)  # the operations, read from openapi.json
    assert page.locator("#swagger-ui .opblock").count() >= 10
    assert page.evaluate("window.__csp || []") == []
    assert problems == []
    assert requested and all(url.startswith(base) or url.startswith("data:") for url in requested), requested
