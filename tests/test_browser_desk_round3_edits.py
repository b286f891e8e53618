"""In a real browser: issue 28's desk edits — the edit box, the verify note, taking words from the page."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from extraction.models import Block, FieldValue, ReviewEvent
from tests.desk_browser import login, open_desk, select_field
from tests.desk_data import flagged_acta

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


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
