"""Utility bills made for tests: a born-digital PDF printing an account, a billing period, the previous balance,
the new charges and the amount due (PyMuPDF), and a scripted model that reads them as printed."""

from __future__ import annotations

from typing import Any

import pymupdf

from tests.support.defined_answers import printed_answer
from tests.support.llm_server import reply_json

BILL = {"account_number": "ACC-20931", "period_start": "2024-03-01", "period_end": "2024-03-31",
        "previous_balance": "10.00", "new_charges": "40.00", "amount_due": "50.00"}


def bill_pdf(**printed: str) -> bytes:
    """An A4 bill: a heading, then one line per value, its label before it ("Amount due: 50.00")."""
    values = {**BILL, **printed}
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((56, 70), "RIVERSIDE WATER COMPANY", fontsize=14, fontname="hebo")
    y = 120.0
    for label, key in (("Account number", "account_number"), ("Period from", "period_start"),
                       ("Period to", "period_end"), ("Previous balance", "previous_balance"),
                       ("New charges", "new_charges"), ("Amount due", "amount_due")):
        page.insert_text((56, y), f"{label}: {values[key]}", fontsize=11, fontname="helv")
        y += 22
    return doc.tobytes()


def reads_bills(body: dict[str, Any]):
    """A model that answers what the bill prints, and cites it."""
    text = "\n".join(str(m.get("content")) for m in body["messages"])
    printed = dict(BILL)
    if "60.00" in text:  # the bills this suite makes differ from BILL in these two values only
        printed["amount_due"] = "60.00"
    if "2024-02-28" in text:
        printed["period_end"] = "2024-02-28"
    answer = printed_answer(body, {k: (float(v) if k in ("previous_balance", "new_charges", "amount_due") else v)
                                   for k, v in printed.items()}, shown=printed)
    return reply_json(answer)
