"""A type's evaluation set: filled from what reviewers verified and supervisors agreed with (or uploaded with
expected values), run under another version on the workers' path, scored against people, and the version that
lets a wrong value pass shown as worse on the page, in the CSV and through the API, before it is made live."""

from __future__ import annotations

import csv
import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from extraction.doctypes.selectors import doctype_live_version
from extraction.doctypes.services import doctype_version_save
from extraction.models import Batch, DocTypeLive, EvaluationItem, EvaluationRun
from reviewer.api.services import token_create
from tests.support.doctype_forms import posted
from tests.support.till_receipts import (
    read_and_confirmed,
    read_on_the_workers_path,
    reads_till_receipts,
    till_receipt,
    till_type,
)

pytestmark = pytest.mark.django_db


def test_the_set_is_filled_from_what_people_confirmed_with_who_confirmed_it(users, llm_env, client_as, tmp_path):
    llm_env.always(reads_till_receipts)
    read_and_confirmed(users, tmp_path)
    admin = client_as("admin")
    page = admin.post("/types/till_receipt/evaluation/", {"action": "collect"}, follow=True)
    assert "2 documents added, 0 updated" in page.text
    items = {i.filename: i for i in EvaluationItem.objects.filter(doctype="till_receipt")}
    assert (items["second.pdf"].source, items["second.pdf"].confirmed_by) == ("verified", users["reviewer"])
    assert (items["corner.pdf"].source, items["corner.pdf"].confirmed_by) == ("audited", users["supervisor"])
    assert items["second.pdf"].expected["total"] == 12.5  # the reviewer's value, not the model's 8.00
    assert items["second.pdf"].expected["items[1].price"] == 8.0
    assert "Verified by a reviewer by reviewer" in page.text and "Agreed in an audit by supervisor" in page.text
    again = admin.post("/types/till_receipt/evaluation/", {"action": "collect"}, follow=True)
    assert "0 documents added, 0 updated" in again.text
    # a confirmed document an admin took out stays out when the set is gathered again
    admin.post("/types/till_receipt/evaluation/", {"action": "remove", "item": str(items["corner.pdf"].id)})
    admin.post("/types/till_receipt/evaluation/", {"action": "collect"})
    assert [i.filename for i in admin.get("/types/till_receipt/evaluation/").context["items"]] == ["second.pdf"]
    assert EvaluationItem.objects.count() == 2  # kept, marked


def test_a_version_that_lets_a_wrong_total_pass_is_shown_as_worse_everywhere_before_it_goes_live(
        users, llm_env, client_as, tmp_path):
    llm_env.always(reads_till_receipts)
    read_and_confirmed(users, tmp_path)
    admin = client_as("admin")
    admin.post("/types/till_receipt/evaluation/", {"action": "collect"})
    saved = admin.post("/types/till_receipt/", {**posted(till_type(checks_the_sum=False)), "action": "save"},
                       follow=True)
    assert "v1 stays live" in saved.text and doctype_live_version(name="till_receipt") == 1

    started = admin.post("/types/till_receipt/evaluation/", {"action": "run", "version": "2"})
    run = EvaluationRun.objects.get(pk=int(started["Location"].rstrip("/").rsplit("/", 1)[1]))
    assert (run.version, run.compared_with.version) == (2, 1)
    assert "Being read: v2 0 of 2; v1 0 of 2" in admin.get(f"/evaluations/{run.id}/").text
    read_on_the_workers_path(run)

    page = admin.get(f"/evaluations/{run.id}/")
    report = page.context["report"]
    candidate, live = report["arms"]
    assert candidate["outcomes"] | {} == {"passed_right": 1, "false_pass": 1, "needless_review": 0, "caught": 0,
                                          "failed": 0}
    assert live["outcomes"] == {"passed_right": 1, "false_pass": 0, "needless_review": 0, "caught": 1, "failed": 0}
    assert candidate["fields"]["total"] == live["fields"]["total"] == {"right": 1, "compared": 2, "accuracy": 0.5}
    assert live["rules"]["lines_make_total"] | {} == {"fired": 1, "right_alarms": 1, "caught": 1, "wrong": 1,
                                                       "precision": 1.0, "recall": 1.0}
    assert "lines_make_total" not in candidate["rules"]
    warning = "v2 lets 1 document with a wrong value pass, where v1 lets 0."
    assert report["warnings"] == [warning] and warning in page.text
    assert "Lines do not add up to the total" in page.text and "Total" in page.text

    exported = list(csv.reader(io.StringIO(admin.get(f"/evaluations/{run.id}/csv/").content.decode())))
    assert exported[0] == ["figure", "of", "v2", "v1"]
    assert ["rule recall", "lines_make_total", "", "1.0"] in exported
    assert ["documents: Passed but wrong (false pass)", "", "1", "0"] in exported

    token = token_create(user=users["admin"], name="evaluations").secret
    api = admin.get(f"/api/v1/evaluations/{run.id}", headers={"Authorization": f"Bearer {token}"}).json()
    assert api["done"] and api["warnings"] == [warning]
    assert [a["outcomes"]["false_pass"] for a in api["arms"]] == [1, 0]
    assert api["arms"][1]["rules"]["lines_make_total"]["precision"] == 1.0

    before = admin.get("/types/till_receipt/live/2/")
    assert warning in before.text and "Make v2 live anyway" in before.text
    admin.post("/types/till_receipt/live/2/")
    decision = DocTypeLive.objects.filter(name="till_receipt").latest("id")
    assert (decision.version, decision.previous, decision.decided_by) == (2, 1, users["admin"])
    assert decision.warnings == [warning] and decision.run == run
    assert ["documents: Passed but wrong (false pass)", "", 1, 0] in decision.comparison["rows"]
    assert doctype_live_version(name="till_receipt") == 2
    upload = admin.post("/batches/new/", {"name": "After", "doctype": "till_receipt", "ocr_engine": "pdf-text",
                                          "files": [SimpleUploadedFile("n.pdf", till_receipt("NEW SHOP"))]})
    assert upload.status_code == 302 and Batch.objects.get(name="After").doctype_version == 2


