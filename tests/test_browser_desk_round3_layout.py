"""In a real browser (issue 28): the audit item's verdict form is whole on a laptop, the desk gives a laptop's
room to the fields and the page, chart labels are not clipped, the "kept" tag is readable, no favicon 404."""

from __future__ import annotations

import pytest

from reviewer.audit.services import audit_sample_draw, sample_request
from reviewer.desk.presenters import fid
from tests.desk_browser import inside, login, open_desk, rect
from tests.desk_data import add_triage_rules, flagged_acta

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LAPTOP = {"width": 1280, "height": 720}


def _window(page) -> dict:
    size = page.viewport_size
    return {"x": 0, "y": 0, "width": size["width"], "height": size["height"]}


def _open_audit_item(page, base: str, users) -> None:
    acta = flagged_acta(seed=81, wrong_row=None)
    sample = audit_sample_draw(batch=acta.document.batch, user=users["supervisor"],
                               request=sample_request(count=1, seed=2))
    login(page, base, "supervisor")
    page.goto(f"{base}/audit/samples/{sample.id}/items/{sample.items.get().id}/")
    page.wait_for_selector("#decide-form")


@pytest.mark.parametrize("size", [LAPTOP, {"width": 1920, "height": 1080}], ids=["1280x720", "1920x1080"])
def test_a_supervisor_sees_the_whole_verdict_form_and_can_save_it_without_scrolling_a_hidden_region(
        live_server, page, users, size):
    page.set_viewport_size(size)
    _open_audit_item(page, live_server.url, users)
    window = _window(page)
    for selector in ('input[value="agree"]', 'input[value="disagree"]', "#decide-form textarea",
                     '#decide-form button[type=submit]'):
        assert page.locator(selector).is_visible(), selector
        assert inside(rect(page, selector), window), selector
        on_top = page.locator(selector).evaluate("""e => { const r = e.getBoundingClientRect();
            const hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
            return hit === e || e.contains(hit) || (e.labels && [...e.labels].some(l => l.contains(hit))); }""")
        assert on_top, selector  # not clipped away by a scrolling panel
    panel = page.locator("#audit-decision")
    assert panel.evaluate("p => p.scrollHeight <= p.clientHeight + 1")  # nothing of it hides in a scroll
    assert inside(rect(page, "#decide-form button[type=submit]"), rect(page, "#audit-decision"))
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page, options={"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a",
                                                                                 "wcag21aa"]}})
    assert [v["id"] for v in results.response["violations"]] == []
    page.check('input[value="disagree"]')
    page.fill("#decide-form textarea", "the total is misread")
    page.locator("#decide-form button[type=submit]").click(trial=True)  # actionable where it is, no scroll
    assert page.evaluate("window.scrollY") == 0


def test_on_a_laptop_the_desk_shows_ten_fields_beside_the_page_and_edit_buttons_keep_to_one_line(
        live_server, page, users):
    page.set_viewport_size(LAPTOP)
    acta = flagged_acta(seed=82)
    add_triage_rules(acta.extraction)
    base = live_server.url
    login(page, base)
    open_desk(page, base, acta.document.id)
    assert page.evaluate("window.scrollY") == 0
    fields = rect(page, "#fields")
    assert inside(fields, _window(page))
    # fields whose whole box shows in the pane without scrolling, counted by the row they sit on
    seen = page.evaluate("""() => {
        const pane = document.getElementById('fields').getBoundingClientRect(), rows = new Set();
        for (const a of document.querySelectorAll('#fields a.field')) {
            const r = a.getBoundingClientRect();
            if (r.height > 0 && r.top >= pane.top && r.bottom <= pane.bottom && r.left >= pane.left
                && r.right <= pane.right) rows.add(a.closest('tr, .field-row'));
        }
        return rows.size; }""")
    assert seen >= 10, seen
    pane, viewport = rect(page, "#page-pane"), rect(page, "#viewport")
    assert pane["x"] >= fields["x"] + fields["width"]  # beside, not below
    assert inside(viewport, _window(page)) and viewport["height"] >= 300
    # the rules are still there, folded or not, and open with one click on their heading
    assert "broken rule" in page.inner_text("#violations h2")
    path = "rows[0].votes"  # the narrowest column
    page.click(f"#{fid(path)} .edit-link", force=True)
    page.wait_for_selector(".edit-form input.edit-value")
    line = page.evaluate("""() => {
        const b = document.querySelector('.edit-form button[type=submit]');
        return parseFloat(getComputedStyle(b).lineHeight) || parseFloat(getComputedStyle(b).fontSize) * 1.45; }""")
    for selector in (".edit-form button[type=submit]", ".edit-form a.cancel"):
        content = page.locator(selector).evaluate("""e => { const r = document.createRange(); r.selectNodeContents(e);
            return r.getClientRects().length; }""")
        assert content == 1, (selector, content)  # one line box: "Save", not "Sav" over "e"
        height = page.locator(selector).evaluate("""e => { const s = getComputedStyle(e);
            return e.getBoundingClientRect().height - parseFloat(s.paddingTop) - parseFloat(s.paddingBottom)
                   - parseFloat(s.borderTopWidth) - parseFloat(s.borderBottomWidth); }""")
        assert height <= line * 1.2, (selector, height, line)


