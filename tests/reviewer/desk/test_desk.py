"""The review desk's views: who may open what, the queue, the two panes, htmx corrections and decisions."""

from __future__ import annotations

import io
import re

import pytest
from django.db import connection
from django.urls import reverse
from PIL import Image

from extraction.models import Block, Document, Extraction, FieldValue, ReviewEvent
from reviewer.desk import services as review
from tests.support.desk_data import add_proof_on_page, flagged_acta, tiny_flagged_document

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
ROLES = ("anonymous", "outsider", "reviewer", "supervisor", "admin")


@pytest.fixture
def acta(db):
    return flagged_acta(seed=21)


# --- who may do what ---------------------------------------------------------------------------------

# (name, method, url builder, extra, {role: expected status}); 302 for a POST means "done, redirected".
DESK = {"reviewer": 200, "supervisor": 200, "admin": 200}
WORK_POST = {"reviewer": 302, "supervisor": 403, "admin": 302}
MATRIX = [
    ("queue", "get", lambda d: reverse("queue"), {}, {"reviewer": 200, "supervisor": 403, "admin": 200}),
    ("queue_next", "post", lambda d: reverse("queue_next"), {}, WORK_POST),
    ("desk_document", "get", lambda d: reverse("desk_document", args=[d.id]), {}, DESK),
    ("desk_proof", "get", lambda d: reverse("desk_proof", args=[d.id]) + "?field=acta_id", HTMX, DESK),
    ("desk_edit (form)", "get", lambda d: reverse("desk_edit", args=[d.id]) + "?field=acta_id", HTMX, DESK),
    ("desk_edit (save)", "post", lambda d: reverse("desk_edit", args=[d.id]), {}, WORK_POST),
    ("desk_verify", "post", lambda d: reverse("desk_verify", args=[d.id]), {}, WORK_POST),
    ("desk_reject", "post", lambda d: reverse("desk_reject", args=[d.id]), {}, WORK_POST),
    ("desk_claim", "post", lambda d: reverse("desk_claim", args=[d.id]), {}, WORK_POST),
    ("desk_release", "post", lambda d: reverse("desk_release", args=[d.id]), {}, WORK_POST),
    ("desk_send_back", "post", lambda d: reverse("desk_send_back", args=[d.id]), {},
     {"reviewer": 403, "supervisor": 302, "admin": 302}),
    ("desk_history", "get", lambda d: reverse("desk_history", args=[d.id]), {}, DESK),
    ("desk_page_image", "get", lambda d: reverse("desk_page_image", args=[d.id, 1]), {}, DESK),
    ("desk_page_annotated", "get", lambda d: reverse("desk_page_annotated", args=[d.id, 1]) + "?field=acta_id", {},
     DESK),
]


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize(("name", "method", "url", "extra", "allowed"), MATRIX, ids=[m[0] for m in MATRIX])
def test_every_desk_url_checks_the_role_on_the_server(client_as, role, name, method, url, extra, allowed):
    document = tiny_flagged_document()
    client = client_as(role)
    response = getattr(client, method)(url(document), **extra)
    if role == "anonymous":
        assert response.status_code == 302 and "/login/" in response["Location"]
    elif role == "outsider":
        assert response.status_code == 403
    else:
        assert response.status_code == allowed[role], response.content[:500]


def test_a_document_that_does_not_exist_is_a_404(client_as):
    assert client_as("reviewer").get(reverse("desk_document", args=[999999])).status_code == 404
    assert client_as("reviewer").get(reverse("desk_page_image", args=[999999, 1])).status_code == 404


@pytest.mark.parametrize("name,data", [("desk_edit", {"field": "acta_id", "value": "1"}),
                                       ("desk_take", {"field": "acta_id", "blocks": "1"})])
def test_a_write_to_a_document_that_does_not_exist_is_a_404(client_as, name, data):
    response = client_as("reviewer").post(reverse(name, args=[999999]), {**data, "version": 1}, **HTMX)
    assert response.status_code == 404


# --- the queue ---------------------------------------------------------------------------------------


