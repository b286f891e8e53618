"""Till receipts with their lines, and a type that checks them, for the evaluation sets' tests: v1 checks that
the lines add up to the total, v2 (an admin who found that rule noisy) does not. A scripted model reads every
receipt as printed but one, whose total it takes from a line's price (a value the page does show)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from extraction.doctypes.services import doctype_version_save
from extraction.models import Batch, Document, EvaluationRun
from extraction.pipeline.ingest import IncomingFile, batch_create_from_files
from extraction.pipeline.process import document_process
from reviewer.audit.services import audit_item_decide, audit_sample_draw, sample_request
from reviewer.desk import services as review
from tests.support.defined_answers import cite, prompt_lines
from tests.support.llm_server import reply_json
from tests.support.receipts import receipt_pdf

ITEMS = [("TEA", "4.50"), ("BREAD", "8.00")]
MISREAD_SHOP = "SECOND SHOP SDN BHD"  # the model reads this receipt's total from the BREAD line: 8.00


def till_receipt(company: str) -> bytes:
    return receipt_pdf(company=company, address=["NO 5, JALAN MAWAR"], date="06/05/2024", items=ITEMS, total="12.50")


def till_type(*, checks_the_sum: bool) -> dict[str, Any]:
    rules = [{"code": "lines_make_total", "label": "Lines do not add up to the total", "kind": "column_sum",
              "column": "items.price", "field": "total", "tolerance": "0.005",
              "message": "The lines add up to {found} but the total says {expected}"}] if checks_the_sum else []
    return {"name": "till_receipt", "label": "Till receipt", "instructions": "You read shop till receipts.",
            "fields": [{"key": "company", "label": "Company", "required": True},
                       {"key": "total", "label": "Total", "kind": "money", "required": True}],
            "tables": [{"key": "items", "label": "Items", "columns": [
                {"key": "name", "label": "Item", "required": True},
                {"key": "price", "label": "Price", "kind": "money", "required": True}]}],
            "rules": rules}


def reads_till_receipts(body: dict[str, Any]):
    """Every value as printed and cited, but the misread receipt's total."""
    lines = prompt_lines(body)
    text = "\n".join(t for _, t in lines)
    company = MISREAD_SHOP if MISREAD_SHOP in text else "CORNER SHOP SDN BHD"
    total = "8.00" if company == MISREAD_SHOP else "12.50"
    answer = {"company": {"value": company, "proof": cite(lines, company)},
              "total": {"value": float(total), "proof": cite(lines, total)},
              "items": [{"name": {"value": name, "proof": cite(lines, name)},
                         "price": {"value": float(price), "proof": cite(lines, price)}}
                        for name, price in ITEMS]}
    return reply_json(answer)


def read_and_confirmed(users, tmp_path: Path) -> Batch:
    """v1 (which checks the sum) reads two receipts: the right one passes and a supervisor's audit agrees with
    it; the misread one is flagged and a reviewer corrects its total and verifies it."""
    doctype_version_save(data=till_type(checks_the_sum=True), user=users["admin"])
    files = []
    for name, shop in (("corner.pdf", "CORNER SHOP SDN BHD"), ("second.pdf", MISREAD_SHOP)):
        (tmp_path / name).write_bytes(till_receipt(shop))
        files.append(IncomingFile(name, tmp_path / name))
    batch = batch_create_from_files(name="Tills", doctype="till_receipt", ocr_engine="pdf-text", files=files,
                                    user=users["admin"])
    for document in batch.documents.all():
        document_process(document_id=document.id)
    right, misread = batch.documents.get(filename="corner.pdf"), batch.documents.get(filename="second.pdf")
    assert (right.status, misread.status) == ("passed", "flagged")
    sample = audit_sample_draw(batch=batch, user=users["supervisor"], request=sample_request(count=1, seed=1))
    audit_item_decide(item_id=sample.items.get().id, user=users["supervisor"], verdict="agree")
    review.document_claim(document_id=misread.id, user=users["reviewer"])
    misread.refresh_from_db()
    review.field_edit(document_id=misread.id, user=users["reviewer"], path="total", raw_value="12.50",
                      expected_version=misread.version)
    misread.refresh_from_db()
    review.document_verify(document_id=misread.id, user=users["reviewer"], expected_version=misread.version)
    return batch


def read_on_the_workers_path(run: EvaluationRun) -> None:
    """Read what a worker would, here: every queued document of the run and of the run it is compared with."""
    for batch_id in (run.batch_id, run.compared_with.batch_id):
        for document in Document.objects.filter(batch_id=batch_id, status="queued"):
            document_process(document_id=document.id)
