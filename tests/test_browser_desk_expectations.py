"""In a real browser: what reviewers expect of a validation screen, one test each — people's words, the triage
of broken rules, the page viewer, the two-way page, the keyboard, presence, the audit item in two panes."""

from __future__ import annotations

import csv
import io

import pytest
from playwright.sync_api import expect

from extraction.models import Block, Document, FieldValue, ReviewEvent, Violation
from reviewer.audit.services import audit_sample_draw, sample_request
from reviewer.desk import services as review
from reviewer.desk.presenters import fid
from tests.desk_browser import inside, login, open_desk, rect, select_field
from tests.desk_data import add_triage_rules, flagged_acta

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ON = "#page-pane .proof-box.on"


def wait_for(read, seconds: float = 8.0):
    """What `read` returns once it is truthy (the browser's request ends on the server)."""
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = read()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError("nothing came in time")


def zoom(page) -> int:
    return int(page.locator("#zoom-level").inner_text().rstrip("%"))


# --- people's words ----------------------------------------------------------------------------------


def test_fields_are_named_by_their_labels_on_the_desk_in_history_and_in_exports(live_server, page, users):
    acta = flagged_acta(seed=61)
    path = f"rows[{acta.wrong_row}].votes_words"
    review.field_edit(document_id=acta.document.id, user=users["admin"], path=path, raw_value=acta.true_words,
                      expected_version=acta.document.version)
    review.document_release(document_id=acta.document.id, user=users["admin"])
    Violation.objects.create(extraction=acta.extraction, code="value_grounded", fields=["rows[28].votes_words"],
                             message='rows[28].votes_words: the answer says "UNO" but the cited text reads "DOS"')
    party = acta.extraction.answer["rows"][acta.wrong_row]["party"]
    base = live_server.url
    login(page, base, "admin")
    open_desk(page, base, acta.document.id)
    select_field(page, "rows[0].votes_words")
    assert "Proof of PSUV — NICOLAS MADURO: votes in words" in page.inner_text("#proof-head")
    assert "rows[" not in page.inner_text("main")
    assert "MIN — ANTONIO ECARRI: votes in words: the answer says" in page.inner_text("#violations")
    page.goto(f"{base}/documents/{acta.document.id}/history/")
    assert "rows[" not in page.inner_text("main") and f"{party} — " in page.inner_text("table.events")
    response = page.request.get(f"{base}/batches/{acta.document.batch_id}/export/values.csv")
    rows = list(csv.DictReader(io.StringIO(response.text())))
    row = next(r for r in rows if r["field"] == "rows[0].votes_words")
    assert row["label"] == "PSUV — NICOLAS MADURO: votes in words"  # the path stays, in its own column
    events = list(csv.DictReader(io.StringIO(page.request.get(
        f"{base}/batches/{acta.document.batch_id}/export/audit-log.csv").text())))
    edit = next(e for e in events if e["kind"] == "edit")
    assert edit["field"] == path and edit["label"].endswith(": votes in words")


# --- triage ------------------------------------------------------------------------------------------


def test_broken_rules_are_grouped_by_rule_most_specific_first_with_counts_and_jump_to_their_field(
        live_server, page, users):
    acta = flagged_acta(seed=62)
    add_triage_rules(acta.extraction)
    base = live_server.url
    login(page, base)
    open_desk(page, base, acta.document.id)
    groups = page.locator("#violations details.rule-group")
    codes = [groups.nth(i).get_attribute("data-code") for i in range(groups.count())]
    assert codes[0] == "value_grounded" and codes[-1] == "sum_valid_votes"  # a sum over 39 fields says least
    first = groups.first
    assert first.locator(".count").inner_text() == "3" and "votes in words ×3" in first.inner_text()
    assert page.locator("#violations h2").inner_text() == "5 broken rules"
    last = groups.last
    was_open = last.evaluate("d => d.open")
    last.locator("summary").click()
    assert last.evaluate("d => d.open") != was_open  # collapsible
    first.locator("a.rule").nth(2).click()  # rows[33]: far down the fields
    page.wait_for_selector(ON)
    target = page.locator('#fields a.field[data-path="rows[33].votes_words"]')
    assert "involved" in target.get_attribute("class") and "current" in target.get_attribute("class")
    assert inside(target.bounding_box(), rect(page, "#fields"))