def test_the_queue_lists_open_flagged_documents_oldest_first_with_their_rules_in_words(client_as, users):
    old, new = flagged_acta(seed=31, filename="old.pdf"), flagged_acta(seed=32, filename="new.pdf")
    done = flagged_acta(seed=33, filename="done.pdf")
    review.document_reject(document_id=done.document.id, user=users["admin"], expected_version=done.document.version,
                           reason="x")
    flagged_acta(seed=34, wrong_row=None, filename="passed.pdf")
    review.document_claim(document_id=new.document.id, user=users["admin"])

    html = client_as("reviewer").get(reverse("queue")).content.decode()
    assert html.index("old.pdf") < html.index("new.pdf")
    assert "done.pdf" not in html and "passed.pdf" not in html
    assert "A row&#x27;s digits and words disagree" in html
    row = re.search(rf'<tr data-document="{new.document.id}">.*?</tr>', html, re.S).group(0)
    assert "admin" in row and "until" in row
    assert old.document.filename in html


def test_the_queue_filters_by_batch_and_by_rule(client_as):
    a = flagged_acta(seed=35, filename="a.pdf")
    b = flagged_acta(seed=36, filename="b.pdf")
    client = client_as("reviewer")
    html = client.get(reverse("queue"), {"batch": b.document.batch_id}).content.decode()
    assert "b.pdf" in html and "a.pdf" not in html
    html = client.get(reverse("queue"), {"rule": "sum_valid_votes"}).content.decode()
    assert "a.pdf" not in html and "Nothing to review" in html
    html = client.get(reverse("queue"), {"rule": "row_digits_words_mismatch"}).content.decode()
    assert "a.pdf" in html and "b.pdf" in html
    assert a.document.batch_id != b.document.batch_id


def test_the_queue_page_costs_the_same_queries_for_a_few_or_many_documents(client_as, django_assert_max_num_queries):
    from tests.support.desk_data import Batch

    batch = Batch.objects.create(name="many", doctype="acta")
    flagged_acta(seed=37, batch=batch)
    client = client_as("reviewer")
    client.get(reverse("queue"))  # session and roles warm
    with django_assert_max_num_queries(7) as few:
        client.get(reverse("queue"))
    for seed in range(38, 44):
        flagged_acta(seed=seed, batch=batch)
    with django_assert_max_num_queries(len(few.captured_queries)):
        response = client.get(reverse("queue"))
    assert response.content.decode().count("<tr data-document=") == 7


def test_next_claims_the_oldest_free_document_and_opens_it(client_as, users):
    first, second = flagged_acta(seed=45), flagged_acta(seed=46)
    review.document_claim(document_id=first.document.id, user=users["admin"])
    response = client_as("reviewer").post(reverse("queue_next"))
    assert response["Location"] == reverse("desk_document", args=[second.document.id])
    assert Document.objects.get(pk=second.document.id).claimed_by == users["reviewer"]
    client = client_as("reviewer")
    response = client.post(reverse("queue_next"), **HTMX)
    # nothing else is free: the reviewer stays on the document they hold
    assert response["HX-Redirect"] == reverse("desk_document", args=[second.document.id])
    review.document_verify(document_id=second.document.id, user=users["reviewer"],
                           expected_version=Document.objects.get(pk=second.document.id).version, note="ok")
    response = client.post(reverse("queue_next"), **HTMX)
    assert response["HX-Redirect"] == reverse("queue")  # nothing left that nobody holds


# --- the two panes -----------------------------------------------------------------------------------


def test_the_desk_shows_the_fields_as_the_schema_groups_them_with_marks_and_confidence(client_as, acta):
    html = client_as("reviewer").get(reverse("desk_document", args=[acta.document.id])).content.decode()
    assert "Votes by party" in html and "Totals" in html
    table = html[html.index("Votes by party"):html.index("Totals")]
    assert table.count("<tr><th scope=\"row\">") == 38
    wrong = re.search(rf'<span class="cell flagged" id="f-rows-{acta.wrong_row}-votes-words">.*?</span>\s*</a>',
                      html, re.S)
    assert wrong and "⚠" in wrong.group(0)
    assert html.count('class="cell flagged"') == 2  # the rule involves the row's digits and its words
    assert re.search(r'class="conf" title="OCR confidence: [^"]+">OCR \d+%', html)
    assert 'id="verify-form"' in html and "edit-link" in html


