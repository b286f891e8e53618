"""Receipts made for tests: a born-digital PDF with a shop's name, address, date, lines and total (PyMuPDF), and a
scripted model that reads them as printed."""

from __future__ import annotations

from typing import Any

import pymupdf

from tests.support.defined_answers import printed_answer
from tests.support.llm_server import reply_json

# the sentence an admin writes for a rule of a receipt type the tests define
OLD_RULE = "Receipts from before 2020 are outside the policy (this one is dated {found})."


def receipt_pdf(*, company: str, address: list[str], date: str, items: list[tuple[str, str]], total: str) -> bytes:
    """A till receipt 80 mm wide, printed as such receipts are: the shop at the top, its address, the date,
    one line per item with its price, and the total."""
    doc = pymupdf.open()
    page = doc.new_page(width=227, height=420)
    y = 30.0

    def line(text: str, *, x: float = 14, size: float = 9, bold: bool = False) -> None:
        nonlocal y
        page.insert_text((x, y), text, fontsize=size, fontname="hebo" if bold else "helv")
        y += size + 5

    line(company, bold=True, size=10)
    for part in address:
        line(part, size=8)
    y += 6
    line(f"DATE: {date}")
    y += 4
    for name, price in items:
        page.insert_text((14, y), name, fontsize=9, fontname="helv")
        page.insert_text((170, y), price, fontsize=9, fontname="helv")
        y += 14
    y += 6
    page.insert_text((14, y), "TOTAL", fontsize=10, fontname="hebo")
    page.insert_text((160, y), total, fontsize=10, fontname="hebo")
    y += 24
    line("THANK YOU, PLEASE COME AGAIN", size=7)
    return doc.tobytes()


def receipt(date: str, total: str = "12.50") -> bytes:
    return receipt_pdf(company="CORNER SHOP SDN BHD", address=["NO 5, JALAN MAWAR", "47000 SUNGAI BULOH"],
                       date=date, items=[("TEA", "4.50"), ("BREAD", "8.00")], total=total)


def reads_receipts(body: dict[str, Any]):
    """A model that answers what the receipt prints, and cites it."""
    text = "\n".join(str(m.get("content")) for m in body["messages"])
    date = "2019-03-02" if "02/03/2019" in text else "2024-05-06"
    answer = printed_answer(body, {"company": "CORNER SHOP SDN BHD", "date": date, "total": 12.5},
                            shown={"date": "02/03/2019" if date.startswith("2019") else "06/05/2024",
                                   "total": "12.50"})
    return reply_json(answer)
