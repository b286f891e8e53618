"""Which reading errors do the rules catch? Inject each error class into correct answers and count.

Run from the project root: .venv/bin/python bench/rules_catch.py [--actas 24] [--per-doc 3] [--engine pdf-text]
No database: generated actas (and the invoices of ../shared/data/invoices, when present) are read with an
OCR engine (pdf-text by default, exact; rapidocr for scans), the prompt the model would see is rendered,
the correct answer is built with proofs from that prompt (tests/acta_answers.py for actas; the known
answers' values located in the blocks for invoices), then each error class is injected and the answer is
validated with make_validator(doctype, RuleContext(prompt, blocks)) -- schema, the type's rules and the
proof rules. An injection is *caught* when it breaks a rule the correct answer did not break.
Prints markdown tables on stdout.
"""

from __future__ import annotations

import argparse
import datetime
import random
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
INVOICES = ROOT.parent / "shared" / "data" / "invoices"
sys.path.insert(0, str(ROOT))  # runnable as a plain script from anywhere

from extraction.acta.generate import generate_acta, render_page  # noqa: E402
from extraction.doctypes.registry import get_doctype  # noqa: E402
from extraction.ocr.blocks import BlockType, OcrBlock, PageImage, SourceDocument  # noqa: E402
from extraction.ocr.registry import get_engine  # noqa: E402
from extraction.prompt import render_prompt  # noqa: E402
from extraction.rules import RuleContext, make_validator  # noqa: E402
from tests import acta_answers as aa  # noqa: E402

DIGITS = ["CERO", "UNO", "DOS", "TRES", "CUATRO", "CINCO", "SEIS", "SIETE", "OCHO", "NUEVE"]


class Tally:
    def __init__(self) -> None:
        self.tried: Counter[str] = Counter()
        self.caught: Counter[str] = Counter()
        self.rules: dict[str, Counter[str]] = defaultdict(Counter)
        self.misses: dict[str, list[str]] = defaultdict(list)

    def record(self, name: str, new_codes: set[str], where: str) -> None:
        self.tried[name] += 1
        if new_codes:
            self.caught[name] += 1
            for code in new_codes:
                self.rules[name][code] += 1
        elif len(self.misses[name]) < 3:
            self.misses[name].append(where)


def _keys(violations) -> set:
    return {v.key for v in violations}


def _new_codes(validate, answer, baseline_keys: set) -> set[str]:
    return {v.code for v in validate(answer) if v.key not in baseline_keys}


def _read(engine_name: str, pdf_bytes: bytes, tmp: Path, name: str):
    engine = get_engine(engine_name)
    if engine_name == "pdf-text":
        path = tmp / f"{name}.pdf"
        path.write_bytes(pdf_bytes)
        return engine.read(SourceDocument(path=path, kind="pdf", pages=[]))
    image = render_page(pdf_bytes, dpi=150)
    path = tmp / f"{name}.png"
    image.save(path)
    return engine.read(SourceDocument(path=path, kind="image",
                                      pages=[PageImage(1, path, image.width, image.height)]))


# --- acta error classes: each returns a spoiled answer or None when the sheet offers no place for it ----


def _misread(src: str, dst: str) -> Callable[[dict, random.Random], tuple[dict, str] | None]:
    def inject(answer: dict, rng: random.Random):
        rows = [i for i in range(len(answer["rows"])) if src in aa.digit_texts(answer, f"rows[{i}].votes")]
        if not rows:
            return None
        row = rng.choice(rows)
        return aa.misread(answer, row, src, dst), f"row {row}"
    return inject


def _dropped_digit(answer: dict, rng: random.Random):
    rows = [i for i, r in enumerate(answer["rows"]) if r["votes"]["value"] >= 10]
    if not rows:
        return None
    row = rng.choice(rows)
    text = str(answer["rows"][row]["votes"]["value"])
    i = rng.randrange(len(text))
    return aa.set_count(answer, f"rows[{row}].votes", int(text[:i] + text[i + 1:] or 0), words=False), f"row {row}"