# --- the page viewer ---------------------------------------------------------------------------------


def test_the_page_viewer_fits_zooms_pans_rotates_and_pages(live_server, page, users):
    acta = flagged_acta(seed=63, pages=3)
    base = live_server.url
    login(page, base)
    open_desk(page, base, acta.document.id)
    viewport = rect(page, "#viewport")
    page.click('[data-view="fit-width"]')
    frame = rect(page, ".page-frame")
    assert frame["width"] == pytest.approx(viewport["width"] - 24, abs=12)
    page.click('[data-view="fit-page"]')
    frame = rect(page, ".page-frame")
    assert frame["height"] <= viewport["height"] and frame["width"] < viewport["width"] - 24
    fit = zoom(page)
    page.mouse.move(viewport["x"] + 200, viewport["y"] + 150)
    page.keyboard.down("Control")
    page.mouse.wheel(0, -300)
    page.keyboard.up("Control")
    page.wait_for_timeout(100)
    assert zoom(page) > fit * 1.3 and page.evaluate("window.scrollY") == 0
    before = page.evaluate("() => { const v = document.getElementById('viewport'); return [v.scrollLeft, v.scrollTop]; }")
    page.mouse.move(viewport["x"] + 300, viewport["y"] + 300)
    page.mouse.down()
    page.mouse.move(viewport["x"] + 200, viewport["y"] + 180, steps=5)
    page.mouse.up()
    after = page.evaluate("() => { const v = document.getElementById('viewport'); return [v.scrollLeft, v.scrollTop]; }")
    assert after[0] > before[0] and after[1] > before[1]  # dragged left and up: the page moved with the hand
    page.click('[data-view="fit-width"]')
    upright = rect(page, ".page-frame")
    page.click('[data-view="rotate"]')
    turned = rect(page, ".page-frame")
    assert upright["height"] > upright["width"] and turned["width"] > turned["height"]  # a quarter turn
    assert turned["width"] / turned["height"] == pytest.approx(upright["height"] / upright["width"], rel=0.02)
    page.click('[data-view="rotate"]')
    page.click('[data-view="rotate"]')
    page.click('[data-view="rotate"]')  # upright again
    assert page.locator("nav.thumbs a.thumb").count() == 3
    page.click('nav.thumbs a.thumb[data-page="2"]')
    page.wait_for_selector('#page-stage[data-page="2"]')
    assert "/pages/2/image/" in page.locator("#page-stage img.page-image").get_attribute("src")
    assert "current" in page.locator('nav.thumbs a.thumb[data-page="2"]').get_attribute("class")
    select_field(page, "acta_id")  # its proof is on page 1: the viewer goes there
    page.wait_for_selector('#page-stage[data-page="1"]')
    page.wait_for_selector(ON)


# --- the two-way page --------------------------------------------------------------------------------


def _word(acta, page_number: int, text: str) -> Block:
    return Block.objects.filter(document=acta.document, page__number=page_number, type="WORD", text=text).first()


def _click_block(page, block: Block) -> None:
    page.locator(f'#page-stage svg rect[data-b="{block.pk}"]').click(force=True)


