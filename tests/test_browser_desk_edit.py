"""In a real browser: a saved edit changes, in place, the cells whose rules it changed, and nothing else."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.desk_browser import login, open_desk
from tests.desk_data import flagged_acta

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


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