def _words_disagree(answer: dict, rng: random.Random):
    row = rng.randrange(len(answer["rows"]))
    words = answer["rows"][row]["votes_words"]["value"].split()
    i = rng.randrange(len(words))
    words[i] = rng.choice([w for w in DIGITS if w != words[i]])
    new = aa.copy.deepcopy(answer)
    new["rows"][row]["votes_words"]["value"] = " ".join(words)
    return new, f"row {row}"


def _moved_between_rows(answer: dict, rng: random.Random):
    donors = [i for i, r in enumerate(answer["rows"]) if r["votes"]["value"] >= 1]
    if not donors:
        return None
    a = rng.choice(donors)
    b = rng.choice([i for i in range(len(answer["rows"])) if i != a])
    k = rng.randint(1, answer["rows"][a]["votes"]["value"])
    new = aa.set_count(answer, f"rows[{a}].votes", answer["rows"][a]["votes"]["value"] - k)
    return aa.set_count(new, f"rows[{b}].votes", answer["rows"][b]["votes"]["value"] + k), f"{k} from {a} to {b}"


def _all_zero(answer: dict, rng: random.Random):
    return aa.all_zero(answer), "all"


def _swap(with_proofs: bool):
    def inject(answer: dict, rng: random.Random):
        pairs = aa.same_candidate_pairs(answer)
        if not pairs:
            return None
        a, b = rng.choice(pairs)
        return aa.swap_rows(answer, a, b, with_proofs=with_proofs), f"rows {a}<->{b}"
    return inject


ACTA_CLASSES: list[tuple[str, Callable]] = [
    ("digit misread 5→6", _misread("5", "6")),
    ("digit misread 1→7", _misread("1", "7")),
    ("digit misread 0→8", _misread("0", "8")),
    ("digit misread 3→8", _misread("3", "8")),
    ("dropped digit", _dropped_digit),
    ("digits and words disagree", _words_disagree),
    ("value moved between rows (sum kept)", _moved_between_rows),
    ("all-zero answer", _all_zero),
    ("swap in one candidate, proofs follow", _swap(True)),
    ("swap in one candidate, proofs stay", _swap(False)),
]


def bench_actas(n: int, per_doc: int, engine: str, tally: Tally, tmp: Path) -> dict[str, int]:
    doctype = get_doctype("acta")
    stats = Counter()
    for seed in range(1000, 1000 + n):
        layout = ("classic", "two-column")[seed % 2]
        acta = generate_acta(seed=seed, layout=layout)
        pages = _read(engine, acta.pdf_bytes, tmp, f"acta-{seed}")
        prompt = render_prompt(pages)
        blocks = [b for p in pages for b in p.blocks]
        validate = make_validator(doctype, RuleContext(prompt=prompt, blocks=blocks))
        try:
            answer = doctype.parse_answer(aa.correct_answer(prompt.text, acta.printed))
        except ValueError:
            stats["no correct answer"] += 1  # the OCR text does not show every printed value
            continue
        baseline = validate(answer)
        stats["sheets"] += 1
        if baseline:
            stats["correct answer flagged"] += 1
        keys = _keys(baseline)
        rng = random.Random(seed)
        for name, inject in ACTA_CLASSES:
            for _ in range(per_doc if name != "all-zero answer" else 1):
                spoiled = inject(answer, rng)
                if spoiled is None:
                    continue
                new, where = spoiled
                if new == answer:
                    continue
                tally.record(name, _new_codes(validate, new, keys), f"seed {seed} {where}")
        # the sheet itself does not add up: does forcing the sum go unnoticed?
        bad = generate_acta(seed=seed, layout=layout, errors=["sum_mismatch"])
        pages = _read(engine, bad.pdf_bytes, tmp, f"acta-{seed}-sum")
        prompt = render_prompt(pages)
        validate = make_validator(doctype, RuleContext(prompt=prompt, blocks=[b for p in pages for b in p.blocks]))
        try:
            honest = doctype.parse_answer(aa.correct_answer(prompt.text, bad.printed))
        except ValueError:
            continue
        forced = aa.forced_sum(honest)
        if forced != honest:
            tally.record("forced sum on a sheet that does not add up", {v.code for v in validate(forced)},
                         f"seed {seed}")
    return dict(stats)