def test_clicking_a_word_sets_the_selected_fields_value_and_proof_and_the_rules_run_again(live_server, page, users):
    acta = flagged_acta(seed=64)
    base = live_server.url
    login(page, base)
    open_desk(page, base, acta.document.id)
    target = "rows[0].votes"
    before = FieldValue.objects.get(extraction=acta.extraction, path=target).value
    other = acta.extraction.answer["rows"][1]
    word = _word(acta, 1, str(other["votes"]["value"]).zfill(4))
    assert other["votes"]["value"] != before and word is not None
    select_field(page, target)
    _click_block(page, word)
    page.wait_for_function(f"() => document.querySelector('#fields a.field[data-path=\"{target}\"] .value')"
                           f".textContent.trim() === '{other['votes']['value']}'")
    fv = FieldValue.objects.get(extraction=acta.extraction, path=target)
    assert fv.value == other["votes"]["value"] and [p["block_id"] for p in fv.proofs] == [str(word.pk)]
    event = ReviewEvent.objects.get(document=acta.document, kind="edit", field=target)
    assert (event.before, event.after) == (before, other["votes"]["value"])
    assert event.proof_after[0]["block_id"] == str(word.pk) and event.proof_before and event.proof_before != event.proof_after
    assert "PSUV — NICOLAS MADURO: votes" in page.inner_text("#violations")  # digits and words now disagree
    shown = page.locator(f'#page-stage svg rect[data-b="{word.pk}"]').bounding_box()

    def on_the_word():  # the desk redraws the highlight once the swapped cell settles, a moment after its value
        box = page.locator(f'{ON}[data-path="{target}"]').bounding_box()
        return box is not None and box == pytest.approx(shown, abs=2.5)  # its outline is 2 px

    assert wait_for(on_the_word)  # the highlight moved onto the word


def test_dragging_a_box_takes_every_word_in_it(live_server, page, users):
    acta = flagged_acta(seed=65)
    line = Block.objects.filter(document=acta.document, type="LINE", text__startswith="PCV").get()
    words = list(Block.objects.filter(parent=line, type="WORD").order_by("order"))[2:]  # the digit words
    base = live_server.url
    login(page, base)
    open_desk(page, base, acta.document.id)
    select_field(page, "rows[0].votes_words")
    first = page.locator(f'#page-stage svg rect[data-b="{words[0].pk}"]').bounding_box()
    last = page.locator(f'#page-stage svg rect[data-b="{words[-1].pk}"]').bounding_box()
    page.keyboard.down("Shift")
    page.mouse.move(first["x"] - 3, first["y"] - 3)
    page.mouse.down()
    page.mouse.move(last["x"] + last["width"] + 3, last["y"] + last["height"] + 3, steps=6)
    page.mouse.up()
    page.keyboard.up("Shift")
    expected = " ".join(w.text for w in words)
    page.wait_for_function("() => document.querySelector('#fields a.field[data-path=\"rows[0].votes_words\"] .value')"
                           f".textContent.trim() === '{expected}'")
    fv = FieldValue.objects.get(extraction=acta.extraction, path="rows[0].votes_words")
    assert [p["block_id"] for p in fv.proofs] == [str(w.pk) for w in words]


def test_a_proof_can_be_moved_without_changing_the_value(live_server, page, users):
    acta = flagged_acta(seed=66)
    line = Block.objects.filter(document=acta.document, type="LINE", text__startswith="TUPAMARO").get()
    target = "rows[2].votes"
    value = FieldValue.objects.get(extraction=acta.extraction, path=target).value
    base = live_server.url
    login(page, base)
    open_desk(page, base, acta.document.id)
    select_field(page, target)
    page.keyboard.press("m")
    assert page.locator("input[name=pick-mode][value=proof]").is_checked()
    page.locator(f'#page-stage svg rect.l[data-b="{line.pk}"]').dispatch_event("click")  # the whole line
    event = wait_for(lambda: ReviewEvent.objects.filter(document=acta.document, kind="proof", field=target).first())
    fv = FieldValue.objects.get(extraction=acta.extraction, path=target)
    assert fv.value == value == event.before == event.after and fv.corrected
    assert len(event.proof_after) == 1 and event.proof_after != event.proof_before


# --- the keyboard ------------------------------------------------------------------------------------


