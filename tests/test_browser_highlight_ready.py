"""In a real browser (issue 28, items 8 and 3): every proof box of the page shown is drawn before any click, a
click only shows one (it adds no element to the page and reads no layout), and the box of a typed value is
shown as the old proof, with the proof head saying who typed it."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from extraction.models import FieldValue
from tests.desk_browser import login, open_desk, select_field
from tests.desk_data import flagged_acta

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Installed in the page: counts, while the click's listeners run (from the first, a capture listener on the
# window, to the last, a bubble listener on the window), every call that makes the browser lay the page out,
# and every node added to the page's overlay.
WATCH = """() => {
  const watch = window.__watch = { inClick: false, reads: {}, added: 0 };
  const count = (name) => { if (watch.inClick) { watch.reads[name] = (watch.reads[name] || 0) + 1; } };
  const wrap = (proto, name) => {
    const d = Object.getOwnPropertyDescriptor(proto, name);
    if (!d) { return; }
    if (typeof d.value === "function") {
      const f = d.value;
      Object.defineProperty(proto, name, { ...d, value: function (...args) { count(name); return f.apply(this, args); } });
    } else {
      Object.defineProperty(proto, name, { ...d, get: function () { count(name); return d.get.call(this); },
                                           set: d.set && function (v) { count(name + "="); d.set.call(this, v); } });
    }
  };
  ["getBoundingClientRect", "getClientRects", "scrollIntoView", "clientWidth", "clientHeight", "clientTop",
   "clientLeft", "scrollTop", "scrollLeft", "scrollWidth", "scrollHeight", "getBBox", "getScreenCTM"]
    .forEach((name) => { wrap(Element.prototype, name); wrap(SVGGraphicsElement.prototype, name); });
  ["offsetWidth", "offsetHeight", "offsetTop", "offsetLeft", "innerText"]
    .forEach((name) => wrap(HTMLElement.prototype, name));
  const computed = window.getComputedStyle;
  window.getComputedStyle = function (...args) { count("getComputedStyle"); return computed.apply(this, args); };
  window.addEventListener("click", () => { watch.inClick = true; }, true);
  window.addEventListener("click", () => { watch.inClick = false; });
  new MutationObserver((records) => {
    records.forEach((r) => { watch.added += r.addedNodes.length; });
  }).observe(document.querySelector("#viewport"), { childList: true, subtree: true });
}"""


def _drawn(page, path: str) -> int:
    return page.locator(f'#page-stage svg .proof-box[data-path="{path}"]').count()


def _boxes_on_page(fv: FieldValue, number: int) -> int:
    return sum(1 for p in fv.proofs if int(p.get("page") or 1) == number and p.get("bbox"))


def test_every_proof_box_of_the_page_shown_is_drawn_before_any_click(live_server, page, users):
    acta = flagged_acta(seed=91, pages=2)
    login(page, live_server.url)
    open_desk(page, live_server.url, acta.document.id)
    shown = int(page.locator("#page-stage").get_attribute("data-page"))
    fields = [fv for fv in FieldValue.objects.filter(extraction=acta.extraction) if _boxes_on_page(fv, shown)]
    assert len(fields) > 10
    for fv in fields:
        assert _drawn(page, fv.path) == _boxes_on_page(fv, shown), fv.path
    # drawn, not shown: nothing is highlighted before a field is chosen
    assert page.locator("#page-pane .proof-box.on").count() == 0


def test_a_click_only_shows_a_box_that_was_already_drawn(live_server, page, users):
    acta = flagged_acta(seed=92)
    first, second = "rows[2].votes", "rows[6].votes_words"
    login(page, live_server.url)
    open_desk(page, live_server.url, acta.document.id)
    page.evaluate(WATCH)
    before = page.locator(f'#page-stage svg .proof-box[data-path="{first}"]').element_handle()
    page.click(f'#fields a.field[data-path="{first}"]')
    box = page.locator(f'#page-pane .proof-box.on[data-path="{first}"]')
    expect(box).to_have_count(1)
    expect(box).to_be_visible()
    assert box.element_handle().evaluate("(el, old) => el === old", before)  # the same element, now shown
    page.click(f'#fields a.field[data-path="{second}"]')
    expect(page.locator(f'#page-pane .proof-box.on[data-path="{second}"]').first).to_be_visible()
    expect(box).to_have_count(0)
    expect(page.locator(f'#page-stage svg .proof-box[data-path="{first}"]')).to_be_hidden()
    page.wait_for_timeout(100)  # the observer's records come after the click
    watch = page.evaluate("() => window.__watch")
    assert watch["added"] == 0, "a click added elements to the page"
    assert watch["reads"] == {}, f"a click's listeners made the browser lay the page out: {watch['reads']}"


def test_a_typed_value_shows_its_box_as_the_old_proof_and_says_who_typed_it(live_server, page, users, browser):
    acta = flagged_acta(seed=93)
    target = f"rows[{acta.wrong_row}].votes_words"
    base = live_server.url
    login(page, base)
    open_desk(page, base, acta.document.id)
    select_field(page, target)
    expect(page.locator(f'#page-pane .proof-box.on[data-path="{target}"]')).not_to_have_count(0)
    assert page.locator(f'#page-pane .proof-box.old[data-path="{target}"]').count() == 0
    page.keyboard.press("e")
    edit = page.locator(f'.edit-form[data-path="{target}"] input.edit-value')
    expect(edit).to_be_focused()
    page.keyboard.type(acta.true_words)
    page.keyboard.press("Enter")
    expect(page.locator(f'#fields a.field[data-path="{target}"] .value')).to_have_text(acta.true_words)
    select_field(page, target)
    old = page.locator(f'#page-pane .proof-box.on.old[data-path="{target}"]')
    expect(old).not_to_have_count(0)
    expect(old.first).to_be_visible()
    assert old.first.evaluate("el => getComputedStyle(el).strokeDasharray") not in ("", "none")
    head = page.locator("#proof-head")
    expect(head).to_contain_text("You typed this value")
    expect(head).to_contain_text("The box shows the old proof, where the value it replaced was read.")
    note = page.locator("#proof-head .proof-note.old")
    colours = note.evaluate("el => [getComputedStyle(el).color, getComputedStyle(el).backgroundColor]")
    assert _contrast(*colours) >= 4.5, colours  # WCAG AA for text of its size

    # another person opening the desk reads who typed it, and sees the same old box
    other = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
    login(other, base, "supervisor")
    open_desk(other, base, acta.document.id, f"?field={target}")
    expect(other.locator("#proof-head")).to_contain_text("Typed by reviewer; it was not taken from the page.")
    expect(other.locator(f'#page-pane .proof-box.on.old[data-path="{target}"]')).not_to_have_count(0)
    other.context.close()


def _contrast(fg: str, bg: str) -> float:
    def luminance(css: str) -> float:
        r, g, b = (int(float(x)) / 255 for x in css[css.index("(") + 1:css.index(")")].split(",")[:3])
        lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    hi, lo = sorted((luminance(fg), luminance(bg)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)