def test_a_supervisor_sees_the_desk_read_only(client_as, acta):
    html = client_as("supervisor").get(reverse("desk_document", args=[acta.document.id])).content.decode()
    assert "Read-only for supervisors" in html
    assert "edit-link" not in html and 'id="verify-form"' not in html


def test_each_field_carries_its_proof_boxes_so_a_click_highlights_without_a_request(client_as, acta):
    path = f"rows[{acta.wrong_row}].votes_words"
    bbox = FieldValue.objects.get(extraction=acta.extraction, path=path).proofs[0]["bbox"]
    html = client_as("reviewer").get(reverse("desk_document", args=[acta.document.id])).content.decode()
    link = re.search(rf'<a class="field"[^>]*data-path="{re.escape(path)}"[^>]*>', html).group(0)
    boxes = re.search(r'data-boxes="1:([^"]+)"', link).group(1).split(";")[0]
    assert [float(x) for x in boxes.split(",")] == pytest.approx(
        [bbox["left"], bbox["top"], bbox["width"], bbox["height"]], abs=1e-5)
    assert 'data-label="' in link and "votes in words" in link  # the label, for the proof's heading


def test_another_page_comes_as_a_partial_with_the_words_and_lines_to_pick_from(client_as, acta):
    path = f"rows[{acta.wrong_row}].votes_words"
    fv = FieldValue.objects.get(extraction=acta.extraction, path=path)
    bbox = fv.proofs[0]["bbox"]
    response = client_as("reviewer").get(reverse("desk_proof", args=[acta.document.id]), {"field": path}, **HTMX)
    html = response.content.decode()
    assert html.lstrip().startswith('<div id="page-stage"')  # only the partial
    rect = re.search(r'<rect class="proof-box on"[^>]*x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)"', html)
    assert [float(x) for x in rect.groups()] == pytest.approx(
        [bbox["left"] * 1275, bbox["top"] * 1650, bbox["width"] * 1275, bbox["height"] * 1650], abs=0.06)
    assert reverse("desk_page_image", args=[acta.document.id, 1]) in html
    words = Block.objects.filter(document=acta.document, type="WORD").count()
    assert html.count('<rect class="w"') == words and html.count('<rect class="l"') > 0


def test_a_field_without_js_opens_the_full_desk_with_the_field_selected(client_as, acta):
    response = client_as("reviewer").get(reverse("desk_proof", args=[acta.document.id]), {"field": "acta_id"})
    assert response.status_code == 302
    html = client_as("reviewer").get(response["Location"]).content.decode()
    assert "Proof of <b>Acta id</b>" in html and 'class="proof-box on"' in html


def test_a_field_with_proofs_on_several_pages_names_each_page(client_as):
    acta = flagged_acta(seed=22, pages=3)
    add_proof_on_page(extraction=acta.extraction, path="acta_id", page_number=3)
    client = client_as("reviewer")
    desk = client.get(reverse("desk_document", args=[acta.document.id])).content.decode()
    link = re.search(r'<a class="field"[^>]*data-path="acta_id"[^>]*>', desk).group(0)
    assert re.search(r'data-boxes="1:[^"]*;3:[^"]+"', link)
    html = client.get(reverse("desk_proof", args=[acta.document.id]), {"field": "acta_id", "page": 3},
                      **HTMX).content.decode()
    assert "page 3 of 3" in html and html.count('class="proof-box on"') == 1
    assert reverse("desk_page_image", args=[acta.document.id, 3]) in html


