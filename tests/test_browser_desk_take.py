"""In a real browser: on a sheet whose text layer the table finder read as one cell per candidate group, taking
a field's own word from the page changes nothing: not its value, not its rules (issue 25)."""

from __future__ import annotations

from typing import Any

import pytest

from extraction.models import Block, Document, Extraction, FieldValue, ReviewEvent, Violation
from extraction.ocr import pdf_text
from extraction.pipeline.ingest import IncomingFile, batch_create_from_files
from extraction.pipeline.process import document_process
from sheetgen.sampled import generate_sampled
from tests.acta_answers import correct_answer, data_section, set_count
from tests.acta_pipeline import USAGE
from tests.desk_browser import login, open_desk, select_field
from tests.llm_server import reply_json

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

GROUP_MERGED = 3  # tests/unit/test_sampled_layouts.py: names and words ruled around each group, digits per row


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
