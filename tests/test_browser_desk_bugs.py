"""In a real browser, one test per bug a reviewer, a supervisor and an admin ran into on the desk and around it.
Each failed before its fix (the selectors are ones the old pages had too, so the old pages were tested)."""

from __future__ import annotations

import pytest

from extraction.models import Batch, Document, FieldValue
from reviewer.audit.services import audit_sample_draw, sample_request
from reviewer.desk import services as review
from reviewer.desk.presenters import fid
from tests.desk_browser import inside, login, open_desk, overlaps, rect
from tests.desk_data import flagged_acta

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

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
    from tests.dashboard_data import make_batch, make_doc

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