def test_clicking_a_rule_highlights_the_proofs_of_every_field_it_involves(client_as, acta):
    violation = acta.extraction.violations.get()
    html = client_as("reviewer").get(reverse("desk_document", args=[acta.document.id]),
                                     {"violation": violation.id}).content.decode()
    involved = FieldValue.objects.filter(extraction=acta.extraction, path__in=violation.fields)
    assert html.count('class="proof-box on"') == sum(len(fv.proofs) for fv in involved) >= 2
    assert f'data-fields="rows[{acta.wrong_row}].votes|rows[{acta.wrong_row}].votes_words"' in html


def test_a_value_without_proof_says_so_plainly(client_as, acta):
    FieldValue.objects.filter(extraction=acta.extraction, path="acta_id").update(proofs=[])
    client = client_as("reviewer")
    desk = client.get(reverse("desk_document", args=[acta.document.id]), {"field": "acta_id"}).content.decode()
    assert "Acta id has no proof: the value was not found on the page." in desk
    assert 'class="proof-box on"' not in desk and '<span class="tag bad">no proof</span>' in desk


def test_an_ungrounded_value_says_what_the_cited_text_reads(client_as, acta):
    from extraction.models import Violation

    Violation.objects.create(extraction=acta.extraction, code="value_grounded", message="m", fields=["acta_id"],
                             expected="1", found="ACTA 999")
    html = client_as("reviewer").get(reverse("desk_document", args=[acta.document.id]),
                                     {"field": "acta_id"}).content.decode()
    assert "Ungrounded: the cited text reads &quot;ACTA 999&quot;" in html


def test_rule_messages_name_fields_by_their_labels_not_their_paths(client_as, acta):
    from extraction.models import Violation

    Violation.objects.create(extraction=acta.extraction, code="value_grounded", fields=["rows[28].votes_words"],
                             message='rows[28].votes_words: the answer says "UNO" but the cited text reads "DOS"')
    html = client_as("reviewer").get(reverse("desk_document", args=[acta.document.id])).content.decode()
    assert "rows[28].votes_words:" not in html
    assert "MIN — ANTONIO ECARRI: votes in words: the answer says" in html


# --- correcting --------------------------------------------------------------------------------------


def test_an_inline_edit_re_runs_the_rules_and_swaps_the_violations_out_of_band(client_as, acta):
    path = f"rows[{acta.wrong_row}].votes_words"
    client = client_as("reviewer")
    form = client.get(reverse("desk_edit", args=[acta.document.id]),
                      {"field": path, "version": acta.document.version}, **HTMX).content.decode()
    assert 'class="cell edit-form"' in form and f'name="version" value="{acta.document.version}"' in form
    response = client.post(reverse("desk_edit", args=[acta.document.id]),
                           {"field": path, "value": acta.true_words, "version": acta.document.version}, **HTMX)
    html = response.content.decode()
    cell = f"f-rows-{acta.wrong_row}-votes-words"
    assert response["HX-Retarget"] == f"#{cell}" and response["HX-Reswap"] == "outerHTML"
    assert html.lstrip().startswith(f'<span class="cell" id="{cell}">')
    assert re.search(r'<div id="violations"[^>]*hx-swap-oob="true"', html) and "All rules pass" in html
    assert re.search(r'<section id="desk-status"[^>]*hx-swap-oob="true"', html)
    assert f'id="doc-version" name="version" value="{acta.document.version + 1}"' in html
    assert '<span class="tag info">corrected</span>' in html


def cells_in(html: str) -> dict[str, bool]:
    """The cells an htmx response carries: id -> whether it is swapped out of band."""
    return {m[1]: bool(m[2]) for m in re.finditer(r'<span class="cell[^"]*" id="([^"]+)"( hx-swap-oob="true")?', html)}