def test_the_keyboard_shows_every_shortcut_verifies_and_opens_the_next_and_never_fires_while_typing(
        live_server, page, users):
    first = flagged_acta(seed=67, wrong_row=None)
    Document.objects.filter(pk=first.document.id).update(status="flagged")
    second = flagged_acta(seed=68, batch=first.document.batch)
    base = live_server.url
    login(page, base)
    open_desk(page, base, first.document.id)
    assert page.locator(".keys-hint").is_visible() and page.locator("#verify-button kbd").inner_text() == "v"
    page.keyboard.press("?")
    dialog = page.locator("dialog#shortcuts")
    assert dialog.is_visible()
    listed = dialog.inner_text()
    for words in ("next / previous field", "verify and open the next document", "zoom in", "rotate", "Shift + drag",
                  "this list"):
        assert words in listed
    page.keyboard.press("Escape")
    assert not dialog.is_visible()
    # typing in a box fires nothing
    page.click("details.reject summary")
    page.fill("input[name=reason]", "")
    page.locator("input[name=reason]").press_sequentially("vn?j")
    assert page.locator("input[name=reason]").input_value() == "vn?j" and not dialog.is_visible()
    assert page.url.endswith(f"/documents/{first.document.id}/")
    page.click("details.reject summary")
    page.locator('#fields a.field[data-path="acta_id"]').focus()
    outline = page.evaluate("() => { const s = getComputedStyle(document.activeElement); "
                            "return [s.outlineStyle, parseFloat(s.outlineWidth)]; }")
    assert outline[0] != "none" and outline[1] >= 2  # focus is visible
    page.keyboard.press("v")  # every rule passes: verified at once, and the next document opens
    page.wait_for_url(f"{base}/documents/{second.document.id}/")
    assert Document.objects.get(pk=first.document.id).review_status == "verified"
    assert Document.objects.get(pk=second.document.id).claimed_by == users["reviewer"]


def test_the_desk_passes_an_automated_wcag_2_1_aa_check(live_server, page, users):
    from axe_playwright_python.sync_playwright import Axe

    acta = flagged_acta(seed=69, pages=2)
    base = live_server.url
    login(page, base)
    open_desk(page, base, acta.document.id)
    select_field(page, f"rows[{acta.wrong_row}].votes")
    results = Axe().run(page, options={"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a",
                                                                                 "wcag21aa"]}})
    problems = [(v["id"], v["help"], [n["target"] for n in v["nodes"]][:3]) for v in results.response["violations"]]
    assert problems == []


# --- presence ----------------------------------------------------------------------------------------


def test_each_reviewer_sees_who_else_has_the_document_open_and_a_stale_page_is_told(live_server, browser, page,
                                                                                     users, settings):
    settings.DESK_POLL_SECONDS = 1
    acta = flagged_acta(seed=70)
    base = live_server.url
    login(page, base)
    open_desk(page, base, acta.document.id)
    other_context = browser.new_context(viewport={"width": 1400, "height": 900})
    other = other_context.new_page()
    try:
        login(other, base, "admin")
        open_desk(other, base, acta.document.id)
        page.wait_for_selector("#presence :text('admin')", timeout=6_000)
        other.wait_for_selector("#presence :text('reviewer')", timeout=6_000)
        # the admin corrects a value; the reviewer's open page is told, and what it sends changes nothing
        path = "rows[0].votes_words"
        # a value the field does not hold already (typing the same one changes nothing)
        typed = next(v for v in ("CERO CERO CERO CERO", "CERO CERO CERO UNO")
                     if v != FieldValue.objects.get(extraction=acta.extraction, path=path).value)
        other.click(f"#{fid(path)} .edit-link", force=True)
        other.fill(".edit-form input.edit-value", typed)
        other.press(".edit-form input.edit-value", "Enter")
        other.wait_for_selector(f"#{fid(path)} .tag.info")
        page.wait_for_selector("#presence .stale", timeout=6_000)
        assert "admin changed this document" in page.inner_text("#presence")
        # the desk hides its pencils once the swap settles (desk.js afterSettle): wait for that, not the text
        expect(page.locator(".edit-link:visible")).to_have_count(0)
        page.locator(f"#{fid('rows[1].votes_words')} .edit-link").dispatch_event("click")  # hidden, still asked
        page.wait_for_timeout(800)
        assert FieldValue.objects.get(extraction=acta.extraction, path="rows[1].votes_words").corrected is False
        assert FieldValue.objects.get(extraction=acta.extraction, path=path).value == typed
    finally:
        other_context.close()


