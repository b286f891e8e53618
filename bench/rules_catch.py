"""Which reading errors do the rules catch? Inject each error class into correct answers and count.

Run from the project root: .venv/bin/python bench/rules_catch.py [--actas 24] [--per-doc 3] [--engine pdf-text]
No database: generated actas (and the invoices of ../shared/data/invoices, when present) are read with an
OCR engine (pdf-text by default, exact; rapidocr for scans), the prompt the model would see is rendered,
the correct answer is built with proofs from that prompt (tests/support/acta_answers.py for actas; the known
answers' values located in the blocks for invoices), then each error class is injected and the answer is
validated with make_validator(doctype, reading_context(...)) -- schema, the type's rules and the
proof rules. An injection is *caught* when it breaks a rule the correct answer did not break.

Injecting into the answer alone flatters the proof rule: the page still shows the right value, so
`value_grounded` sees every change by construction. The honest figures are the classes marked "(the text
shows it)": the OCR text itself carries the error (a digit misread or dropped by the OCR, a line total
misprinted), the model copies what it was shown, so the proofs hold and only the other rules can catch it;
and the column "caught without value_grounded" for every class.
Prints markdown tables on stdout.
"""

from __future__ import annotations

import argparse
import copy
import random
import re
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INVOICES = ROOT.parent / "shared" / "data" / "invoices"
sys.path.insert(0, str(ROOT))  # runnable as a plain script from anywhere

from extraction.doctypes.registry import get_doctype  # noqa: E402
from extraction.ocr.blocks import BlockType, OcrBlock, PageImage, SourceDocument  # noqa: E402
from extraction.ocr.registry import get_engine  # noqa: E402
from extraction.reading.context import reading_context  # noqa: E402
from extraction.reading.prompt import render_prompt  # noqa: E402
from extraction.reading.validation import make_validator  # noqa: E402
from sheetgen.generate import generate_acta, render_page  # noqa: E402
from tests.support import acta_answers as aa  # noqa: E402

DIGITS = ["CERO", "UNO", "DOS", "TRES", "CUATRO", "CINCO", "SEIS", "SIETE", "OCHO", "NUEVE"]


class Tally:
    def __init__(self) -> None:
        self.tried: Counter[str] = Counter()
        self.caught: Counter[str] = Counter()
        self.without_grounding: Counter[str] = Counter()  # caught by a rule other than value_grounded
        self.rules: dict[str, Counter[str]] = defaultdict(Counter)
        self.misses: dict[str, list[str]] = defaultdict(list)

    def record(self, name: str, new_codes: set[str], where: str) -> None:
        self.tried[name] += 1
        if new_codes - {"value_grounded"}:
            self.without_grounding[name] += 1
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
        ctx = reading_context(doctype=doctype, input_mode="text", prompt=prompt, blocks=blocks)
        validate = make_validator(doctype, ctx)
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
        for _ in range(per_doc):
            _ocr_carried(doctype, acta.printed, answer, pages, ctx, keys, rng, tally, seed)
        # the sheet itself does not add up: does forcing the sum go unnoticed?
        bad = generate_acta(seed=seed, layout=layout, errors=["sum_mismatch"])
        pages = _read(engine, bad.pdf_bytes, tmp, f"acta-{seed}-sum")
        prompt = render_prompt(pages)
        validate = make_validator(doctype, reading_context(doctype=doctype, input_mode="text", pages=pages))
        try:
            honest = doctype.parse_answer(aa.correct_answer(prompt.text, bad.printed))
        except ValueError:
            continue
        forced = aa.forced_sum(honest)
        if forced != honest:
            tally.record("forced sum on a sheet that does not add up", {v.code for v in validate(forced)},
                         f"seed {seed}")
    return dict(stats)