def test_an_edit_sends_back_its_cell_and_out_of_band_only_the_cells_whose_rules_changed(client_as, acta):
    client = client_as("reviewer")
    html = client.get(reverse("desk_document", args=[acta.document.id])).content.decode()
    row = acta.wrong_row
    assert re.search(rf'<span class="cell flagged[^"]*" id="f-rows-{row}-votes"', html)  # the twin is flagged
    html = client.post(reverse("desk_edit", args=[acta.document.id]),
                       {"field": f"rows[{row}].votes_words", "value": acta.true_words,
                        "version": acta.document.version}, **HTMX).content.decode()
    # the twin's rule is gone, so its flag goes too; no other cell changed, so none is sent
    assert cells_in(html) == {f"f-rows-{row}-votes-words": False, f"f-rows-{row}-votes": True}
    assert not re.search(rf'<span class="cell flagged[^"]*" id="f-rows-{row}-votes"', html)
    # an edit that breaks the twin's rule again flags both cells, and still sends no other
    html = client.post(reverse("desk_edit", args=[acta.document.id]),
                       {"field": f"rows[{row}].votes_words", "value": "NUEVE NUEVE NUEVE",
                        "version": acta.document.version + 1}, **HTMX).content.decode()
    assert cells_in(html) == {f"f-rows-{row}-votes-words": False, f"f-rows-{row}-votes": True}
    assert re.search(rf'<span class="cell flagged[^"]*" id="f-rows-{row}-votes" hx-swap-oob="true"', html)


def test_an_edit_that_changes_the_panes_shape_sends_back_the_whole_pane(client_as, acta, users):
    from dataclasses import replace

    from reviewer.desk.presenters import edit_context

    edited = review.field_edit(document_id=acta.document.id, user=users["reviewer"], path="rows[0].votes",
                               raw_value="7", expected_version=acta.document.version)
    ctx = edit_context(user=users["reviewer"], edited=edited, path="rows[0].votes")
    assert ctx is not None and ctx["edited_item"]["path"] == "rows[0].votes"
    fewer_rows = {**edited.answer_before, "rows": edited.answer_before["rows"][:-1]}
    assert edit_context(user=users["reviewer"], edited=replace(edited, answer_before=fewer_rows),
                        path="rows[0].votes") is None


def _every_cell_that_reads_otherwise(edited, path: str) -> set[str]:
    """The slow, plain answer: write out every cell as the page showed it and as it is now, and compare."""
    from django.template import Context

    from reviewer.desk.cells import cell_html
    from reviewer.desk.fields import field_items

    def html(item: dict) -> str:
        return cell_html(item, context=Context(), desk_url="/d/", edit_url="/e/", can_edit=True, oob=False)

    extraction_before = Extraction(pk=edited.extraction.pk, doctype=edited.extraction.doctype,
                                   answer=edited.answer_before)
    fields = edited.fields
    _, _, before = field_items(edited.document, extraction_before, edited.stored_before, can_edit=True, fields=fields)
    _, _, after = field_items(edited.document, edited.extraction, edited.stored, can_edit=True, fields=fields)
    return {p for p, item in after.items() if p == path or html(item) != html(before[p])}


@pytest.mark.parametrize("path,value", [
    ("rows[{row}].votes_words", "{true_words}"),  # mends the twin's rule
    ("rows[{row}].votes", "9999"),  # breaks the sums and the twin
    ("rows[0].votes_words", "NUEVE"),  # breaks a row that was right
    ("null_votes", "3"),  # a total: its own rules
    ("acta_id", "x"),  # no number at all
])
def test_an_edit_sends_exactly_the_cells_a_rebuild_of_every_cell_finds_changed(acta, users, path, value):
    from reviewer.desk.presenters import edit_context

    path = path.format(row=acta.wrong_row)
    edited = review.field_edit(document_id=acta.document.id, user=users["reviewer"], path=path,
                               raw_value=value.format(true_words=acta.true_words),
                               expected_version=acta.document.version)
    ctx = edit_context(user=users["reviewer"], edited=edited, path=path)
    sent = {ctx["edited_item"]["path"], *(it["path"] for it in ctx["changed_items"])}
    assert sent == _every_cell_that_reads_otherwise(edited, path)


