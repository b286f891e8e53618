"""The review desk in a real browser (Debian's chromium through Playwright): every browser test of the desk.

- The desk's two panes, its fields and its page
- Editing a value
- Taking a value from the page
- The edit box, the verify note, taking words from the page
- Proof boxes drawn before any click
- What reviewers expect of a validation screen
- What reviewers, supervisors and admins ran into on the desk and around it
- The desk on a laptop's screen, and the pages around it
"""

from __future__ import annotations

import csv
import io
import shutil
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from extraction.models import Batch, Block, Document, Extraction, FieldValue, ReviewEvent, Violation
from extraction.ocr import pdf_text
from extraction.pipeline.ingest import IncomingFile, batch_create_from_files
from extraction.pipeline.process import document_process
from reviewer.audit.services import audit_sample_draw, sample_request
from reviewer.desk import services as review
from reviewer.desk.fields import fid
from sheetgen.generate import generate_acta, spell_digits
from sheetgen.sampled import generate_sampled
from tests.support.acta_answers import correct_answer, data_section, set_count
from tests.support.acta_pipeline import USAGE
from tests.support.browser import screenshot
from tests.support.desk_browser import inside, login, open_desk, overlaps, rect, select_field
from tests.support.desk_data import add_triage_rules, flagged_acta
from tests.support.llm_server import reply_json
from tests.support.paths import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


# -------- The desk's two panes, its fields and its page -------------------------------------------------------
# In a real browser: a reviewer clears a flagged acta (OCR'd by rapidocr) — mouse first, then the keyboard alone.


SEED = 5  # a sheet whose only broken rule, once OCR'd, is one row's digits against its words


def flagged_scan(tmp_path: Path):
    generated = generate_acta(seed=SEED, errors=["digits_words_mismatch"])
    pdf = tmp_path / "acta-desk.pdf"
    pdf.write_bytes(generated.pdf_bytes)
    batch = batch_create_from_files(name="desk", doctype="acta", ocr_engine="rapidocr",
                                    files=[IncomingFile(pdf.name, pdf)], queue=False)
    document = batch.documents.get()
    assert document_process(document_id=document.id) == "flagged"
    extraction = document.extractions.get()
    violation = extraction.violations.get(code="row_digits_words_mismatch")
    assert extraction.violations.count() == 1, list(extraction.violations.values_list("code", flat=True))
    digits_path, words_path = violation.fields
    row = int(digits_path.split("[")[1].split("]")[0])
    true_words = spell_digits(generated.printed["rows"][row]["votes_text"])  # the digits are right, the words slipped
    return document, digits_path, words_path, true_words


def highlight_matches_bbox(page, bbox: dict) -> None:
    """The proof box's screen rectangle is the block's bbox scaled onto the image's screen rectangle."""
    box = page.locator("#page-pane .proof-box.on").first
    box.wait_for(state="visible")
    image = page.locator("#page-pane img.page-image").bounding_box()
    shown = box.bounding_box()
    expected = {
        "x": image["x"] + bbox["left"] * image["width"], "y": image["y"] + bbox["top"] * image["height"],
        "width": bbox["width"] * image["width"], "height": bbox["height"] * image["height"],
    }
    for key, value in expected.items():
        assert shown[key] == pytest.approx(value, abs=2.5), (key, shown, expected)  # the outline is 2 px wide
    # scrolled into view: the box lies inside the visible part of the page pane, and the window never scrolled
    pane = page.locator("#viewport").bounding_box()
    assert pane["y"] <= shown["y"] and shown["y"] + shown["height"] <= pane["y"] + pane["height"]
    assert page.evaluate("window.scrollY") == 0