def test_the_rule_list_folds_away_without_script_and_opens_again(live_server, page, users):
    page.set_viewport_size(LAPTOP)
    acta = flagged_acta(seed=83)
    base = live_server.url
    login(page, base)
    open_desk(page, base, acta.document.id)
    fold = page.locator("details#rules-fold")
    fields_before = rect(page, "#fields")["height"]
    was_open = fold.evaluate("d => d.open")
    fold.locator("summary").first.click()
    assert fold.evaluate("d => d.open") != was_open
    if was_open:
        assert rect(page, "#fields")["height"] > fields_before  # folding gives its room to the fields
    fold.locator("summary").first.click()
    assert fold.evaluate("d => d.open") == was_open


@pytest.mark.parametrize("chart", ["reliability", "interval", "bar", "column"])
def test_every_chart_label_lies_inside_its_chart(page, chart):
    from reviewer import charts

    drawn = {
        "reliability": lambda: charts.reliability_chart([(0.9, 1.0, 12, 0.95, 0.9)], title="Reliability"),
        "interval": lambda: charts.interval_chart(estimate=0.04, low=0.01, high=0.12, title="False passes"),
        "bar": lambda: charts.bar_chart([("exhausted", 3), ("passed", 120)], title="Stops"),
        "column": lambda: charts.column_chart([("1", 4), ("2", 100)], title="Rounds", x_label="rounds"),
    }[chart]()
    page.set_content(f"<!doctype html><html><body>{drawn}</body></html>")
    clipped = page.evaluate("""() => {
        const out = [], svg = document.querySelector('svg.chart'), vb = svg.viewBox.baseVal;
        for (const t of svg.querySelectorAll('text')) {
            const b = t.getBBox();
            if (b.x < vb.x - 0.5 || b.y < vb.y - 0.5 || b.x + b.width > vb.x + vb.width + 0.5
                || b.y + b.height > vb.y + vb.height + 0.5) out.push(t.textContent);
        }
        return out; }""")
    assert clipped == []


def _contrast(page, selector: str) -> float:
    return page.locator(selector).first.evaluate("""e => {
        const rgb = c => c.match(/[\\d.]+/g).slice(0, 3).map(Number);
        const lum = c => { const [r, g, b] = rgb(c).map(v => { v /= 255;
            return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
            return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
        let bg = e, back = 'rgba(0, 0, 0, 0)';
        while (bg && (back === 'rgba(0, 0, 0, 0)' || back === 'transparent')) {
            back = getComputedStyle(bg).backgroundColor; bg = bg.parentElement; }
        const a = lum(getComputedStyle(e).color), b = lum(back);
        return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05); }""")


def test_the_kept_round_tag_in_history_is_readable(live_server, page, users):
    acta = flagged_acta(seed=84)
    base = live_server.url
    login(page, base)
    page.goto(f"{base}/documents/{acta.document.id}/history/")
    tag = page.locator(".round h3 .tag", has_text="kept")
    assert tag.count() == 1
    assert _contrast(page, ".round h3 .tag") >= 4.5


def test_a_first_page_load_asks_for_no_missing_file(browser, live_server, users):
    context = browser.new_context(viewport=LAPTOP)  # a fresh browser: nothing cached, the favicon included
    page = context.new_page()
    missing: list[str] = []
    page.on("response", lambda r: missing.append(r.url) if r.status == 404 else None)
    try:
        page.goto(live_server.url + "/login/")
        page.wait_for_load_state("networkidle")
        page.wait_for_timeout(500)
        icon = page.locator('link[rel="icon"]')
        assert icon.count() == 1
        assert page.request.get(live_server.url + icon.get_attribute("href")).status == 200
        assert missing == []
    finally:
        context.close()