def test_a_proof_moved_to_words_that_do_not_show_the_value_sends_the_cell_with_its_new_note(acta, users):
    from reviewer.desk.presenters import edit_context

    path = "rows[0].votes"
    value = str(acta.extraction.answer["rows"][0]["votes"]["value"])
    other = Block.objects.filter(document=acta.document, type="WORD").exclude(text__contains=value).first()
    edited = review.field_take_from_page(document_id=acta.document.id, user=users["reviewer"], path=path,
                                         block_ids=[other.id], expected_version=acta.document.version,
                                         proof_only=True)
    ctx = edit_context(user=users["reviewer"], edited=edited, path=path)
    assert ctx["edited_item"]["ungrounded"]
    sent = {ctx["edited_item"]["path"], *(it["path"] for it in ctx["changed_items"])}
    assert sent == _every_cell_that_reads_otherwise(edited, path)


def test_an_invalid_value_comes_back_in_the_form_with_the_reason(client_as, acta):
    response = client_as("reviewer").post(reverse("desk_edit", args=[acta.document.id]),
                                          {"field": "rows[0].votes", "value": "many", "version": acta.document.version},
                                          **HTMX)
    html = response.content.decode()
    assert response["HX-Retarget"] == "#f-rows-0-votes" and 'role="alert"' in html and "not a valid value" in html
    assert 'value="many"' in html


def test_the_second_reviewer_to_save_gets_a_clear_message_and_loses_nothing(client_as, acta, users):
    review.field_edit(document_id=acta.document.id, user=users["admin"], path="rows[0].votes_words",
                      raw_value="CERO CERO CERO CERO", expected_version=acta.document.version)
    review.document_release(document_id=acta.document.id, user=users["admin"])
    html = client_as("reviewer").post(reverse("desk_edit", args=[acta.document.id]),
                                      {"field": "rows[0].votes_words", "value": "UNO",
                                       "version": acta.document.version}, **HTMX).content.decode()
    assert "Someone saved this document after you opened it" in html and "Reload" in html
    assert FieldValue.objects.get(extraction=acta.extraction, path="rows[0].votes_words").value == "CERO CERO CERO CERO"


def test_model_and_ocr_text_are_escaped_on_the_desk(client_as, acta, users):
    review.field_edit(document_id=acta.document.id, user=users["reviewer"], path="acta_id",
                      raw_value="<script>alert(1)</script>", expected_version=acta.document.version)
    html = client_as("reviewer").get(reverse("desk_document", args=[acta.document.id])).content.decode()
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


# --- deciding ----------------------------------------------------------------------------------------


def test_verify_with_failing_rules_asks_for_a_note_then_verifies(client_as, acta):
    client = client_as("reviewer")
    url = reverse("desk_verify", args=[acta.document.id])
    response = client.post(url, {"version": acta.document.version}, **HTMX)
    assert response["HX-Retarget"] == "#desk-status"
    assert "1 rule still fail: write why you verify anyway." in response.content.decode()
    response = client.post(url, {"version": acta.document.version, "note": "the sheet is wrong"}, **HTMX)
    assert response["HX-Redirect"] == reverse("queue")  # the next document, and here none is left
    assert Document.objects.get(pk=acta.document.id).review_status == "verified"
    html = client.get(reverse("desk_document", args=[acta.document.id])).content.decode()
    assert "Verified by reviewer: read-only" in html and "edit-link" not in html
    assert '<span id="status-pill" class="status status-verified">verified</span>' in html


def test_a_supervisor_sends_a_passed_document_back_and_reviewers_may_then_edit_it(client_as):
    acta = flagged_acta(seed=23, wrong_row=None)
    client = client_as("supervisor")
    html = client.get(reverse("desk_document", args=[acta.document.id])).content.decode()
    assert "Send back" in html and "read-only unless a supervisor sends it back" in html
    client.post(reverse("desk_send_back", args=[acta.document.id]), {"reason": "check row 3"})
    assert Document.objects.get(pk=acta.document.id).status == "flagged"
    html = client_as("reviewer").get(reverse("desk_document", args=[acta.document.id])).content.decode()
    assert "edit-link" in html


def test_reject_records_the_reason(client_as, acta):
    client_as("reviewer").post(reverse("desk_reject", args=[acta.document.id]),
                               {"version": acta.document.version, "reason": "two sheets in one scan"})
    assert ReviewEvent.objects.get(document=acta.document, kind="reject").note == "two sheets in one scan"