def test_a_reviewer_clears_a_flagged_acta_with_the_mouse_and_then_the_keyboard_alone(live_server, page, users,
                                                                                      tmp_path):
    document, digits_path, words_path, true_words = flagged_scan(tmp_path)
    base = live_server.url
    login(page, base)
    page.wait_for_url(base + "/queue/")  # a reviewer starts at the queue

    # The queue names the broken rule in words.
    row = page.locator(f'tr[data-document="{document.id}"]')
    assert "A row's digits and words disagree" in row.inner_text()
    screenshot(page, "desk-queue")

    # Mouse: open the document, click the field, the highlight lies over the cited row of the page image.
    row.locator("a").first.click()
    page.wait_for_url(f"{base}/documents/{document.id}/")
    words_bbox = FieldValue.objects.get(extraction__document=document, path=words_path).proofs[0]["bbox"]
    page.click(f'#fields a.field[data-path="{words_path}"]')
    page.wait_for_selector(f'#page-pane[data-field="{words_path}"]')
    highlight_matches_bbox(page, words_bbox)
    screenshot(page, "desk-field-proof")
    before = int(page.locator("#zoom-level").inner_text().rstrip("%"))
    page.click('[data-zoom="1"]')
    page.click('[data-zoom="1"]')
    assert int(page.locator("#zoom-level").inner_text().rstrip("%")) == pytest.approx(before * 1.5625, abs=2)
    highlight_matches_bbox(page, words_bbox)  # right at any zoom
    page.click('[data-view="fit-width"]')
    # Clicking the broken rule highlights both fields it involves and their proofs.
    page.click("#violations a.rule")
    page.wait_for_selector("#page-pane[data-violation]:not([data-violation=''])")
    assert page.locator("#fields a.field.involved").count() == 2
    assert page.locator("#page-pane .proof-box.on").count() >= 2
    screenshot(page, "desk-rule")
    page.set_viewport_size({"width": 1280, "height": 720})  # docs/USING.md shows the desk on a laptop's screen
    page.wait_for_timeout(200)
    shutil.copyfile(screenshot(page, "desk"), _docs_png())
    page.set_viewport_size({"width": 1400, "height": 900})

    # Keyboard alone from the queue: n opens (and claims) the next document, focus is on the flagged field.
    page.goto(base + "/queue/")
    page.keyboard.press("n")
    page.wait_for_url(f"{base}/documents/{document.id}/")
    assert Document.objects.get(pk=document.id).claimed_by == users["reviewer"]
    page.wait_for_function("path => document.activeElement && document.activeElement.getAttribute('data-path') === path",
                           arg=digits_path, timeout=5000)  # the desk focuses the flagged field once it is drawn
    page.keyboard.press("Enter")  # shows the proof of the digits
    page.wait_for_selector(f'#page-pane[data-field="{digits_path}"] .proof-box.on')
    page.keyboard.press("j")  # the words beside them
    assert page.evaluate("document.activeElement.getAttribute('data-path')") == words_path
    page.keyboard.press("k")
    page.keyboard.press("j")
    page.keyboard.press("Enter")
    page.wait_for_selector(f'#page-pane[data-field="{words_path}"] .proof-box.on')
    highlight_matches_bbox(page, words_bbox)
    page.keyboard.press("e")
    page.wait_for_selector("#fields .edit-form input.edit-value:focus")
    page.keyboard.press("Control+a")
    page.keyboard.type(true_words)
    page.keyboard.press("Enter")
    page.wait_for_selector("#violations h2:has-text('All rules pass')")
    # focus comes back to the field once the swapped fields have settled (a moment after the rules pane)
    page.wait_for_function("path => document.activeElement && document.activeElement.getAttribute('data-path') === path",
                           arg=words_path, timeout=5000)
    screenshot(page, "desk-corrected")
    page.keyboard.press("v")  # verifies and opens the next document: none is left, so the queue
    page.wait_for_url(base + "/queue/")
    assert page.locator(f'tr[data-document="{document.id}"]').count() == 0  # it left the queue
    assert "Nothing to review." in page.locator("#queue-rows").inner_text()

    doc = Document.objects.get(pk=document.id)
    assert (doc.status, doc.review_status, doc.claimed_by) == ("flagged", "corrected", None)
    edit = ReviewEvent.objects.get(document=doc, kind="edit")
    assert (edit.user, edit.field, edit.after) == (users["reviewer"], words_path, true_words)
    assert ReviewEvent.objects.filter(document=doc, kind="verify", user=users["reviewer"]).exists()


def _docs_png() -> Path:
    docs = ROOT / "docs"
    docs.mkdir(exist_ok=True)
    return docs / "desk.png"


# -------- Editing a value -------------------------------------------------------------------------------------
# In a real browser: a saved edit changes, in place, the cells whose rules it changed, and nothing else.


