"""In a real browser: a reviewer clears a flagged acta (OCR'd by rapidocr) — mouse first, then the keyboard alone."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from extraction.models import Document, FieldValue, ReviewEvent
from extraction.pipeline.ingest import IncomingFile, batch_create_from_files
from extraction.pipeline.process import document_process
from sheetgen.generate import generate_acta, spell_digits
from tests.browser import screenshot
from tests.desk_browser import login
from tests.paths import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

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