# --- pages -------------------------------------------------------------------------------------------


def test_the_page_image_is_streamed_privately_through_the_view(client_as, acta):
    response = client_as("reviewer").get(reverse("desk_page_image", args=[acta.document.id, 1]))
    assert response["Content-Type"] == "image/png" and response["Cache-Control"].startswith("private")
    assert Image.open(io.BytesIO(b"".join(response.streaming_content))).size == (1275, 1650)
    assert client_as("reviewer").get(reverse("desk_page_image", args=[acta.document.id, 9])).status_code == 404


def test_the_annotated_download_draws_the_proof_boxes_on_the_page(client_as, acta):
    path = f"rows[{acta.wrong_row}].votes_words"
    bbox = FieldValue.objects.get(extraction=acta.extraction, path=path).proofs[0]["bbox"]
    response = client_as("reviewer").get(reverse("desk_page_annotated", args=[acta.document.id, 1]), {"field": path})
    assert response["Content-Disposition"].startswith("attachment;")
    img = Image.open(io.BytesIO(response.content)).convert("RGB")
    x0 = int(bbox["left"] * img.width) - 2
    y_mid = int((bbox["top"] + bbox["height"] / 2) * img.height)
    r, g, b = img.getpixel((x0 + 1, y_mid))
    assert r > 180 and g < 100 and b < 100  # the red outline
    r, g, b = img.getpixel((x0 - 20, y_mid))
    assert (r, g, b) == (255, 255, 255)  # outside the box the page is untouched


# --- history -----------------------------------------------------------------------------------------


def test_history_shows_rounds_rules_stop_reason_and_every_review_event(client_as, acta, users):
    review.field_edit(document_id=acta.document.id, user=users["reviewer"], path=f"rows[{acta.wrong_row}].votes_words",
                      raw_value=acta.true_words, expected_version=acta.document.version)
    html = client_as("supervisor").get(reverse("desk_history", args=[acta.document.id])).content.decode()
    assert "Round 1" in html and "A row&#x27;s digits and words disagree" in html
    assert '<b class="stop-reason">exhausted</b>' in html
    party = acta.extraction.answer["rows"][acta.wrong_row]["party"]
    assert f"{party} — " in html and ": votes in words</td>" in html and acta.true_words in html
    assert f"rows[{acta.wrong_row}]" not in html


def test_history_shows_what_the_model_changed_between_rounds(client_as, acta):
    from extraction.models import Round
    from extraction.rules.answers import set_field

    first = Round.objects.get(extraction=acta.extraction, number=1)
    Round.objects.create(extraction=acta.extraction, number=2, state="completed",
                         parsed=set_field(first.parsed, "rows[0].votes", 4242), violations=[])
    html = client_as("reviewer").get(reverse("desk_history", args=[acta.document.id])).content.decode()
    assert re.search(r"<td>PSUV — NICOLAS MADURO: votes</td><td>\d+</td><td>4242</td>", html)
    assert "All rules passed." in html


# --- speed -------------------------------------------------------------------------------------------


def test_a_page_switch_costs_a_constant_number_of_queries(client_as, django_assert_max_num_queries):
    acta = flagged_acta(seed=24, pages=3, filler_words=150)
    client = client_as("reviewer")
    url = reverse("desk_proof", args=[acta.document.id])
    client.get(url, {"page": 1}, **HTMX)
    with django_assert_max_num_queries(5):
        response = client.get(url, {"page": 2}, **HTMX)
    assert "page 2 of 3" in response.content.decode()


def test_the_presence_poll_costs_a_constant_number_of_queries(client_as, acta, django_assert_max_num_queries):
    client = client_as("reviewer")
    url = reverse("desk_presence", args=[acta.document.id])
    client.get(url, {"version": acta.document.version}, **HTMX)
    with django_assert_max_num_queries(5):
        response = client.get(url, {"version": acta.document.version}, **HTMX)
    assert "Nobody else has this document open." in response.content.decode()


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the counts are PostgreSQL's, where an edit's "
                    "statements go together (extraction/sql_batch.py); the suite runs on it")