def test_saving_an_edit_unflags_its_twin_in_place_and_gives_focus_back_to_the_field(live_server, page, users):
    acta = flagged_acta(seed=71)
    row = acta.wrong_row
    words, twin = f"rows[{row}].votes_words", f"#f-rows-{row}-votes"
    base = live_server.url
    login(page, base)
    open_desk(page, base, acta.document.id)
    expect(page.locator(twin)).to_have_class("cell flagged")
    # the pane and an untouched cell are marked: a swap of the whole pane (or of that cell) would drop the marks
    page.evaluate("""() => { document.getElementById('fields').dataset.kept = '1';
                             document.getElementById('f-rows-0-votes').dataset.kept = '1'; }""")
    page.locator(f'#fields a.field[data-path="{words}"]').focus()
    page.keyboard.press("e")
    box = page.locator(f'.edit-form[data-path="{words}"] input.edit-value')
    expect(box).to_be_focused()
    box.fill(acta.true_words)
    box.press("Enter")

    expect(page.locator(twin)).to_have_class("cell")  # its rule is gone, so is its flag
    expect(page.locator("#violations h2")).to_have_text("All rules pass")
    expect(page.locator(f"#f-rows-{row}-votes-words .tag.info")).to_have_text("corrected")
    expect(page.locator("#doc-version")).to_have_value(str(acta.document.version + 1))
    assert page.evaluate("() => document.getElementById('fields').dataset.kept") == "1"
    assert page.evaluate("() => document.getElementById('f-rows-0-votes').dataset.kept") == "1"
    expect(page.locator(f'#fields a.field[data-path="{words}"]')).to_be_focused()
    # the next edit starts from the new version: no stale-version refusal
    page.keyboard.press("e")
    box = page.locator(f'.edit-form[data-path="{words}"] input.edit-value')
    box.fill("NUEVE NUEVE NUEVE")
    box.press("Enter")
    expect(page.locator(twin)).to_have_class("cell flagged")
    expect(page.locator("#doc-version")).to_have_value(str(acta.document.version + 2))


# -------- Taking a value from the page ------------------------------------------------------------------------
# In a real browser: on a sheet whose text layer the table finder read as one cell per candidate group, taking
# a field's own word from the page changes nothing: not its value, not its rules (issue 25).


# tests/extraction/doctypes/test_acta_sampled_layouts.py: names and words ruled around each group, digits per row
GROUP_MERGED = 3


def _stored(extraction: Extraction) -> list[tuple]:
    return sorted((v.code, tuple(v.fields), str(v.found)) for v in Violation.objects.filter(extraction=extraction))


def _word_on_row(document: Document, party: str, text: str) -> Block:
    """The WORD `text` printed on the row of `party` (the first of several that read the same)."""
    label = Block.objects.get(document=document, type="WORD", text=party)
    middle = label.top + label.height / 2
    return next(w for w in Block.objects.filter(document=document, type="WORD", text=text).order_by("left")
                if w.top <= middle <= w.top + w.height and w.left > label.left)


def test_taking_a_fields_own_word_from_a_group_merged_cell_changes_nothing(live_server, page, users, llm_env,
                                                                           monkeypatch, tmp_path):
    # the finder's cells as it gives them, one over each group: the prompt shows what the issue saw
    monkeypatch.setattr(pdf_text, "split_spanning_cells", lambda cells, boxes, skew: list(cells))
    sheet = generate_sampled(GROUP_MERGED)
    printed = sheet.printed

    def total_misread(body: dict[str, Any]):  # right, but for the valid votes: the document is flagged
        answer = correct_answer(data_section(body), printed)
        return reply_json(set_count(answer, "valid_votes", printed["valid_votes"] + 1, words=False), usage=USAGE)

    llm_env.always(total_misread)
    path = tmp_path / "sheet.pdf"
    path.write_bytes(sheet.pdf_bytes)
    batch = batch_create_from_files(name="merged", doctype="acta", ocr_engine="pdf-text",
                                    files=[IncomingFile(path.name, path)], queue=False)
    document = batch.documents.get()
    document_process(document_id=document.id)
    document.refresh_from_db()
    extraction = Extraction.objects.get(document=document)
    assert document.status == "flagged"
    before = _stored(extraction)
    assert {code for code, _, _ in before} >= {"sum_valid_votes"} and "row_proof_party" not in str(before)

    # a row printing what an earlier row of its group prints too, in the same merged cells
    texts = [r["votes_text"] for r in printed["rows"]]
    row = next(i for i in range(1, 13) if texts[i] in texts[:i])
    target, party = f"rows[{row}].votes", printed["rows"][row]["party"]
    word = _word_on_row(document, party, texts[row])
    base = live_server.url
    login(page, base)
    open_desk(page, base, document.id)
    select_field(page, target)
    page.locator(f'#page-stage svg rect[data-b="{word.pk}"]').click(force=True)
    event = None
    for _ in range(80):
        event = ReviewEvent.objects.filter(document=document, field=target).first()
        if event:
            break
        page.wait_for_timeout(100)
    assert event is not None and (event.before, event.after) == (printed["rows"][row]["votes"],) * 2
    fv = FieldValue.objects.get(extraction=extraction, path=target)
    assert fv.value == printed["rows"][row]["votes"] and [p["block_id"] for p in fv.proofs] == [str(word.pk)]
    assert _stored(extraction) == before
    assert "row_proof_party" not in page.inner_text("#violations")


