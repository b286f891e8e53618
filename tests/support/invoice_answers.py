"""Correct answers to the shared invoices, with proofs, as a careful model would give them.

The values come from the known answers (../shared/data/invoices/*.json, invoice2data's names); where a
known answer names something the page prints differently, the answer says what the page prints: a name is
its longest leading part that the page shows ("Sammy Maystone" for "Sammy Maystone - For Lines testing"),
dates are ISO, amounts plain numbers, the currency its code. Proofs cite where the page prints each value:
the table cell, else the line (a word of it), found by the printed text, never by our own layout.

`same_as_truth` compares an answer with the known answer after normalising case, spacing, punctuation,
date formats and thousands separators, so a test can tell a right answer from a wrong one.

Pure: no Django, no pytest (bench/rules_catch.py uses it too).
"""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from typing import Any

from extraction.ocr.blocks import BlockType, OcrBlock
from extraction.ocr.tagged_text import PromptDocument
from extraction.proofs.grounding import supports
from extraction.values.currency import shows_currency
from tests.support.invoice_truth import locate

# Values the page prints that the known answer leaves out (invoice2data's file for this invoice tests the
# parsing of line descriptions only). Read off the page; they are what a correct answer must give.
SUPPLEMENT: dict[str, dict[str, Any]] = {
    "SammyMaystoneLinesTest": {
        "amount": 127.50, "amount_untaxed": 127.50, "amount_tax": 0.0,
        "lines": [{"name": "Service A", "qty": 12, "price_unit": 10.00, "price_subtotal": 120.00},
                  {"name": "Service B", "qty": 5, "price_unit": 1.50, "price_subtotal": 7.50}],
    },
}


def _squash(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.casefold())


def _none() -> dict[str, Any]:
    return {"value": None, "proof": []}


class Citer:
    """The prompt's way to cite a block: the CELL holding it, else its LINE (or a WORD of it)."""

    def __init__(self, prompt: PromptDocument, blocks: list[OcrBlock]) -> None:
        self.blocks = blocks
        self.line_of = {v: k for k, v in prompt.line_ids.items()}
        self.table_of = {v: k for k, v in prompt.table_ids.items()}
        self.cells = [b for b in blocks if b.type is BlockType.CELL and b.parent in self.table_of]
        self.by_id = {b.id: b for b in blocks}

    def cell_holding(self, block: OcrBlock) -> OcrBlock | None:
        cx, cy = block.bbox.left + block.bbox.width / 2, block.bbox.top + block.bbox.height / 2
        return next((c for c in self.cells if c.page == block.page and c.bbox.left <= cx <= c.bbox.right
                     and c.bbox.top <= cy <= c.bbox.bottom), None)

    def cite(self, block: OcrBlock) -> list[dict[str, Any]]:
        if block.type is BlockType.CELL and block.parent in self.table_of:
            return [{"type": "CELL", "table": self.table_of[block.parent], "row": block.row, "column": block.column}]
        cell = self.cell_holding(block)
        if cell is not None:
            return self.cite(cell)
        if block.type is BlockType.LINE and block.id in self.line_of:
            return [{"type": "LINE", "id": self.line_of[block.id]}]
        if block.type is BlockType.WORD and block.parent in self.line_of:
            return [{"type": "LINE", "id": self.line_of[block.parent]}]
        return []

    def proved(self, value: Any, find: Any = None) -> dict[str, Any]:
        block = locate(find if find is not None else value, self.blocks)
        return {"value": value, "proof": self.cite(block) if block else []}


def printed_name(name: str, blocks: list[OcrBlock]) -> tuple[str, OcrBlock] | None:
    """The longest leading part of `name` (whole words) that a block prints, with that block."""
    words = name.split()
    texts = [(b, _squash(b.text)) for b in blocks if b.type in (BlockType.LINE, BlockType.CELL)]
    for n in range(len(words), 0, -1):
        part = " ".join(words[:n]).strip(" -,")
        target = _squash(part)
        if len(target) < 3:
            break
        for block, text in texts:
            if target in text:
                return part, block
    return None


def _row_cells(citer: Citer, cell: OcrBlock) -> list[OcrBlock]:
    return sorted((c for c in citer.cells if c.parent == cell.parent and c.row == cell.row and c.id != cell.id),
                  key=lambda c: c.column or 0)


def _row_lines(citer: Citer, line: OcrBlock) -> list[OcrBlock]:
    middle = line.bbox.top + line.bbox.height / 2
    return sorted((b for b in citer.blocks if b.type is BlockType.LINE and b.page == line.page and b.id != line.id
                   and b.bbox.top <= middle <= b.bbox.bottom and b.bbox.left >= line.bbox.left),
                  key=lambda b: b.bbox.left)