# --- invoices -----------------------------------------------------------------------------------------


def _proof_for(block: OcrBlock, prompt, blocks: list[OcrBlock]) -> list[dict[str, Any]]:
    """The prompt's way to cite a block: its LINE (or a WORD of it), else the table CELL holding it."""
    line_of = {v: k for k, v in prompt.line_ids.items()}
    table_of = {v: k for k, v in prompt.table_ids.items()}
    if block.type is BlockType.LINE and block.id in line_of:
        return [{"type": "LINE", "id": line_of[block.id]}]
    if block.type is BlockType.WORD and block.parent in line_of:
        return [{"type": "WORD", "line": line_of[block.parent], "value": block.text}]
    cell = block if block.type is BlockType.CELL else None
    if cell is None:
        cx, cy = block.bbox.left + block.bbox.width / 2, block.bbox.top + block.bbox.height / 2
        cell = next((c for c in blocks if c.type is BlockType.CELL and c.page == block.page
                     and c.bbox.left <= cx <= c.bbox.right and c.bbox.top <= cy <= c.bbox.bottom), None)
    if cell is not None and cell.parent in table_of:
        return [{"type": "CELL", "table": table_of[cell.parent], "row": cell.row, "column": cell.column}]
    return []


def _invoice_answer(truth: dict, prompt, blocks: list[OcrBlock]) -> dict | None:
    from tests.invoice_truth import locate

    def proved(value: Any, find: Any = None) -> dict[str, Any]:
        block = locate(find if find is not None else value, blocks)
        return {"value": value, "proof": _proof_for(block, prompt, blocks) if block else []}

    lines = [ln for ln in truth.get("lines", []) if "price_subtotal" in ln and "qty" in ln and "price_unit" in ln]
    if not lines or truth.get("amount") is None:
        return None
    items = []
    for ln in lines:
        items.append({
            "description": proved(ln["name"].splitlines()[0], ln["name"].splitlines()[0]),
            "quantity": proved(float(ln["qty"])),
            "unit_price": proved(float(ln["price_unit"])),
            "line_total": proved(float(ln["price_subtotal"])),
            "discount_percent": proved(float(ln["discount"])) if ln.get("discount") else {"value": None, "proof": []},
        })
    subtotal = truth.get("amount_untaxed")
    tax = truth.get("amount_tax")
    if tax is None and subtotal is not None:
        tax = float(Decimal(str(truth["amount"])) - Decimal(str(subtotal)))
    return {
        "issuer": proved(truth["issuer"]), "number": proved(truth["invoice_number"]),
        "issue_date": proved(truth["date"], datetime.date.fromisoformat(truth["date"])),
        "currency": {"value": truth["currency"], "proof": _currency_proof(truth["currency"], prompt, blocks)},
        "line_items": items,
        "subtotal": proved(float(subtotal)) if subtotal is not None else {"value": None, "proof": []},
        "tax": proved(float(tax)) if tax is not None else {"value": None, "proof": []},
        "total": proved(float(truth["amount"])),
    }


def _currency_proof(code: str, prompt, blocks: list[OcrBlock]) -> list[dict[str, Any]]:
    """The first line that shows the currency, by its code or its symbol (as a careful model cites it)."""
    from extraction.currency import shows_currency

    line = next((b for b in blocks if b.type is BlockType.LINE and shows_currency(code, b.text)), None)
    return _proof_for(line, prompt, blocks) if line else []


def _money(x: Decimal) -> float:
    return float(x.quantize(Decimal("0.01")))