# -------- The edit box, the verify note, taking words from the page -------------------------------------------
# In a real browser: issue 28's desk edits — the edit box, the verify note, taking words from the page.


def _value(page, path: str) -> str:
    return page.locator(f'#fields a.field[data-path="{path}"] .value').inner_text().strip()


def _edit_with_the_keyboard(page, base: str, acta, target: str):
    """Open the desk, focus the field, press `e`: the edit box, focused."""
    login(page, base)
    open_desk(page, base, acta.document.id)
    page.locator(f'#fields a.field[data-path="{target}"]').focus()
    page.keyboard.press("e")
    box = page.locator(f'.edit-form[data-path="{target}"] input.edit-value')
    expect(box).to_be_focused()
    return box


def test_typing_in_a_freshly_opened_edit_box_replaces_the_old_value(live_server, page, users):
    acta = flagged_acta(seed=81)
    target = "rows[0].votes"
    old = FieldValue.objects.get(extraction=acta.extraction, path=target).value
    new = old + 7
    box = _edit_with_the_keyboard(page, live_server.url, acta, target)
    page.keyboard.type(str(new))
    assert box.input_value() == str(new)
    page.keyboard.press("Enter")
    expect(page.locator(f'#fields a.field[data-path="{target}"] .value')).to_have_text(str(new))
    assert FieldValue.objects.get(extraction=acta.extraction, path=target).value == new


def test_saving_the_value_the_model_read_closes_the_box_and_records_no_correction(live_server, page, users):
    acta = flagged_acta(seed=86)
    target = "rows[0].votes"
    old = FieldValue.objects.get(extraction=acta.extraction, path=target).value
    _edit_with_the_keyboard(page, live_server.url, acta, target)
    page.keyboard.type(str(old))
    page.keyboard.press("Enter")
    expect(page.locator(f'.edit-form[data-path="{target}"]')).to_have_count(0)
    expect(page.locator(f'#fields a.field[data-path="{target}"]')).to_be_focused()
    assert _value(page, target) == str(old)
    assert not FieldValue.objects.get(extraction=acta.extraction, path=target).corrected
    assert not ReviewEvent.objects.filter(document=acta.document, field=target).exists()
    assert page.locator("#doc-version").input_value() == str(acta.document.version)


def test_escape_in_the_verify_note_gives_focus_back_to_the_field(live_server, page, users):
    acta = flagged_acta(seed=82)
    target = "rows[1].votes"
    base = live_server.url
    login(page, base)
    open_desk(page, base, acta.document.id)
    field = page.locator(f'#fields a.field[data-path="{target}"]')
    field.focus()
    page.keyboard.press("v")  # rules fail: the note asks why, and takes focus
    note = page.locator("#verify-form textarea[name=note]")
    expect(note).to_be_focused()
    page.keyboard.type("checked")
    page.keyboard.press("Escape")
    expect(field).to_be_focused()
    assert note.input_value() == "checked"
    page.keyboard.press("j")  # the keyboard works on the fields again
    expect(page.locator('#fields a.field.current')).not_to_have_attribute("data-path", target)


def _events(acta, path: str) -> list[ReviewEvent]:
    return list(ReviewEvent.objects.filter(document=acta.document, field=path).order_by("id"))


def test_a_double_click_on_a_word_takes_its_line_once_and_not_the_word_first(live_server, page, users):
    acta = flagged_acta(seed=83)
    line = Block.objects.filter(document=acta.document, type="LINE", text__startswith="TUPAMARO").get()
    target = "rows[2].votes"
    base = live_server.url
    login(page, base)
    open_desk(page, base, acta.document.id)
    select_field(page, target)
    page.keyboard.press("m")  # the proof moves, the value stays: any line may be taken
    word = page.locator(f'#page-stage svg rect.w[data-l="{line.pk}"]').first
    word.dblclick(force=True)
    expect(page.locator("#doc-version")).to_have_value(str(acta.document.version + 1))
    page.wait_for_timeout(1000)  # a late second take would have come by now
    events = _events(acta, target)
    assert len(events) == 1 and [p["block_id"] for p in events[0].proof_after] == [str(line.pk)]
    assert page.locator("#doc-version").input_value() == str(acta.document.version + 1)