@pytest.mark.parametrize("kind", ["typed", "taken from the page"])
def test_an_edit_costs_a_constant_number_of_queries(client_as, django_assert_max_num_queries, kind):
    # The test's read of the version; the session, the user with their roles; then, in a transaction (a
    # savepoint here), the claim with the extraction, its document and batch, the fields, the violations and
    # the blocks' check (a take's picked blocks too), all sent together, and the writes (sent together). A
    # column an edit reads lazily (the edit's read names the ones it needs) would add one here.
    from extraction.models import Block, Document

    acta = flagged_acta(seed=25, pages=2, filler_words=60)
    client = client_as("reviewer")
    words = list(Block.objects.filter(document=acta.document, type="WORD", text__regex=r"^[0-9]{4}$")
                 .values_list("id", flat=True)[:3])

    def edit(i: int):
        version = Document.objects.values_list("version", flat=True).get(pk=acta.document.id)
        if kind == "typed":
            return client.post(reverse("desk_edit", args=[acta.document.id]),
                               {"field": "rows[0].votes", "value": str(10 + i), "version": version}, **HTMX)
        return client.post(reverse("desk_take", args=[acta.document.id]),
                           {"field": "rows[0].votes", "blocks": str(words[i]), "version": version}, **HTMX)

    edit(0)
    with django_assert_max_num_queries(7):
        response = edit(1)
    assert response.status_code == 200 and response["HX-Retarget"] == "#f-rows-0-votes"


# --- confidence ----------------------------------------------------------------------------------------


def test_the_desk_marks_fields_under_the_bar_and_lists_them_least_sure_first(client_as, settings):
    settings.DESK_LOW_CONFIDENCE = 0.8
    acta = flagged_acta(seed=61)
    scores = {"rows[2].votes": 0.42, "null_votes": 0.1, "rows[5].votes_words": 0.79, "acta_id": 0.95}
    for path, score in scores.items():
        FieldValue.objects.filter(extraction=acta.extraction, path=path).update(field_confidence=score)
    html = client_as("reviewer").get(reverse("desk_document", args=[acta.document.id])).content.decode()
    listed = re.findall(r'class="unsure-field" href="[^"]*" data-path="([^"]+)"', html)
    assert listed == ["null_votes", "rows[2].votes", "rows[5].votes_words"]  # the 95% code is not listed
    assert "42% sure" in html and "10% sure" in html and "95% sure" not in html
    assert html.count('class="cell unsure"') + html.count('class="cell flagged unsure"') == 3


def test_a_desk_without_confidences_lists_no_least_sure_fields(client_as):
    acta = flagged_acta(seed=62)
    html = client_as("reviewer").get(reverse("desk_document", args=[acta.document.id])).content.decode()
    assert "Least sure fields" not in html and "unsure" not in html


def test_a_broken_sum_is_labelled_with_its_total_and_the_desk_opens_on_that_cell(client_as):
    from extraction.doctypes.acta.rules import sum_valid_votes
    from extraction.pipeline.extract import violations_save
    from extraction.rules.answers import get_value

    acta = flagged_acta(seed=41, wrong_row=None)
    answer = acta.extraction.answer
    answer["valid_votes"]["value"] = get_value(answer, "valid_votes") + 2  # the rows now add up to 2 fewer
    (broken,) = sum_valid_votes(answer, None)
    assert broken.fields[0] == "rows[0].votes" and broken.subject == "valid_votes"
    violations_save(extraction=acta.extraction, violations=[broken])
    Document.objects.filter(pk=acta.document.pk).update(status="flagged")

    html = client_as("reviewer").get(reverse("desk_document", args=[acta.document.id])).content.decode()
    rule = re.search(r'<a class="rule"[^>]*data-first="([^"]*)"[^>]*>(.*?)</a>', html, re.S)
    assert rule.group(1) == "valid_votes"
    assert "Valid votes" in rule.group(2) and "votes …" not in rule.group(2)
    assert 'data-lead="valid_votes"' in html
