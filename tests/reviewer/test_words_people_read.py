"""Issue 28, people's words and figures that read right: history events, the confidence page's field kinds,
desk rule messages, the dashboard's runs, its live figures, the least sure fields, the cells' one figure,
field-sample rates in percent and the Textract input only where it helps."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from extraction.models import Document, Extraction, FieldValue, ReviewEvent, Round, Violation
from extraction.pipeline.rerun import batch_rerun
from reviewer.audit import field_audit
from reviewer.desk.fields import labels_for
from reviewer.desk.selectors import rule_label
from tests.support.dashboard_data import make_batch, make_doc

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def _history(client, doc) -> str:
    html = client.get(reverse("desk_history", args=[doc.id])).content.decode()
    return html[html.index("<h2>Review</h2>"):]


def _label(doc, path: str) -> str:
    return labels_for(Extraction.objects.current_for(doc)).of(path)


def test_history_says_a_field_audit_in_words_naming_the_field_as_people_do(client_as, users):
    batch = make_batch("audited")
    doc = make_doc(batch)
    sample = field_audit.field_audit_draw(batch=batch, user=users["supervisor"], per_stratum=1, seed=3)
    item = sample.items.filter(kind="rows[].votes").first()
    field_audit.field_audit_decide(item_id=item.id, user=users["supervisor"], verdict="right")
    review = _history(client_as("supervisor"), doc)
    assert "{&#x27;" not in review and "verdict" not in review and "field_sample" not in review
    assert f"Field audit {sample.id}: found the value right" in review
    assert _label(doc, item.path) in review and item.path not in review


def test_history_says_a_rerun_in_words_with_its_scope_and_settings(client_as, users):
    batch = make_batch("rerun")
    doc = make_doc(batch, status="flagged")
    batch_rerun(batch=batch, user=users["admin"], scope="flagged",
                options={"llm_model": "small-model", "llm_input": "vision", "max_rounds": 3})
    review = _history(client_as("admin"), doc)
    assert ReviewEvent.objects.filter(document=doc, kind="rerun").exists()
    assert "{&#x27;" not in review and "options" not in review
    assert "Re-run of the flagged documents, with model small-model, input vision, at most 3 rounds" in review
    assert "Was flagged" in review and "now queued" in review


def test_an_edit_in_the_history_still_shows_the_values_before_and_after(client_as, users):
    doc = make_doc(make_batch("edited"), status="flagged")
    ReviewEvent.objects.create(document=doc, user=users["reviewer"], kind="edit", field="rows[2].votes",
                               before=12, after=21)
    review = _history(client_as("reviewer"), doc)
    assert re.search(r"<td>12</td><td>21</td>", review)


def test_the_confidence_page_names_each_kind_of_field_as_people_do_and_its_rate_in_percent(client_as):
    doc = make_doc(make_batch(), status="flagged", review_status="corrected")
    for fv in FieldValue.objects.filter(extraction__document=doc):
        wrong = fv.path == "rows[1].votes_words"
        FieldValue.objects.filter(pk=fv.pk).update(field_confidence=0.9, signals={"ocr_doubt": 0.1},
                                                   confidence_version=0, corrected=wrong,
                                                   value="fixed" if wrong else fv.value)
    html = client_as("supervisor").get(reverse("confidence_page", args=["acta"])).content.decode()
    strata = html[html.index('id="strata"'):html.index('id="bands"')]
    row = re.search(r'<tr data-kind="rows\[\]\.votes_words"><th scope="row">([^<]+)</th>(.*?)</tr>', strata, re.S)
    assert row, strata
    label = labels_for(Extraction.objects.current_for(doc)).of_family("rows[].votes_words")
    assert row.group(1) == label and "votes_words" not in row.group(1) and "rows[" not in row.group(1)
    rate = re.search(r"<td data-rate>([^<]+)</td>", row.group(2)).group(1)
    assert re.fullmatch(r"\d+\.\d % \(\d+\.\d–\d+\.\d %\)", rate), rate


def test_a_desk_rule_message_naming_a_field_by_its_key_reads_in_peoples_words(client_as):
    doc = make_doc(make_batch("party"), status="flagged")
    ext = Extraction.objects.current_for(doc)
    message = "Row 29 (PFV): votes_words cite a line of party PPT, not of PFV; read this row's own line"
    Violation.objects.create(extraction=ext, code="row_proof_party", fields=["rows[28].votes_words"], message=message)
    html = client_as("reviewer").get(reverse("desk_document", args=[doc.id])).content.decode()
    shown = re.findall(r'<span class="rule-message">([^<]*)</span>', html)
    assert any("cite a line of party PPT" in m for m in shown), shown
    assert not any("votes_words" in m for m in shown)
    column = _label(doc, "rows[28].votes_words").rpartition(": ")[2]
    assert any(f"{column} cite a line" in m for m in shown), shown
    assert Violation.objects.get(code="row_proof_party").message == message  # what the model reads is kept


def test_documents_run_more_than_once_name_the_rules_they_broke(client_as):
    batch = make_batch("twice")
    doc = make_doc(batch, status="flagged", rounds=[["sum_valid_votes"]])
    again = Extraction.objects.create(document=doc, doctype="acta", reader="template", stop_reason="exhausted",
                                      best_round=1, answer=Extraction.objects.current_for(doc).answer,
                                      settings={"model": "", "input": "ocr", "max_rounds": 1})
    Round.objects.create(extraction=again, number=1, state=Round.State.COMPLETED, parsed=again.answer,
                         violations=[{"code": "sum_valid_votes", "message": "x", "fields": ["valid_votes"]}])
    html = client_as("admin").get(reverse("batch_dashboard", args=[batch.id])).content.decode()
    runs = html[html.index("Documents run more than once"):]
    runs = runs[:runs.index("</table>")]
    assert rule_label("sum_valid_votes") != "sum_valid_votes"
    assert runs.count(rule_label("sum_valid_votes")) == 2 and "<code>sum_valid_votes</code>" not in runs


def test_the_dashboard_keeps_polling_when_idle_and_wakes_up_when_a_rerun_queues_documents(client_as):
    batch = make_batch("live")
    doc = make_doc(batch, status="passed")
    client = client_as("admin")
    url = reverse("batch_dashboard", args=[batch.id])
    done = client.get(url, {"partial": "live"}, **HTMX)
    assert done.status_code == 200  # never 286: that would stop the polling for good
    html = done.content.decode()
    assert 'hx-trigger="every 10s"' in html and "idle=1" in html and 'id="dashboard-states"' in html
    assert client.get(url, {"partial": "live", "idle": "1"}, **HTMX).status_code == 204  # nothing to redraw

    Document.objects.filter(pk=doc.pk).update(status="queued")  # a re-run queued it again
    woke = client.get(url, {"partial": "live", "idle": "1"}, **HTMX)
    html = woke.content.decode()
    assert woke.status_code == 200 and 'hx-trigger="every 2s"' in html and "idle=1" not in html
    assert "1 document queued or processing" in html
    states = html[html.index('id="dashboard-states"'):]
    assert "queued: 1" in states[:states.index("</section>")]


def test_a_corrected_field_leaves_the_least_sure_and_a_verified_document_lists_none(client_as, settings):
    settings.DESK_LOW_CONFIDENCE = 0.8
    doc = make_doc(make_batch("sure"), status="flagged")
    FieldValue.objects.filter(extraction__document=doc, path__in=["rows[2].votes", "null_votes"]).update(
        field_confidence=0.01)
    client = client_as("reviewer")

    def listed() -> list[str]:
        html = client.get(reverse("desk_document", args=[doc.id])).content.decode()
        return re.findall(r'class="unsure-field" href="[^"]*" data-path="([^"]+)"', html)

    assert sorted(listed()) == ["null_votes", "rows[2].votes"]
    FieldValue.objects.filter(extraction__document=doc, path="rows[2].votes").update(corrected=True, value=99)
    assert listed() == ["null_votes"]
    Document.objects.filter(pk=doc.pk).update(review_status="verified")
    assert listed() == []


def test_an_unsure_cell_shows_one_figure_and_says_what_the_ocr_figure_means(client_as, settings):
    settings.DESK_LOW_CONFIDENCE = 0.8
    doc = make_doc(make_batch("cells"), status="flagged")
    FieldValue.objects.filter(extraction__document=doc).update(confidence=1.0)
    FieldValue.objects.filter(extraction__document=doc, path="null_votes").update(field_confidence=0.01)
    html = client_as("reviewer").get(reverse("desk_document", args=[doc.id])).content.decode()
    unsure = re.search(r'<span class="cell[^"]* unsure" id="f-null-votes">(.*?)</a>', html, re.S).group(1)
    assert "1% sure" in unsure and 'class="conf"' not in unsure and "100%" not in unsure.split("title=")[-1][-20:]
    assert "The OCR read its words at 100% confidence: clear print, not a right value." in unsure
    sure = re.search(r'<span class="cell[^"]*" id="f-valid-votes">(.*?)</a>', html, re.S).group(1)
    assert re.search(r'class="conf" title="OCR confidence: [^"]*not whether the value is right">OCR 100%', sure)


def test_field_sample_rates_are_percentages_like_the_other_pages(client_as, users):
    batch = make_batch("rates")
    for _ in range(3):
        make_doc(batch)
    sample = field_audit.field_audit_draw(batch=batch, user=users["supervisor"], per_stratum=2, seed=4)
    first, second = sample.items.filter(kind="acta_id").order_by("position")[:2]
    field_audit.field_audit_decide(item_id=first.id, user=users["supervisor"], verdict="right")
    field_audit.field_audit_decide(item_id=second.id, user=users["supervisor"], verdict="wrong", note="misread")
    html = client_as("supervisor").get(reverse("field_sample", args=[sample.id])).content.decode()
    row = re.search(r'<tr data-kind="acta_id">.*?</tr>', html, re.S).group(0)
    rate = re.search(r"<td data-rate>([^<]+)</td>", row).group(1)
    assert rate.startswith("50.0 % (") and rate.endswith(" %)") and "0.500" not in rate


def test_the_textract_input_is_offered_behind_a_summary_on_failed_or_flagged_rows_only(client_as):
    batch = make_batch("rows")
    passed = make_doc(batch, status="passed", name="fine.pdf")
    failed = make_doc(batch, status="failed", name="broken.pdf", extraction=False)
    html = client_as("admin").get(reverse("batch_detail", args=[batch.id])).content.decode()

    def row(doc) -> str:
        return re.search(rf'<tr data-document="{doc.id}">.*?</tr>', html, re.S).group(0)

    assert 'name="textract_json"' not in row(passed)
    broken = row(failed)
    assert broken.index("<details") < broken.index("<summary>") < broken.index('name="textract_json"') \
        < broken.index("</details>")


def _text(html: str) -> str:
    """What a person reads: the page without its tags (so without addresses and attributes)."""
    return re.sub(r"<[^>]+>", " ", html)


def test_the_dashboard_and_the_history_name_broken_rules_in_words_and_never_by_their_codes(client_as):
    batch = make_batch("coded")
    doc = make_doc(batch, status="flagged", rounds=[["sum_valid_votes", "valid_plus_null_total"]])
    client = client_as("admin")
    dashboard = client.get(reverse("batch_dashboard", args=[batch.id])).content.decode()
    history = client.get(reverse("desk_history", args=[doc.id])).content.decode()
    for code in ("sum_valid_votes", "valid_plus_null_total"):
        assert rule_label(code) in dashboard and rule_label(code) in history
        assert code not in _text(dashboard) and code not in _text(history)
    assert "rule=sum_valid_votes" in dashboard  # the queue's filter still takes the code