def test_a_typed_value_says_it_was_typed_and_that_its_box_is_the_old_proof(live_server, page, users):
    acta = flagged_acta(seed=84)
    target = f"rows[{acta.wrong_row}].votes_words"
    base = live_server.url
    login(page, base)
    open_desk(page, base, acta.document.id)
    select_field(page, target)
    expect(page.locator(f'#page-pane .proof-box.on[data-path="{target}"]')).not_to_have_count(0)
    page.keyboard.press("e")
    box = page.locator(f'.edit-form[data-path="{target}"] input.edit-value')
    expect(box).to_be_focused()
    box.fill(acta.true_words)
    box.press("Enter")
    expect(page.locator(f'#fields a.field[data-path="{target}"] .value')).to_have_text(acta.true_words)
    select_field(page, target)
    expect(page.locator("#proof-head")).to_contain_text("You typed this value; it was not taken from the page. "
                                                        "The box shows the old proof")
    # a value then taken from the page is proved by its words again: the note goes
    word = Block.objects.filter(document=acta.document, type="WORD", text="ACTA").first()
    page.keyboard.press("m")
    page.locator(f'#page-stage svg rect[data-b="{word.pk}"]').dispatch_event("click")
    expect(page.locator("#doc-version")).to_have_value(str(acta.document.version + 2))
    expect(page.locator("#proof-head")).to_contain_text("You typed this value")  # a moved proof: still typed
    page.keyboard.press("m")
    other = Block.objects.filter(document=acta.document, type="LINE").order_by("order")[1]
    page.locator(f'#page-stage svg rect.l[data-b="{other.pk}"]').dispatch_event("click")
    expect(page.locator("#doc-version")).to_have_value(str(acta.document.version + 3))
    expect(page.locator("#proof-head")).not_to_contain_text("You typed this value")


def test_taking_a_word_leaves_the_page_where_it_was_under_the_pointer(live_server, page, users):
    acta = flagged_acta(seed=85)
    target = "rows[0].votes"
    other = acta.extraction.answer["rows"][1]
    assert other["votes"]["value"] != acta.extraction.answer["rows"][0]["votes"]["value"]
    word = Block.objects.filter(document=acta.document, type="WORD", text=str(other["votes"]["value"]).zfill(4)).first()
    base = live_server.url
    login(page, base)
    open_desk(page, base, acta.document.id)
    select_field(page, target)
    rect = page.locator(f'#page-stage svg rect[data-b="{word.pk}"]')
    before = rect.bounding_box()
    head = page.locator("#proof-head").bounding_box()["height"]
    rect.click(force=True)
    expect(page.locator(f'#fields a.field[data-path="{target}"] .value')).to_have_text(str(other["votes"]["value"]))
    expect(page.locator("#proof-head")).to_contain_text("Corrected by a reviewer")
    page.wait_for_timeout(300)
    assert page.locator("#proof-head").bounding_box()["height"] > head  # the head did grow
    after = page.locator(f'#page-stage svg rect[data-b="{word.pk}"]').bounding_box()
    assert abs(after["y"] - before["y"]) <= 1 and abs(after["x"] - before["x"]) <= 1


# -------- Proof boxes drawn before any click ------------------------------------------------------------------
# In a real browser (issue 28, items 8 and 3): every proof box of the page shown is drawn before any click, a
# click only shows one (it adds no element to the page and reads no layout), and the box of a typed value is
# shown as the old proof, with the proof head saying who typed it.


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
    assert _colour_contrast(*colours) >= 4.5, colours  # WCAG AA for text of its size

    # another person opening the desk reads who typed it, and sees the same old box
    other = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
    login(other, base, "supervisor")
    open_desk(other, base, acta.document.id, f"?field={target}")
    expect(other.locator("#proof-head")).to_contain_text("Typed by reviewer; it was not taken from the page.")
    expect(other.locator(f'#page-pane .proof-box.on.old[data-path="{target}"]')).not_to_have_count(0)
    other.context.close()