def _ocr_carried(doctype, printed: dict, answer: dict, pages, ctx, keys: set, rng: random.Random, tally: Tally,
                 seed: int) -> None:
    """The OCR text shows a row's digits misread (or one dropped) and the model copies them: its proof
    holds, so only the other rules can catch it. The row and the digit are drawn at random."""
    row = rng.randrange(len(printed["rows"]))
    word = _shown_word(answer, f"rows[{row}].votes", ctx)
    text = printed["rows"][row]["votes_text"]
    if word is None or word.text != text:
        return
    i = rng.randrange(len(text))
    significant = [k for k in range(len(text)) if text[:k + 1].strip("0")]  # dropping a padding zero changes nothing
    misread = text[:i] + rng.choice([d for d in "0123456789" if d != text[i]]) + text[i + 1:]
    cases = [("digit misread (the text shows it)", misread)]
    if significant:
        k = rng.choice(significant)
        cases.append(("dropped digit (the text shows it)", text[:k] + text[k + 1:]))
    for name, shown in cases:
        spoiled = _shown_as(pages, word.id, text, shown)
        sp_prompt = render_prompt(spoiled)
        sp_validate = make_validator(doctype, reading_context(doctype=doctype, input_mode="text", pages=spoiled))
        copied_print = copy.deepcopy(printed)
        copied_print["rows"][row]["votes_text"] = shown
        try:
            copied = doctype.parse_answer(aa.correct_answer(sp_prompt.text, copied_print))
        except ValueError:
            continue
        if copied == answer:
            continue
        tally.record(name, _new_codes(sp_validate, copied, keys), f"seed {seed} row {row}")


# --- invoices -----------------------------------------------------------------------------------------


def _money(x: Decimal) -> float:
    return float(x.quantize(Decimal("0.01")))


def _shown_as(pages, block_id: str, old: str, new: str):
    """A copy of the OCR pages in which the word `block_id` reads `new` instead of `old`, and so do the line
    and the cell holding it: the text the model is shown carries the error."""
    pages = copy.deepcopy(pages)
    blocks = [b for p in pages for b in p.blocks]
    word = next(b for b in blocks if b.id == block_id)
    cx, cy = word.bbox.left + word.bbox.width / 2, word.bbox.top + word.bbox.height / 2
    for b in blocks:
        inside = b.page == word.page and b.bbox.left <= cx <= b.bbox.right and b.bbox.top <= cy <= b.bbox.bottom
        if b is word or (inside and b.type in (BlockType.LINE, BlockType.CELL) and old in b.text.split()):
            b.text = " ".join(new if t == old else t for t in b.text.split()) if b is not word else new
    return pages


def _shown_word(answer: dict, path: str, ctx) -> OcrBlock | None:
    """The WORD that shows the value at `path` (its proof narrowed to words), or None."""
    from extraction.proofs.resolve import block_index, resolve_path
    from extraction.rules.answers import get_field

    found = [f for f in resolve_path(answer, path, get_field(answer, path), ctx) if f.type == "WORD"]
    return block_index(ctx).by_id.get(found[0].block_id) if len(found) == 1 else None