def test_an_evaluation_of_the_live_version_as_configured_runs_once_without_a_comparison(users, llm_env, client_as,
                                                                                        tmp_path):
    llm_env.always(reads_till_receipts)
    read_and_confirmed(users, tmp_path)
    admin = client_as("admin")
    admin.post("/types/till_receipt/evaluation/", {"action": "collect"})
    admin.post("/types/till_receipt/evaluation/", {"action": "run", "version": "1"})
    run = EvaluationRun.objects.get()
    assert run.compared_with is None and run.results.count() == 2


def test_documents_uploaded_with_expected_values_join_the_set_and_a_wrong_file_adds_nothing(users, client_as):
    admin = client_as("admin")
    doctype_version_save(data=till_type(checks_the_sum=True), user=users["admin"])
    values = "file,company,total,items[0].price\ncorner.pdf,CORNER SHOP SDN BHD,12.50,4.50\n"
    wrong = admin.post("/types/till_receipt/evaluation/", {
        "action": "upload", "documents": [SimpleUploadedFile("corner.pdf", till_receipt("CORNER SHOP SDN BHD")),
                                          SimpleUploadedFile("other.pdf", till_receipt("OTHER"))],
        "expected": SimpleUploadedFile("values.csv", values.encode())})
    assert wrong.status_code == 400 and "no expected values for other.pdf" in wrong.text
    assert not EvaluationItem.objects.exists()
    admin.post("/types/till_receipt/evaluation/", {
        "action": "upload", "documents": [SimpleUploadedFile("corner.pdf", till_receipt("CORNER SHOP SDN BHD"))],
        "expected": SimpleUploadedFile("values.csv", values.encode())})
    item = EvaluationItem.objects.get()
    assert (item.source, item.confirmed_by, item.document) == ("uploaded", users["admin"], None)
    assert item.expected == {"company": "CORNER SHOP SDN BHD", "total": "12.50", "items[0].price": "4.50"}
    assert item.file.read().startswith(b"%PDF")


def test_a_run_of_an_empty_set_is_refused_in_words(client_as):
    page = client_as("admin").post("/types/receipt/evaluation/", {"action": "run"})
    assert page.status_code == 400 and "The evaluation set is empty" in page.text
    assert not EvaluationRun.objects.exists()


def test_a_version_nobody_evaluated_can_go_live_and_the_decision_says_so(users, client_as):
    doctype_version_save(data=till_type(checks_the_sum=True), user=users["admin"])
    EvaluationItem.objects.create(doctype="till_receipt", filename="a.pdf", expected={}, source="uploaded")
    doctype_version_save(data=till_type(checks_the_sum=False), user=users["admin"])
    admin = client_as("admin")
    assert "v2 has not been evaluated against v1" in admin.get("/types/till_receipt/live/2/").text
    admin.post("/types/till_receipt/live/2/")
    assert DocTypeLive.objects.latest("id").warnings == ["v2 has not been evaluated against v1."]


def test_a_document_taken_out_of_the_set_goes_with_its_uploaded_file(users, client_as):
    admin = client_as("admin")
    doctype_version_save(data=till_type(checks_the_sum=True), user=users["admin"])
    admin.post("/types/till_receipt/evaluation/", {
        "action": "upload", "documents": [SimpleUploadedFile("corner.pdf", till_receipt("CORNER SHOP SDN BHD"))],
        "expected": SimpleUploadedFile("values.json", b'{"corner.pdf": {"total": 12.5}}')})
    item = EvaluationItem.objects.get()
    storage, name = item.file.storage, item.file.name
    page = admin.post("/types/till_receipt/evaluation/", {"action": "remove", "item": str(item.id)}, follow=True)
    assert "corner.pdf is out of the set" in page.text
    assert not EvaluationItem.objects.exists() and not storage.exists(name)
    again = admin.post("/types/till_receipt/evaluation/", {"action": "remove", "item": str(item.id)})
    assert again.status_code == 400 and "not in the set" in again.text


def test_making_a_version_live_while_its_evaluation_is_read_records_that_its_figures_were_not_final(
        users, llm_env, client_as, tmp_path):
    llm_env.always(reads_till_receipts)
    read_and_confirmed(users, tmp_path)
    admin = client_as("admin")
    admin.post("/types/till_receipt/evaluation/", {"action": "collect"})
    doctype_version_save(data=till_type(checks_the_sum=False), user=users["admin"])
    admin.post("/types/till_receipt/evaluation/", {"action": "run", "version": "2"})
    run = EvaluationRun.objects.get(version=2)
    assert "The evaluation is still being read" in admin.get("/types/till_receipt/live/2/").text
    admin.post("/types/till_receipt/live/2/")
    assert DocTypeLive.objects.latest("id").warnings == [
        f"Evaluation {run.id} was still being read; its figures were not final."]