# --- the audit item ----------------------------------------------------------------------------------


def test_the_audit_item_shows_the_page_with_proof_boxes_beside_the_values(live_server, page, users):
    acta = flagged_acta(seed=71, wrong_row=None)
    sample = audit_sample_draw(batch=acta.document.batch, user=users["supervisor"],
                               request=sample_request(count=1, seed=2))
    base = live_server.url
    login(page, base, "supervisor")
    page.goto(f"{base}/audit/samples/{sample.id}/items/{sample.items.get().id}/")
    fields, viewer = rect(page, ".fields-pane"), rect(page, "#viewport")
    assert fields["x"] + fields["width"] <= viewer["x"]  # two panes, side by side
    page.click('a.field[data-path="rows[3].votes"]')
    page.wait_for_selector(ON)
    bbox = FieldValue.objects.get(extraction=acta.extraction, path="rows[3].votes").proofs[0]["bbox"]
    image = rect(page, "#page-stage img.page-image")
    shown = page.locator(ON).first.bounding_box()
    assert shown["x"] == pytest.approx(image["x"] + bbox["left"] * image["width"], abs=2.5)
    assert shown["y"] == pytest.approx(image["y"] + bbox["top"] * image["height"], abs=2.5)
    assert inside(shown, viewer)
    assert "PPT — NICOLAS MADURO: votes" in page.inner_text("#proof-head")


# --- users -------------------------------------------------------------------------------------------


def test_an_admin_manages_users_on_the_apps_own_pages(live_server, browser, page, users):
    base = live_server.url
    login(page, base, "admin")
    page.click("nav >> text=Users")
    page.click("text=New user")
    page.fill("input[name=username]", "lucia")
    page.check("input[name=roles][value=reviewer]")
    page.fill("input[name=password]", "a-long-enough-passphrase-3")
    page.click("button:has-text('Create the user')")
    page.wait_for_selector('tr[data-user="lucia"]')
    assert "reviewer" in page.inner_text('tr[data-user="lucia"]')
    page.click('tr[data-user="lucia"] >> text=Edit')
    page.check("input[name=roles][value=supervisor]")
    page.click("#user-roles button[type=submit]")
    page.wait_for_selector('tr[data-user="lucia"]')
    assert "reviewer, supervisor" in page.inner_text('tr[data-user="lucia"]')
    page.click('tr[data-user="lucia"] >> text=Edit')
    page.fill("input[name=new_password1]", "second-passphrase-long-4")
    page.fill("input[name=new_password2]", "second-passphrase-long-4")
    page.click("#user-password button[type=submit]")
    page.wait_for_selector("text=password was reset")
    context = browser.new_context()
    lucia = context.new_page()
    try:
        lucia.goto(base + "/login/")
        lucia.fill("input[name=username]", "lucia")
        lucia.fill("input[name=password]", "second-passphrase-long-4")
        lucia.click("button[type=submit]")
        lucia.wait_for_url(base + "/queue/")
    finally:
        context.close()
    page.click('tr[data-user="lucia"] >> text=Edit')
    page.uncheck("input[name=is_active]")
    page.click("#user-roles button[type=submit]")
    page.wait_for_selector('tr[data-user="lucia"]')
    assert "no" in page.locator('tr[data-user="lucia"] td').nth(3).inner_text()