def bench_invoices(per_doc: int, tally: Tally, tmp: Path) -> dict[str, int] | None:
    if not INVOICES.exists():
        return None
    from extraction.pipeline.render import render_document
    from tests.support.invoice_answers import correct_invoice_answer
    from tests.support.invoice_truth import load_truth

    doctype = get_doctype("invoice")
    engine = get_engine("auto")  # production's default: the text layer, and OCR of the text in its images
    stats = Counter()
    for pdf in sorted(INVOICES.glob("*.pdf")):
        rendered = render_document(source=pdf, kind="pdf", out_dir=tmp / pdf.stem, dpi=150, renderer="pymupdf",
                                   max_pages=20)
        pages = engine.read(SourceDocument(path=pdf, kind="pdf",
                                           pages=[PageImage(r.number, r.path, r.width, r.height) for r in rendered]))
        prompt = render_prompt(pages)
        blocks = [b for p in pages for b in p.blocks]
        ctx = reading_context(doctype=doctype, input_mode="text", prompt=prompt, blocks=blocks)
        validate = make_validator(doctype, ctx)
        answer = doctype.parse_answer(correct_invoice_answer(pdf.stem, load_truth(pdf.stem), prompt, blocks))
        baseline = validate(answer)
        keys = _keys(baseline)
        stats["invoices"] += 1
        stats["correct answer flagged"] += bool(baseline)
        rng = random.Random(pdf.name)
        # the total misread: every invoice has one
        new = aa.copy.deepcopy(answer)
        new["total"]["value"] = _money(Decimal(str(answer["total"]["value"])) + Decimal(rng.choice(["1.00", "0.10", "9.00"])))
        tally.record("invoice total misread", _new_codes(validate, new, keys), pdf.stem)
        items = answer["line_items"]
        if items:
            stats["with line items"] += 1
        for _ in range(per_doc if items else 0):
            i = rng.randrange(len(items))
            item = items[i]
            total = Decimal(str(item["line_total"]["value"]))
            qty = Decimal(str(item["quantity"]["value"] or 1))
            delta = Decimal(rng.choice(["1.00", "10.00", "0.10", "5.00", "-1.00"]))
            new = aa.copy.deepcopy(answer)
            new["line_items"][i]["line_total"]["value"] = _money(total + delta)
            tally.record("invoice line total misread", _new_codes(validate, new, keys), f"{pdf.stem} line {i}")
            # forced: unit price, subtotal and total adjusted so every sum still closes
            forced = aa.copy.deepcopy(new)
            price = Decimal(str(_money((total + delta) / qty)))
            forced["line_items"][i]["unit_price"]["value"] = float(price)
            forced["line_items"][i]["line_total"]["value"] = _money(price * qty)
            shift = Decimal(str(forced["line_items"][i]["line_total"]["value"])) - total
            for key in ("subtotal", "total"):
                if answer[key]["value"] is not None:
                    forced[key]["value"] = _money(Decimal(str(answer[key]["value"])) + shift)
            tally.record("invoice line total forced (sums kept)", _new_codes(validate, forced, keys),
                         f"{pdf.stem} line {i}")
            # the text shows a wrong line total (an OCR slip), and the model copies it
            word = _shown_word(answer, f"line_items[{i}].line_total", ctx)
            if word is None:
                continue
            wrong = total + delta
            shown = word.text.replace(_money_text(total, word.text), _money_text(wrong, word.text))
            if shown == word.text:
                continue
            spoiled = _shown_as(pages, word.id, word.text, shown)
            sp_validate = make_validator(doctype, reading_context(doctype=doctype, input_mode="text", pages=spoiled))
            copied = aa.copy.deepcopy(answer)
            copied["line_items"][i]["line_total"]["value"] = _money(wrong)
            tally.record("invoice line total misread (the text shows it)", _new_codes(sp_validate, copied, keys),
                         f"{pdf.stem} line {i}")
    return dict(stats)


def _money_text(amount: Decimal, like: str) -> str:
    """`amount` written the way `like` writes money: decimal comma or point, thousands marks."""
    comma = re.search(r"\d,\d{2}(?!\d)", like) is not None
    text = f"{abs(amount):,.2f}"
    if comma:
        text = text.replace(",", " ").replace(".", ",").replace(" ", ".")
    return ("-" if amount < 0 else "") + text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--actas", type=int, default=24, help="generated sheets (half classic, half two-column)")
    parser.add_argument("--per-doc", type=int, default=3, help="injections of each class per document")
    parser.add_argument("--engine", default="pdf-text", choices=["pdf-text", "rapidocr"])
    args = parser.parse_args()
    tally = Tally()
    with tempfile.TemporaryDirectory(prefix="rules-catch-") as tmp:
        acta_stats = bench_actas(args.actas, args.per_doc, args.engine, tally, Path(tmp))
        invoice_stats = bench_invoices(args.per_doc, tally, Path(tmp))

    print(f"## Rules catch: injected reading errors (actas: {args.engine}, {acta_stats})")
    if invoice_stats is None:
        print(f"\n(invoices skipped: {INVOICES} is not here)")
    else:
        print(f"\n(invoices: auto, {invoice_stats})")
    print("\n| error class | injected | caught | caught without value_grounded | rules that fired (share of injections) |")
    print("| --- | ---: | ---: | ---: | --- |")
    for name in tally.tried:
        tried, caught, bare = tally.tried[name], tally.caught[name], tally.without_grounding[name]
        rules = ", ".join(f"{code} {count / tried:.0%}" for code, count in tally.rules[name].most_common())
        print(f"| {name} | {tried} | {caught / tried:.0%} | {bare / tried:.0%} | {rules or '—'} |")
    missed = {k: v for k, v in tally.misses.items() if v}
    if missed:
        print("\nMissed (first examples):")
        for name, where in missed.items():
            print(f"- {name}: {'; '.join(where)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