def _colour_contrast(fg: str, bg: str) -> float:
    def luminance(css: str) -> float:
        r, g, b = (int(float(x)) / 255 for x in css[css.index("(") + 1:css.index(")")].split(",")[:3])
        lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    hi, lo = sorted((luminance(fg), luminance(bg)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


# -------- What reviewers expect of a validation screen --------------------------------------------------------
# In a real browser: what reviewers expect of a validation screen, one test each — people's words, the triage
# of broken rules, the page viewer, the two-way page, the keyboard, presence, the audit item in two panes.


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


# -------- What reviewers, supervisors and admins ran into on the desk and around it ---------------------------
# In a real browser, one test per bug a reviewer, a supervisor and an admin ran into on the desk and around it.
# Each failed before its fix (the selectors are ones the old pages had too, so the old pages were tested).


VISIBLE_BOX = "#page-pane .proof-box:visible"
SCROLLER = """(el) => { let p = el.parentElement;
  while (p && !(p.scrollHeight > p.clientHeight + 1 && getComputedStyle(p).overflowY !== 'visible')) { p = p.parentElement; }
  const r = (p || document.documentElement).getBoundingClientRect();
  return {x: r.x, y: r.y, width: r.width, height: r.height}; }"""


def test_a_stale_page_asking_for_the_edit_form_keeps_one_fields_pane_and_is_told_who_holds_it(live_server, page,
                                                                                              users):
    acta = flagged_acta(seed=41)
    base = live_server.url
    login(page, base)
    open_desk(page, base, acta.document.id)
    review.document_claim(document_id=acta.document.id, user=users["admin"])  # meanwhile, elsewhere
    path = f"rows[{acta.wrong_row}].votes"
    page.click(f"#{fid(path)} .edit-link", force=True)
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(300)
    assert page.locator("#fields").count() == 1
    assert page.locator("td #fields, #fields #fields, .cell #fields").count() == 0
    assert "admin is working on this document" in page.locator("#desk").inner_text()
    assert page.locator(".edit-form").count() == 0


def test_the_batch_page_shows_finished_rows_with_links_and_rerun_buttons_without_a_reload(live_server, page, users):
    batch = Batch.objects.create(name="live", doctype="acta", ocr_engine="rapidocr")
    docs = [Document.objects.create(batch=batch, filename=f"doc-{i}.pdf", sha256=f"{i:064d}", original=f"x/{i}.pdf",
                                    status="queued") for i in range(4)]
    base = live_server.url
    login(page, base, "admin")
    page.goto(f"{base}/batches/{batch.id}/")
    assert "0 of 4 done" in page.inner_text("main")
    for i, doc in enumerate(docs):
        Document.objects.filter(pk=doc.pk).update(status="passed" if i % 2 else "flagged")
    page.wait_for_selector("text=4 of 4 done", timeout=10_000)
    page.wait_for_timeout(300)
    rows = page.locator("table.list tbody tr")
    assert rows.count() == 4
    for i in range(4):
        text = rows.nth(i).inner_text()
        assert "queued" not in text and ("passed" in text or "flagged" in text), text
    assert page.locator('table.list tbody a[href*="/documents/"]').count() == 4
    assert page.locator("table.list tbody button:has-text('Re-run')").count() == 4


def test_a_highlight_scrolls_only_the_page_pane_and_the_toolbar_covers_neither_the_page_nor_its_notes(
        live_server, page, users):
    page.set_viewport_size({"width": 1300, "height": 700})
    acta = flagged_acta(seed=42, pages=3, wrong_row=12)  # row 12 is low on page 1
    base = live_server.url
    login(page, base)
    open_desk(page, base, acta.document.id)
    page.click('#fields a.field[data-path="rows[12].votes_words"]')
    page.wait_for_selector(VISIBLE_BOX)
    page.wait_for_timeout(300)
    assert page.evaluate("window.scrollY") == 0
    assert rect(page, ".topbar")["y"] == 0  # the nav bar is whole
    box = page.locator(VISIBLE_BOX).first.bounding_box()
    scroller = page.locator("#page-pane img.page-image").evaluate(SCROLLER)
    assert inside(box, scroller)
    toolbar = page.locator('[data-zoom="1"]').locator("xpath=..").bounding_box()
    assert not overlaps(toolbar, scroller)  # the toolbar sits above the scrolling page, never over it
    for note in page.locator("#page-pane .proof-note:visible").all():
        assert not overlaps(toolbar, note.bounding_box())


def test_in_edit_mode_the_words_column_stays_inside_the_fields_pane(live_server, page, users):
    acta = flagged_acta(seed=43)
    base = live_server.url
    login(page, base)
    open_desk(page, base, acta.document.id)
    path = f"rows[{acta.wrong_row}].votes_words"
    page.click(f"#{fid(path)} .edit-link", force=True)
    page.wait_for_selector(".edit-form input.edit-value")
    pane = rect(page, ".fields-pane")
    for part in (".edit-form input.edit-value", ".edit-form button[type=submit]", ".edit-form .cancel"):
        assert inside(rect(page, part), pane), part
    overflow = page.evaluate("""() => [...document.querySelectorAll('.fields-pane, .fields-pane *')]
        .filter(e => ['auto', 'scroll'].includes(getComputedStyle(e).overflowX))
        .some(e => e.scrollWidth > e.clientWidth + 1)""")
    assert not overflow


def test_opening_a_document_keeps_its_broken_rule_in_view(live_server, page, users):
    acta = flagged_acta(seed=44, wrong_row=34)  # the flagged row is far down the fields
    base = live_server.url
    login(page, base)
    open_desk(page, base, acta.document.id)
    page.wait_for_timeout(300)
    card = page.locator("#violations a.rule").first
    box = card.bounding_box()
    scroller = card.evaluate(SCROLLER)
    assert inside(box, scroller) and box["y"] >= 0 and box["y"] + box["height"] <= 900
    assert page.evaluate("window.scrollY") == 0


def test_after_verifying_the_pill_and_the_message_tell_what_happened(live_server, page, users):
    acta = flagged_acta(seed=45)
    base = live_server.url
    login(page, base)
    open_desk(page, base, acta.document.id)
    page.click("#verify-button")
    page.fill("textarea[name=note]", "checked against the sheet")
    page.click("#verify-button")
    page.wait_for_url(f"{base}/queue/")  # verified, and nothing is left to review
    page.goto(f"{base}/documents/{acta.document.id}/")
    status = page.locator("#desk-status").inner_text()
    pill = page.locator("#desk-status .status").first.inner_text()
    assert pill == "verified" and "flagged" not in pill
    assert "Already" not in status and "Verified by reviewer" in status


def test_batch_counts_tell_reviewed_documents_apart_from_those_to_review(live_server, page, users):
    first = flagged_acta(seed=46)
    flagged_acta(seed=47, batch=first.document.batch)
    review.document_verify(document_id=first.document.id, user=users["reviewer"],
                           expected_version=first.document.version, note="fine")
    base = live_server.url
    login(page, base, "admin")
    page.goto(f"{base}/batches/{first.document.batch_id}/")
    text = " ".join(page.inner_text("#progress").split())
    assert "flagged, to review 1" in text and "reviewed 1" in text
    page.goto(f"{base}/batches/")
    headers = [h.strip() for h in page.locator("table.list thead th").all_inner_texts()]
    cells = page.locator("table.list tbody tr").first.locator("td").all_inner_texts()
    row = dict(zip(headers, cells, strict=False))
    assert row["To review"] == "1" and row["Reviewed"] == "1"


def test_pencils_disappear_when_someone_else_takes_the_document(live_server, page, users, settings):
    settings.DESK_POLL_SECONDS = 1
    acta = flagged_acta(seed=48)
    base = live_server.url
    login(page, base)
    open_desk(page, base, acta.document.id)
    assert page.locator(".edit-link:visible").count() > 0
    review.document_claim(document_id=acta.document.id, user=users["admin"])
    page.wait_for_function("() => document.querySelectorAll('.edit-link').length > 0 && "
                           "[...document.querySelectorAll('.edit-link')].every(e => e.offsetParent === null)",
                           timeout=8_000)
    assert "admin is working on this document" in page.locator("#presence").inner_text()
    page.reload()
    assert page.locator(".edit-link").count() == 0


def test_escape_returns_focus_to_the_field_it_was_editing(live_server, page, users):
    acta = flagged_acta(seed=49)
    base = live_server.url
    login(page, base)
    open_desk(page, base, acta.document.id)
    path = f"rows[{acta.wrong_row}].votes"
    page.click(f'#fields a.field[data-path="{path}"]')
    page.keyboard.press("e")
    page.wait_for_selector(".edit-form input.edit-value:focus")
    page.keyboard.press("Escape")
    page.wait_for_function(f"() => document.activeElement && document.activeElement.getAttribute('data-path') === '{path}'",
                           timeout=5_000)
    assert page.locator(".edit-form").count() == 0


def test_a_field_with_no_proof_says_so_in_words(live_server, page, users):
    acta = flagged_acta(seed=50)
    FieldValue.objects.filter(extraction=acta.extraction, path="acta_id").update(proofs=[])
    base = live_server.url
    login(page, base)
    open_desk(page, base, acta.document.id)
    page.click('#fields a.field[data-path="acta_id"]')
    page.wait_for_timeout(400)
    head = page.locator("#page-pane").inner_text()
    assert "acta_id" not in head and "Acta id" in head
    assert "no proof" in head.lower()
    assert page.locator(VISIBLE_BOX).count() == 0


def test_a_supervisors_audit_item_shows_the_page_not_box_numbers(live_server, page, users):
    acta = flagged_acta(seed=51, wrong_row=None)
    sample = audit_sample_draw(batch=acta.document.batch, user=users["supervisor"],
                               request=sample_request(count=1, seed=1))
    base = live_server.url
    login(page, base, "supervisor")
    page.goto(f"{base}/audit/samples/{sample.id}/items/{sample.items.get().id}/")
    text = page.inner_text("main")
    assert "[0.0" not in text and "0.061," not in text
    page.click('a.field[data-path="acta_id"]')
    page.wait_for_selector(VISIBLE_BOX)
    image = rect(page, "img.page-image")
    assert overlaps(page.locator(VISIBLE_BOX).first.bounding_box(), image)


def test_chart_labels_are_readable_and_costs_carry_a_currency(live_server, page, users):
    from tests.support.dashboard_data import make_batch, make_doc

    page.set_viewport_size({"width": 1024, "height": 768})
    batch = make_batch("charts")
    make_doc(batch, status="flagged", rounds=[["sum_valid_votes"]])
    make_doc(batch)
    base = live_server.url
    login(page, base, "admin")
    page.goto(f"{base}/batches/{batch.id}/dashboard/")
    sizes = page.evaluate("""() => [...document.querySelectorAll('svg.chart text')].map(t =>
        parseFloat(getComputedStyle(t).fontSize) * t.ownerSVGElement.getScreenCTM().a)""")
    assert sizes and min(sizes) >= 12, sizes
    cost = page.locator("[data-cost], .card:has-text('Cost') .big").first.inner_text()
    assert "USD" in cost


def test_rerun_chooses_a_scope_with_documents_offers_no_silent_rounds_and_offers_the_ocr_engine(live_server, page,
                                                                                                  users):
    acta = flagged_acta(seed=52)
    Document.objects.filter(pk=acta.document.id).update(original="x/acta.pdf")
    base = live_server.url
    login(page, base, "admin")
    page.goto(f"{base}/batches/{acta.document.batch_id}/rerun/")
    assert page.locator("select[name=scope]").input_value() != "failed"
    assert page.locator("input[name=max_rounds]").count() == 0  # no LLM here: the offline reader reads once
    assert "reads each document once" in page.inner_text("main")
    options = page.locator("select[name=ocr_engine] option").all_inner_texts()
    assert any("Tesseract" in o for o in options) and any("RapidOCR" in o for o in options)


# -------- The desk on a laptop's screen, and the pages around it ----------------------------------------------
# In a real browser (issue 28): the audit item's verdict form is whole on a laptop, the desk gives a laptop's
# room to the fields and the page, chart labels are not clipped, the "kept" tag is readable, no favicon 404.


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


# what a badge or a figure is, as one piece of text: it breaks inside a word when its text takes more than one line
_BADGE_LINES = """() => [...document.querySelectorAll('#fields a.field .tag, #fields a.field .conf, #fields a.field .trust')]
    .map(e => { const r = document.createRange(); r.selectNodeContents(e);
                const tops = new Set([...r.getClientRects()].map(q => Math.round(q.top)));
                return [e.textContent.trim(), tops.size]; })"""
# a value's figure sits on the value's own line: its middle is within the value's first line box
_FIGURE_BELOW = """() => [...document.querySelectorAll('#fields a.field')].filter(a => a.querySelector('.conf'))
    .filter(a => { const v = a.querySelector('.value').getClientRects()[0], c = a.querySelector('.conf').getBoundingClientRect();
                   return v && (c.top + c.height / 2 > v.bottom); }).map(a => a.dataset.path)"""


def test_the_fields_pane_grows_with_the_screen_and_figures_and_badges_keep_to_their_line(live_server, page, users):
    acta = flagged_acta(seed=83)
    document = acta.document
    base = live_server.url
    login(page, base)
    widths = {}
    for width, height in ((1280, 720), (1366, 768), (1400, 900), (1600, 900), (1920, 1080)):
        page.set_viewport_size({"width": width, "height": height})
        open_desk(page, base, document.id)
        widths[(width, height)] = rect(page, ".fields-pane")["width"]
        assert page.evaluate(_FIGURE_BELOW) == [], (width, height)  # "OCR 100%" beside each value, not under it
    assert list(widths.values()) == sorted(widths.values()), widths  # a wider screen never narrows the pane
    # after an edit, the cell's badges ("corrected", "ungrounded") stay whole words
    page.set_viewport_size({"width": 1400, "height": 900})
    open_desk(page, base, document.id)
    words = f"rows[{acta.wrong_row}].votes_words"
    page.click(f"#{fid(words)} .edit-link", force=True)
    page.fill(".edit-form input.edit-value", acta.true_words)
    page.press(".edit-form input.edit-value", "Enter")
    page.wait_for_selector(f"#{fid(words)} .tag.info")
    badges = page.evaluate(_BADGE_LINES)
    assert any(text == "corrected" for text, _ in badges), badges
    assert [b for b in badges if b[1] > 1] == [], badges

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


def _element_contrast(page, selector: str) -> float:
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
    assert _element_contrast(page, ".round h3 .tag") >= 4.5


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
