"""Types defined in the app: an admin's definition is checked, previewed, tried on a document, saved as
versions; batches run under a version, and reviewers read the admin's sentence for a broken rule."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from extraction.doctypes.defined.check import spec_parse
from extraction.doctypes.defined.files import spec_from_yaml, spec_to_yaml
from extraction.doctypes.services import doctype_version_save
from extraction.models import Batch, DocTypeVersion, Document, Extraction
from extraction.pipeline.ingest import IncomingFile, batch_create_from_files
from extraction.pipeline.process import document_process
from reviewer.desk.selectors import batch_list_with_counts, queue_documents_open
from tests.support.doctype_forms import posted
from tests.support.receipts import OLD_RULE, reads_receipts, receipt

pytestmark = pytest.mark.django_db

def post_form(rule_after: str = "2020-01-01", **extra: str) -> dict[str, Any]:
    """The editor's form for a receipt type with one rule of the admin's own."""
    form = {
        "name": "shop_receipt", "label": "Shop receipt", "instructions": "You read shop receipts.",
        "field-0-key": "company", "field-0-label": "Company", "field-0-kind": "text", "field-0-required": "on",
        "field-1-key": "date", "field-1-label": "Date", "field-1-kind": "date", "field-1-required": "on",
        "field-2-key": "total", "field-2-label": "Total", "field-2-kind": "money", "field-2-required": "on",
        "rule-0-code": "policy_date", "rule-0-label": "Older than the policy allows", "rule-0-kind": "date_range",
        "rule-0-field": "date", "rule-0-after": rule_after, "rule-0-message": OLD_RULE,
    }
    form.update(extra)
    return form


def test_a_definition_with_a_mistake_is_refused_with_its_sentence_and_saves_nothing(client_as):
    client = client_as("admin")
    response = client.post("/types/new/", {**post_form(), "rule-0-field": "day", "action": "save"})
    assert response.status_code == 400
    # named as the page names the rule, in the list and beside the rule itself
    assert "Rule 1, Older than the policy allows: its field &#x27;day&#x27; is not a field of this type" in response.text
    rule = response.text[response.text.index('id="rule-0"'):]
    assert '<p class="error rule-problem">its field &#x27;day&#x27; is not a field of this type</p>' in rule[:600]
    assert not DocTypeVersion.objects.exists()


def test_a_rule_with_a_misshapen_date_is_told_so_in_words_beside_it(client_as):
    response = client_as("admin").post("/types/new/", {**post_form(rule_after="1/1/2020"), "action": "preview"})
    assert response.status_code == 400
    assert "Rule 1, Older than the policy allows: On or after: write a date as YYYY-MM-DD" in response.text
    assert "rules.0.after" not in response.text and "String should match" not in response.text


def test_the_preview_shows_the_instructions_and_the_answers_json_schema(client_as):
    response = client_as("admin").post("/types/new/", {**post_form(), "action": "preview"})
    assert response.status_code == 200
    prompt = response.context["preview"]["prompt"]
    assert prompt.startswith("You read shop receipts.") and "- date: Date. (as YYYY-MM-DD; required)" in prompt
    assert '"total"' in response.context["preview"]["schema"]


def test_saving_makes_a_new_version_only_when_something_changed(client_as, users):
    client = client_as("admin")
    assert client.post("/types/new/", {**post_form(), "action": "save"}).status_code == 302
    assert client.post("/types/shop_receipt/", {**post_form(), "action": "save"}).status_code == 302
    assert list(DocTypeVersion.objects.values_list("version", flat=True)) == [1]
    client.post("/types/shop_receipt/", {**post_form(rule_after="2021-01-01"), "action": "save"})
    assert list(DocTypeVersion.objects.values_list("version", flat=True)) == [2, 1]
    assert DocTypeVersion.objects.get(version=2).created_by == users["admin"]


def test_a_built_in_types_name_cannot_be_taken(client_as):
    response = client_as("admin").post("/types/new/", {**post_form(), "name": "invoice", "action": "save"})
    assert response.status_code == 400 and "built-in type" in response.text


def test_trying_a_draft_reads_one_document_and_keeps_it_out_of_lists_and_queue(client_as, llm_env):
    llm_env.always(reads_receipts)
    sample = SimpleUploadedFile("old.pdf", receipt("02/03/2019"), content_type="application/pdf")
    response = client_as("admin").post("/types/new/", {**post_form(), "action": "try", "sample": sample,
                                                       "ocr_engine": "pdf-text"}, follow=True)
    assert response.redirect_chain[0][0].startswith("/types/new/?trial=")  # the draft comes back by GET
    queued = response.context["trial"]
    assert queued.status == "queued" and not queued.pages.exists()  # the request read nothing: a worker does
    assert 'id="trial-progress"' in response.text and "waiting for a worker" in response.text
    document_process(document_id=queued.id)  # the worker
    response = client_as("admin").get(response.redirect_chain[0][0])
    trial = response.context["trial"]
    assert trial.status == "flagged" and trial.batch.trial
    extraction = Extraction.objects.get(document=trial)
    (violation,) = extraction.violations.all()
    assert violation.message.startswith(OLD_RULE.replace("{found}", "2019-03-02"))
    assert not DocTypeVersion.objects.exists()  # nothing saved by trying
    assert trial.batch not in batch_list_with_counts(teams=[trial.batch.team_id]) and trial not in queue_documents_open()
    desk = client_as("admin").get(f"/documents/{trial.id}/")
    assert desk.status_code == 200 and "outside the policy" in desk.text
    draft = client_as("admin").get(f"/types/new/?trial={trial.batch.id}")
    assert draft.context["data"]["rules"][0]["message"] == OLD_RULE


def test_a_trials_progress_is_polled_until_it_is_read_and_then_shows_the_result(client_as, llm_env):
    llm_env.always(reads_receipts)
    client = client_as("admin")
    sample = SimpleUploadedFile("new.pdf", receipt("06/05/2024"), content_type="application/pdf")
    url = client.post("/types/new/", {**post_form(), "action": "try", "sample": sample, "ocr_engine": "pdf-text"})["Location"]
    progress = client.get(url + "&partial=trial", HTTP_HX_REQUEST="true").content.decode()
    assert progress.lstrip().startswith('<section id="trial-progress"') and 'hx-trigger="every 2s"' in progress
    assert "<form" not in progress  # the partial only
    document_process(document_id=Batch.objects.get(trial=True).documents.get().id)
    done = client.get(url + "&partial=trial", HTTP_HX_REQUEST="true").content.decode()
    assert 'id="trial-result"' in done and "passed" in done and "hx-trigger" not in done


def test_a_trial_of_a_long_scan_is_refused_at_once_without_reading_it(client_as, settings):
    import pymupdf

    settings.TRIAL_MAX_PAGES = 5
    pdf = pymupdf.open()
    for _ in range(150):
        pdf.new_page()
    sample = SimpleUploadedFile("scan.pdf", pdf.tobytes(), content_type="application/pdf")
    response = client_as("admin").post("/types/new/", {**post_form(), "action": "try", "sample": sample,
                                                       "ocr_engine": "pdf-text"}, follow=True)
    trial = response.context["trial"]
    assert (trial.status, trial.error_code) == ("failed", "too_many_pages") and not trial.pages.exists()
    assert "over the limit of 5 pages. A trial reads a short sample" in response.text
    assert 'id="trial-progress"' not in response.text and 'id="trial-desk"' not in response.text


def _batch(admin, tmp_path, *dates: str) -> Batch:
    incoming = []
    for i, date in enumerate(dates):
        path = tmp_path / f"r{i}.pdf"
        path.write_bytes(receipt(date))
        incoming.append(IncomingFile(path.name, path))
    batch = batch_create_from_files(name="receipts", doctype="shop_receipt", ocr_engine="pdf-text", files=incoming,
                                    user=admin, queue=False)
    for doc in batch.documents.all():
        document_process(document_id=doc.id)
    return batch


def test_an_extraction_keeps_the_version_it_ran_under_and_a_rerun_takes_the_new_one(users, llm_env, client_as,
                                                                                    tmp_path):
    llm_env.always(reads_receipts)
    doctype_version_save(data=_definition(after="2020-01-01"), user=users["admin"])
    batch = _batch(users["admin"], tmp_path, "02/03/2019", "06/05/2024")
    assert batch.doctype_version == 1
    old = batch.documents.get(filename="r0.pdf")
    assert old.status == "flagged" and batch.documents.get(filename="r1.pdf").status == "passed"
    first = Extraction.objects.get(document=old)
    assert first.doctype_version == 1

    doctype_version_save(data=_definition(after="2018-01-01"), user=users["admin"])  # v2 accepts 2019
    desk = client_as("reviewer").get(f"/documents/{old.id}/")
    assert "outside the policy" in desk.text  # the past result is judged as it was read
    admin = client_as("admin")
    assert "v2, the type's live version" in admin.get(f"/batches/{batch.id}/rerun/").text
    admin.post(f"/batches/{batch.id}/rerun/", {"scope": "flagged", "newest_type": "on"})
    document_process(document_id=old.id)
    old.refresh_from_db()
    rerun = Extraction.objects.filter(document=old).order_by("-id").first()
    assert (rerun.doctype_version, old.status) == (2, "passed")
    assert first.violations.filter(code="policy_date").exists()  # and it stays as it was
    runs = admin.get(f"/batches/{batch.id}/dashboard/").context["runs"]["runs"]
    assert [r["type_version"] for r in runs] == ["1", "2"]


def test_a_reviewer_reads_the_admins_sentence_for_a_broken_rule(users, llm_env, client_as, tmp_path):
    llm_env.always(reads_receipts)
    doctype_version_save(data=_definition(after="2020-01-01"), user=users["admin"])
    batch = _batch(users["admin"], tmp_path, "02/03/2019")
    flagged = Document.objects.get(batch=batch)
    queue = client_as("reviewer").get("/queue/")
    assert flagged.filename in queue.text
    desk = client_as("reviewer").get(f"/documents/{flagged.id}/")
    assert "Receipts from before 2020 are outside the policy (this one is dated 2019-03-02)." in desk.text


def test_an_upload_can_choose_a_defined_type(client_as, users):
    doctype_version_save(data=_definition(after="2020-01-01"), user=users["admin"])
    page = client_as("admin").get("/batches/new/")
    assert "Shop receipt (defined, v1)" in page.text


def _definition(*, after: str) -> dict[str, Any]:
    return {"name": "shop_receipt", "label": "Shop receipt", "instructions": "You read shop receipts.",
            "fields": [{"key": "company", "label": "Company", "required": True},
                       {"key": "date", "label": "Date", "kind": "date", "required": True},
                       {"key": "total", "label": "Total", "kind": "money", "required": True}],
            "rules": [{"code": "policy_date", "label": "Older than the policy allows", "kind": "date_range",
                       "field": "date", "after": after, "message": OLD_RULE}]}


def test_a_definition_round_trips_through_the_export_and_import_commands(users, tmp_path):
    from django.core.management import call_command

    doctype_version_save(data=_definition(after="2020-01-01"), user=users["admin"])
    first = tmp_path / "v1.yaml"
    call_command("doctypes", "export", "shop_receipt", "-o", str(first))
    edited = first.read_text().replace("2020-01-01", "2021-01-01")
    (tmp_path / "edited.yaml").write_text(edited)
    call_command("doctypes", "import", str(tmp_path / "edited.yaml"), "--user", "admin")
    assert list(DocTypeVersion.objects.values_list("version", flat=True)) == [2, 1]
    again = tmp_path / "v2.yaml"
    call_command("doctypes", "export", "shop_receipt", "-o", str(again))
    assert again.read_text() == edited  # what was imported is what comes out
    call_command("doctypes", "import", str(again))
    assert DocTypeVersion.objects.count() == 2  # unchanged: no new version


def test_importing_a_broken_definition_says_what_is_wrong(tmp_path, db):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nlabel: Bad\nfields: [{key: total, label: Total, kind: money}]\n"
                   "rules: [{code: c, label: C, kind: column_sum, column: lines.amount, field: total, message: m}]\n")
    with pytest.raises(CommandError, match="its column 'lines.amount' is not a field of this type"):
        call_command("doctypes", "import", str(bad))
    assert not DocTypeVersion.objects.exists()


def test_a_shipped_definition_exports_as_its_file(tmp_path, db):
    from django.core.management import call_command

    out = tmp_path / "receipt.yaml"
    call_command("doctypes", "export", "receipt", "-o", str(out))
    shipped = Path(__file__).resolve().parents[3] / "extraction" / "doctypes" / "receipt.yaml"
    assert spec_from_yaml(out.read_text()) == spec_from_yaml(shipped.read_text())


def test_a_new_type_can_start_from_a_shipped_definition(client_as):
    page = client_as("admin").get("/types/new/?from=receipt")
    assert page.status_code == 200
    assert page.context["data"]["name"] == "" and [f["key"] for f in page.context["data"]["fields"]][:2] == [
        "company", "date"]
    assert client_as("admin").get("/types/new/?from=acta").status_code == 404  # written in code: nothing to copy


def test_a_copy_of_the_shipped_invoice_saves_whole_from_the_editor(client_as):
    page = client_as("admin").get("/types/new/?from=invoice")
    html = page.content.decode()
    assert "Line {row}[ ({description})]" in html and "issuer_is_seller" in html
    post = posted({**page.context["data"], "name": "my_invoice", "label": "My invoice"})
    client_as("admin").post("/types/new/", {**post, "action": "save"})
    saved = spec_parse(DocTypeVersion.objects.get(name="my_invoice").definition)
    shipped = spec_from_yaml((Path(__file__).resolve().parents[3] / "extraction/doctypes/invoice.yaml").read_text())
    assert saved.model_copy(update={"name": "invoice", "label": "Invoice"}) == shipped


def test_a_defined_rules_label_names_it_in_the_queue_and_filters(users, llm_env, client_as, tmp_path):
    llm_env.always(reads_receipts)
    doctype_version_save(data=_definition(after="2020-01-01"), user=users["admin"])
    _batch(users["admin"], tmp_path, "02/03/2019")
    queue = client_as("reviewer").get("/queue/")
    assert "Older than the policy allows" in queue.text


def test_an_admins_older_trials_are_deleted_with_their_files(client_as, llm_env):
    llm_env.always(reads_receipts)
    client = client_as("admin")
    for i in range(5):
        sample = SimpleUploadedFile(f"t{i}.pdf", receipt("06/05/2024"), content_type="application/pdf")
        client.post("/types/new/", {**post_form(), "action": "try", "sample": sample, "ocr_engine": "pdf-text"})
    kept = Batch.objects.filter(trial=True).order_by("id")
    assert [b.documents.get().filename for b in kept] == ["t2.pdf", "t3.pdf", "t4.pdf"]


SLOW_PATTERN = r"(a|aa)+$"  # backtracks catastrophically on 'aaaa…!' (issue 40)


def test_the_editor_warns_of_a_pattern_that_backtracks_and_still_saves_it(client_as):
    client = client_as("admin")
    form = post_form(**{"field-3-key": "ref", "field-3-label": "Reference", "field-3-kind": "code",
                        "field-3-pattern": SLOW_PATTERN, "field-3-pattern_source": "the shop's references"})
    preview = client.post("/types/new/", {**form, "action": "preview"}).content.decode()
    assert 'id="definition-warnings"' in preview and "backtracks catastrophically" in preview
    assert client.post("/types/new/", {**form, "action": "save"}).status_code == 302
    assert "backtracks catastrophically" in client.get("/types/shop_receipt/").content.decode()
    plain = client.post("/types/new/", {**post_form(name="plain_receipt"), "action": "preview"}).content.decode()
    assert 'id="definition-warnings"' not in plain


def test_importing_a_definition_with_a_backtracking_pattern_saves_it_and_warns(tmp_path, db):
    from io import StringIO

    from django.core.management import call_command

    data = _definition(after="2020-01-01")
    data["fields"].append({"key": "ref", "label": "Reference", "kind": "code", "pattern": SLOW_PATTERN,
                           "pattern_source": "the shop's references"})
    path = tmp_path / "slow.yaml"
    path.write_text(spec_to_yaml(spec_parse(data)))
    err = StringIO()
    call_command("doctypes", "import", str(path), stderr=err)
    assert DocTypeVersion.objects.filter(name="shop_receipt").count() == 1
    assert "warning: field 'ref'" in err.getvalue() and "backtracks catastrophically" in err.getvalue()