def bench_invoices(per_doc: int, tally: Tally) -> dict[str, int] | None:
    if not INVOICES.exists():
        return None
    import json

    doctype = get_doctype("invoice")
    engine = get_engine("pdf-text")
    stats = Counter()
    for path in sorted(INVOICES.glob("*.json")):
        pdf = path.with_suffix(".pdf")
        if not pdf.exists():
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        truth = data[0] if isinstance(data, list) else data
        pages = engine.read(SourceDocument(path=pdf, kind="pdf", pages=[]))
        prompt = render_prompt(pages)
        blocks = [b for p in pages for b in p.blocks]
        answer = _invoice_answer(truth, prompt, blocks)
        if answer is None:
            stats["without line items"] += 1
            continue
        answer = doctype.parse_answer(answer)
        validate = make_validator(doctype, RuleContext(prompt=prompt, blocks=blocks))
        baseline = validate(answer)
        keys = _keys(baseline)
        dirty = {f for v in baseline for f in v.fields}
        stats["invoices"] += 1
        rng = random.Random(path.name)
        clean_lines = [i for i in range(len(answer["line_items"]))
                       if not any(f.startswith(f"line_items[{i}].") for f in dirty)]
        for _ in range(per_doc):
            if not clean_lines:
                break
            i = rng.choice(clean_lines)
            item = answer["line_items"][i]
            total = Decimal(str(item["line_total"]["value"]))
            qty = Decimal(str(item["quantity"]["value"] or 1))
            delta = Decimal(rng.choice(["1.00", "10.00", "0.10", "5.00", "-1.00"]))
            # changed alone: the arithmetic breaks
            new = aa.copy.deepcopy(answer)
            new["line_items"][i]["line_total"]["value"] = _money(total + delta)
            tally.record("invoice line total misread", _new_codes(validate, new, keys), f"{path.stem} line {i}")
            # forced: unit price, subtotal and total adjusted so every sum still closes
            if {"subtotal", "total"} & dirty:
                continue
            forced = aa.copy.deepcopy(new)
            price = Decimal(str(_money((total + delta) / qty)))
            forced["line_items"][i]["unit_price"]["value"] = float(price)
            forced["line_items"][i]["line_total"]["value"] = _money(price * qty)
            shift = Decimal(str(forced["line_items"][i]["line_total"]["value"])) - total
            for key in ("subtotal", "total"):
                if answer[key]["value"] is not None:
                    forced[key]["value"] = _money(Decimal(str(answer[key]["value"])) + shift)
            tally.record("invoice line total forced (sums kept)", _new_codes(validate, forced, keys),
                         f"{path.stem} line {i}")
        if baseline:
            stats["correct answer flagged (header proofs)"] += 1
    return dict(stats)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--actas", type=int, default=24, help="generated sheets (half classic, half two-column)")
    parser.add_argument("--per-doc", type=int, default=3, help="injections of each class per document")
    parser.add_argument("--engine", default="pdf-text", choices=["pdf-text", "rapidocr"])
    args = parser.parse_args()
    tally = Tally()
    with tempfile.TemporaryDirectory(prefix="rules-catch-") as tmp:
        acta_stats = bench_actas(args.actas, args.per_doc, args.engine, tally, Path(tmp))
    invoice_stats = bench_invoices(args.per_doc, tally)

    print(f"## Rules catch: injected reading errors (actas: {args.engine}, {acta_stats})")
    if invoice_stats is None:
        print(f"\n(invoices skipped: {INVOICES} is not here)")
    else:
        print(f"\n(invoices: pdf-text, {invoice_stats})")
    print("\n| error class | injected | caught | share | rules that fired (share of injections) |")
    print("| --- | ---: | ---: | ---: | --- |")
    for name in tally.tried:
        tried, caught = tally.tried[name], tally.caught[name]
        rules = ", ".join(f"{code} {count / tried:.0%}" for code, count in tally.rules[name].most_common())
        print(f"| {name} | {tried} | {caught} | {caught / tried:.0%} | {rules or '—'} |")
    missed = {k: v for k, v in tally.misses.items() if v}
    if missed:
        print("\nMissed (first examples):")
        for name, where in missed.items():
            print(f"- {name}: {'; '.join(where)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