def _line_items(truth_lines: list[dict[str, Any]], citer: Citer) -> list[dict[str, Any]] | None:
    """Line items where the known answer gives quantity, unit price and (or implies) the line total."""
    items = []
    used: set[str] = set()
    holders = [b for b in citer.blocks if b.type in (BlockType.CELL, BlockType.LINE)]
    for ln in truth_lines:
        name = str(ln.get("name") or ln.get("desc") or "").splitlines()
        price = ln.get("price_unit", ln.get("price"))
        if not name or ln.get("qty") is None or price is None:
            continue
        qty, price = Decimal(str(ln["qty"])), Decimal(str(price))
        discount = Decimal(str(ln.get("discount") or 0))
        total = Decimal(str(ln["price_subtotal"])) if "price_subtotal" in ln else qty * price * (1 - discount / 100)
        target = _squash(name[0])
        holder = next((b for b in holders if b.id not in used and target in _squash(b.text)
                       and (b.type is BlockType.CELL or citer.cell_holding(b) is None)), None)
        if holder is None:
            return None  # the page does not print this line where we can find it
        used.add(holder.id)
        row = _row_cells(citer, holder) if holder.type is BlockType.CELL else _row_lines(citer, holder)

        def cell_showing(number: Decimal, *, last: bool = False, row=row) -> list[dict[str, Any]]:
            shown = [c for c in row if supports(number, c.text)]
            return citer.cite(shown[-1 if last else 0]) if shown else []

        items.append({
            "description": {"value": name[0], "proof": citer.cite(holder)},
            "quantity": {"value": float(qty), "proof": cell_showing(qty)},
            "unit_price": {"value": float(price), "proof": cell_showing(price)},
            "line_total": {"value": float(total), "proof": cell_showing(total, last=True)},
            "discount_percent": {"value": float(discount), "proof": cell_showing(discount)} if discount else _none(),
        })
    return items


def correct_invoice_answer(name: str, truth: dict[str, Any], prompt: PromptDocument,
                           blocks: list[OcrBlock]) -> dict[str, Any]:
    """The answer a careful reader gives for invoice `name` (see the module's docstring)."""
    truth = {**truth, **SUPPLEMENT.get(name, {})}
    citer = Citer(prompt, blocks)
    issuer = printed_name(str(truth["issuer"]), blocks)
    answer: dict[str, Any] = {
        "issuer": {"value": issuer[0], "proof": citer.cite(issuer[1])} if issuer else _none(),
        "number": citer.proved(str(truth["invoice_number"])),
        "issue_date": citer.proved(truth["date"], dt.date.fromisoformat(truth["date"])),
        "due_date": citer.proved(truth["date_due"], dt.date.fromisoformat(truth["date_due"]))
        if truth.get("date_due") else _none(),
        "currency": {"value": truth["currency"], "proof": _currency_proof(str(truth["currency"]), citer)},
        "line_items": _line_items(truth.get("lines") or [], citer) or [],
    }
    amounts = {"total": truth.get("amount"), "subtotal": truth.get("amount_untaxed"), "tax": truth.get("amount_tax")}
    if amounts["tax"] is None and amounts["total"] is not None and amounts["subtotal"] is not None:
        amounts["tax"] = float(Decimal(str(amounts["total"])) - Decimal(str(amounts["subtotal"])))
    for key, value in amounts.items():
        node = citer.proved(float(value)) if value is not None else _none()
        # a value the page does not print is not part of a correct answer (a tax of 0 left unprinted)
        answer[key] = node if node["proof"] else _none()
    return answer


def _currency_proof(code: str, citer: Citer) -> list[dict[str, Any]]:
    """The first line or cell that shows the currency, by its code or its symbol."""
    for block in citer.blocks:
        if block.type in (BlockType.LINE, BlockType.CELL) and shows_currency(code, block.text):
            proof = citer.cite(block)
            if proof:
                return proof
    return []


def _norm_value(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, int | float):
        return Decimal(str(value)).normalize()
    text = str(value)
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        return _squash(text)


def same_as_truth(name: str, answer: dict[str, Any], truth: dict[str, Any]) -> list[str]:
    """The header fields where `answer` differs from the known answer (normalised); [] when it agrees."""
    truth = {**truth, **SUPPLEMENT.get(name, {})}
    pairs = {"number": "invoice_number", "issue_date": "date", "due_date": "date_due", "currency": "currency",
             "total": "amount", "subtotal": "amount_untaxed", "tax": "amount_tax"}
    out = []
    for field, key in pairs.items():
        got = answer[field]["value"]
        if key in truth and truth[key] is not None and got is not None and _norm_value(got) != _norm_value(truth[key]):
            out.append(field)
    issuer = answer["issuer"]["value"]
    if issuer is None or not _squash(str(truth["issuer"])).startswith(_squash(str(issuer))):
        out.append("issuer")
    return out
