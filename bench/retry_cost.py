"""What a retry round costs next to the first: prompt and completion tokens per round, per document type and
input mode, with the scripted models; and whether the loop still corrects and catches what it did.

Run from the project root:
    .venv/bin/python bench/retry_cost.py [--modes text,vision,hybrid] [--seeds 1] [--no-scans]

Documents: the bundled sample sheets (samples/actas, the truth regenerated from their seeds), one sheet
per layout of the unseen-layout bench (sheetgen/layouts.py, every layout, as a PDF) and the shared
invoices (../shared/data/invoices, when present). Each is read the production way (extraction.reading.rounds:
prompt, messages, the LLM client, rules, feedback, patches) against the scripted OpenAI-compatible server
on loopback. Acta models: tests/support/acta_models.py (the right reader and five that err as the study's model
did). Invoice models: `right`, and two that misread one digit of the total or of a line total in round 1
and correct it when the feedback names the field. In vision mode the scripted model is handed the page's
text out of band (it stands for a model that reads the image) and answers without OCR proofs.

Tokens are counted with o200k (bpe-openai) on what went over the wire, from the server's record:
prompt = every message's text + every image by OpenAI's tile formula (high detail: fit in 2048 px, shortest
side to 768, 170 per 512-px tile + 85) + the response_format schema; completion = the reply's content.
Round k / round 1 is the ratio of the mean over documents that reached round k. Prints markdown tables.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import inspect
import io
import json
import math
import pickle
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # runnable as a plain script from anywhere

from bpe_openai import get_encoding  # noqa: E402
from PIL import Image  # noqa: E402

from extraction.doctypes.registry import get_doctype  # noqa: E402
from extraction.llm.config import LlmConfig  # noqa: E402
from extraction.ocr.blocks import OcrPage, SourceDocument  # noqa: E402
from extraction.ocr.registry import get_engine  # noqa: E402
from extraction.pipeline import render  # noqa: E402
from extraction.reading.prompt import render_prompt  # noqa: E402
from extraction.reading.rounds import read_pages  # noqa: E402
from sheetgen.generate import generate_acta, render_scan  # noqa: E402
from sheetgen.layouts import LAYOUTS  # noqa: E402
from tests.support import acta_answers as aa  # noqa: E402
from tests.support.acta_models import MODELS, ActaModel, _told, wrong_fields  # noqa: E402
from tests.support.llm_server import SCRIPTED_MODEL, Reply, ScriptedLLMServer, reply_json  # noqa: E402

CACHE = ROOT / "var" / "bench" / "retry_cost"
INVOICES = ROOT.parent / "shared" / "data" / "invoices"
OCR_CODE = b"".join(p.read_bytes() for p in sorted([ROOT / "extraction" / "pipeline" / "render.py",
                                                     *(ROOT / "extraction" / "ocr").glob("*.py")]))
SAMPLES = {101: ([], "pdf"), 102: (["digits_words_mismatch"], "pdf"), 103: (["sum_mismatch"], "pdf"),
           104: ([], "scan"), 105: (["total_mismatch"], "scan"), 106: (["digits_words_mismatch"], "scan")}
INVOICE_MODELS = ("right", "misread_total", "misread_line")
ENC = get_encoding("o200k_base")
# Vision modes need read_pages(page_images=...); before the retry change read_pages took the text only.
HAS_IMAGES = "page_images" in inspect.signature(read_pages).parameters


def tokens(text: str) -> int:
    return len(ENC.encode(text))


def image_tokens(url: str) -> int:
    """OpenAI's high-detail cost of one image: scaled into 2048x2048, shortest side to 768, 512-px tiles."""
    width, height = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).size
    scale = min(1.0, 2048 / max(width, height))
    width, height = width * scale, height * scale
    scale = min(1.0, 768 / min(width, height))
    width, height = width * scale, height * scale
    return 85 + 170 * math.ceil(width / 512) * math.ceil(height / 512)


def prompt_tokens(body: dict[str, Any]) -> tuple[int, int]:
    """(messages' text and images, the response_format schema) of one request body."""
    total = 0
    for message in body.get("messages", []):
        content = message.get("content")
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        for part in parts:
            if part.get("type") == "text":
                total += tokens(part["text"]) + 4  # the chat format's per-message overhead
            elif part.get("type") == "image_url":
                total += image_tokens(part["image_url"]["url"])
    schema = body.get("response_format")
    return total, tokens(json.dumps(schema, separators=(",", ":"))) if schema else 0


def metered(step: Callable[[dict], Reply], rounds: list) -> Callable[[dict], Reply]:
    """The server's step, counting each request's prompt tokens and its reply's completion tokens into the
    last list of `rounds` (one list per reading)."""

    def count(body: dict) -> Reply:
        reply = step(body)
        text, schema = prompt_tokens(body)
        content = reply.body["choices"][0]["message"]["content"] if reply.status == 200 else ""
        rounds[-1].append((text + schema, tokens(content or "")))
        return reply

    return count


# ---------------------------------------------------------------- documents


@dataclass
class Doc:
    type: str  # acta | invoice
    name: str
    kind: str  # pdf | image
    data: bytes
    truth: dict[str, Any]
    printed_errors: bool = False  # a sample sheet whose poll workers erred: its right reading must be flagged
    pages: list[OcrPage] = field(default_factory=list)
    images: dict[int, Path] = field(default_factory=dict)


def acta_docs(*, seeds: int, scans: bool) -> list[Doc]:
    docs = []
    for seed, (errors, form) in SAMPLES.items():
        if form == "scan" and not scans:
            continue
        sheet = generate_acta(seed=seed, errors=errors)
        data = render_scan(sheet.pdf_bytes, seed=seed) if form == "scan" else sheet.pdf_bytes
        docs.append(Doc("acta", f"sample-{seed}", "image" if form == "scan" else "pdf", data, sheet.printed,
                        printed_errors=bool(errors)))
    for layout in sorted(LAYOUTS):
        for k in range(seeds):
            sheet = generate_acta(seed=5000 + k, layout=layout)
            docs.append(Doc("acta", f"{layout}-{5000 + k}", "pdf", sheet.pdf_bytes, sheet.printed))
    return docs


def invoice_docs() -> list[Doc]:
    if not INVOICES.is_dir():
        return []
    from tests.support.invoice_truth import load_truth

    return [Doc("invoice", p.stem, "pdf", p.read_bytes(), load_truth(p.stem)) for p in sorted(INVOICES.glob("*.pdf"))]


def read_doc(doc: Doc) -> None:
    """Render and OCR (the `auto` engine) once; pages cached on disk, page images kept for vision."""
    key = hashlib.sha256(doc.data + OCR_CODE).hexdigest()[:16]
    folder = CACHE / f"{doc.type}-{doc.name}-{key}"
    source = folder / ("doc.pdf" if doc.kind == "pdf" else "doc.jpg")
    if not (folder / "pages.pkl").exists():
        folder.mkdir(parents=True, exist_ok=True)
        source.write_bytes(doc.data)
        rendered = render.render_document(source=source, kind=doc.kind, out_dir=folder / "pages", dpi=150,
                                          max_pages=20)
        pages = get_engine("auto").read(SourceDocument(path=source, kind=doc.kind,
                                                       pages=[r.as_page_image() for r in rendered]))
        images = {r.number: Path(r.path).relative_to(folder) for r in rendered}
        (folder / "pages.pkl").write_bytes(pickle.dumps((pages, images)))
    pages, images = pickle.loads((folder / "pages.pkl").read_bytes())  # noqa: S301 - a cache this bench wrote
    doc.pages, doc.images = pages, {n: folder / path for n, path in images.items()}


# ---------------------------------------------------------------- scripted invoice models


class InvoiceModel:
    """Reads the invoice right (tests/support/invoice_answers.py); an erring kind misreads one digit of the total
    or of a line total in round 1 and corrects it once the feedback names that field."""

    def __init__(self, kind: str, correct: dict[str, Any]) -> None:
        self.kind, self.correct, self.round, self.answers = kind, correct, 0, []
        self.path = {"misread_total": "total", "misread_line": "line_items[0].line_total"}.get(kind)
        node = _node(correct, self.path) if self.path else None
        self.injected = bool(node and node.get("value"))
        if not self.injected:
            self.path = None

    def answer(self, feedback: str) -> dict[str, Any]:
        self.round += 1
        if self.path is None or (self.round > 1 and _told(feedback, self.path)):
            self.path = None
            return self.correct
        wrong = json.loads(json.dumps(self.correct))
        node = _node(wrong, self.path)
        text = f"{node['value']:.2f}"
        first = next(i for i, c in enumerate(text) if c.isdigit() and c != "0") if text.strip("0.") else 0
        node["value"] = float(text[:first] + str((int(text[first]) + 5) % 10) + text[first + 1:])
        return wrong


def _node(answer: dict[str, Any], path: str) -> dict[str, Any] | None:
    try:
        from extraction.rules.answers import get_field

        return get_field(answer, path)
    except (KeyError, IndexError):
        return None


# ---------------------------------------------------------------- one reading


@dataclass
class Round:
    prompt: int
    schema: int
    completion: int


def _without_proofs(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: ([] if k == "proof" else _without_proofs(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_proofs(v) for v in value]
    return value


def run(doc: Doc, kind: str, mode: str, server: ScriptedLLMServer) -> tuple[list[Round], Any, bool]:
    """Read `doc` with model `kind` in `mode`; (rounds, loop result, whether an error was injected)."""
    prompt_text = render_prompt(doc.pages).text
    seen_text = f"{aa.DATA_OPEN}\n{prompt_text}\n{aa.DATA_CLOSE}" if hasattr(aa, "DATA_OPEN") else None
    replies: list[str] = []
    if doc.type == "acta":
        model: Any = ActaModel(kind, doc.truth, seed=7)
    else:
        from tests.support.invoice_answers import correct_invoice_answer

        blocks = [b for p in doc.pages for b in p.blocks]
        model = InvoiceModel(kind, correct_invoice_answer(doc.name, doc.truth, render_prompt(doc.pages), blocks))

    def step(body: dict[str, Any]) -> Reply:
        messages = body.get("messages", [])
        if mode == "vision" and seen_text:  # the page's text stands in for what a vision model reads
            body = {**body, "messages": messages[:1] + [{"role": "user", "content": seen_text}] + messages[1:]}
        if doc.type == "acta":
            reply = model.step(body)
            content = reply.body["choices"][0]["message"]["content"] if reply.status == 200 else None
            data = json.loads(content) if content else None
        else:
            answer = model.answer(aa.feedback_of(body))
            fields = aa.patch_fields(body) if model.answers and hasattr(aa, "patch_fields") else None
            data = aa.as_patch(answer, model.answers[-1], fields) if fields is not None else answer
            model.answers.append(answer)
            reply = None
        if mode == "vision" and data is not None:
            data = _without_proofs(data)
            reply = None
        if reply is None:
            reply = reply_json(data, usage=(1500, 900))
        replies.append(reply.body["choices"][0]["message"]["content"] or "" if reply.status == 200 else "")
        return reply

    server.always(step)
    before = len(server.bodies)
    config = LlmConfig(base_url=server.base_url, model=SCRIPTED_MODEL, max_retries=0, timeout_s=60,
                       input_mode=mode)
    extra = {"page_images": doc.images} if mode != "text" else {}
    result = read_pages(pages=doc.pages, doctype=get_doctype(doc.type), config=config, max_rounds=3, **extra).result
    rounds = []
    for body, reply in zip(server.bodies[before:], replies, strict=True):
        text, schema = prompt_tokens(body)
        rounds.append(Round(text + schema, schema, tokens(reply)))
    return rounds, result, bool(getattr(model, "injected", False))


# ---------------------------------------------------------------- tables


@dataclass
class Cell:
    docs: int = 0
    rounds: dict[int, list[Round]] = field(default_factory=lambda: defaultdict(list))
    injected: int = 0
    corrected: int = 0
    flagged: int = 0
    missed: int = 0
    clean: int = 0
    clean_pass: int = 0
    erred: int = 0  # right readings of sheets whose poll workers erred
    erred_flagged: int = 0


def _mean(values: list[int]) -> float:
    return sum(values) / len(values) if values else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modes", default="text,vision,hybrid")
    parser.add_argument("--seeds", type=int, default=1, help="sheets per unseen layout")
    parser.add_argument("--no-scans", action="store_true", help="leave out the scanned sample sheets")
    parser.add_argument("--types", default="acta,invoice")
    parser.add_argument("--outcomes", type=Path, help="write each reading's outcome here (JSON), to compare runs")
    parser.add_argument("--compare", type=Path, help="an --outcomes file of an earlier run: list what it "
                        "corrected or flagged that this run does not")
    args = parser.parse_args()
    modes = [m for m in args.modes.split(",") if m == "text" or HAS_IMAGES]
    docs = ((acta_docs(seeds=args.seeds, scans=not args.no_scans) if "acta" in args.types else [])
            + (invoice_docs() if "invoice" in args.types else []))
    for doc in docs:
        read_doc(doc)
    cells: dict[tuple[str, str], Cell] = defaultdict(Cell)
    outcomes: dict[str, str] = {}
    with tempfile.TemporaryDirectory(), ScriptedLLMServer() as server:
        for mode in modes:
            for doc in docs:
                for kind in (MODELS if doc.type == "acta" else INVOICE_MODELS):
                    rounds, result, injected = run(doc, kind, mode, server)
                    cell = cells[(doc.type, mode)]
                    cell.docs += 1
                    for k, r in enumerate(rounds, start=1):
                        cell.rounds[k].append(r)
                    wrong = (wrong_fields(result.answer, doc.truth) if doc.type == "acta"
                             else _invoice_wrong(doc, result.answer))
                    if kind == "right" and doc.printed_errors:
                        cell.erred += 1
                        cell.erred_flagged += not result.passed
                    elif kind == "right":
                        cell.clean += 1
                        cell.clean_pass += bool(result.passed and not wrong)
                    elif injected:
                        cell.injected += 1
                        outcome = "flagged" if not result.passed else "corrected" if not wrong else "missed"
                        setattr(cell, outcome, getattr(cell, outcome) + 1)
                        outcomes[f"{mode} {doc.type} {doc.name} {kind}"] = outcome
    n_acta = sum(d.type == "acta" for d in docs)
    print(f"## Retry cost: {n_acta} tally sheets, {len(docs) - n_acta} invoices, modes: {', '.join(modes)}\n")
    print("| type | mode | readings | rounds 1/2/3 | round 1 prompt tok | round k / round 1 prompt "
          "| of it schema (r1 → rk) | round 1 completion tok | round k / round 1 completion |")
    print("| --- | --- | ---: | --- | ---: | --- | --- | ---: | --- |")
    for (kind, mode), cell in sorted(cells.items()):
        first = cell.rounds[1]
        p1, c1, s1 = _mean([r.prompt for r in first]), _mean([r.completion for r in first]), _mean([r.schema for r in first])
        later = [k for k in sorted(cell.rounds) if k > 1]
        prompt_ratio = ", ".join(f"r{k} {_mean([r.prompt for r in cell.rounds[k]]) / p1:.2f}x" for k in later) or "—"
        comp_ratio = ", ".join(f"r{k} {_mean([r.completion for r in cell.rounds[k]]) / c1:.2f}x" for k in later) or "—"
        schema = f"{s1:.0f} → " + (", ".join(f"{_mean([r.schema for r in cell.rounds[k]]):.0f}" for k in later) or "—")
        counts = "/".join(str(len(cell.rounds.get(k, []))) for k in (1, 2, 3))
        print(f"| {kind} | {mode} | {cell.docs} | {counts} | {p1:,.0f} | {prompt_ratio} | {schema} "
              f"| {c1:,.0f} | {comp_ratio} |")
    print("\n| type | mode | right readings of clean sheets passed | right readings of sheets printed with errors "
          "flagged | injected errors | corrected | flagged | missed (passed wrong) |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for (kind, mode), cell in sorted(cells.items()):
        print(f"| {kind} | {mode} | {cell.clean_pass}/{cell.clean} | {cell.erred_flagged}/{cell.erred} "
              f"| {cell.injected} | {cell.corrected} "
              f"| {cell.flagged} | {cell.missed} |")
    if args.outcomes:
        args.outcomes.write_text(json.dumps(outcomes, indent=1, sort_keys=True))
    if args.compare:
        earlier = json.loads(args.compare.read_text())
        worse = {k: (v, outcomes[k]) for k, v in sorted(earlier.items())
                 if k in outcomes and v != outcomes[k] and (v, outcomes[k]) != ("flagged", "corrected")}
        print(f"\nAgainst {args.compare.name}: {sum(v == 'corrected' for v in earlier.values())} corrected then, "
              f"{sum(outcomes.get(k) == 'corrected' for k, v in earlier.items() if v == 'corrected')} of them "
              f"corrected now; {len(worse)} readings fare worse" + "".join(f"\n- {k}: {a} then, {b} now"
                                                                       for k, (a, b) in worse.items()))
    return 0


def _invoice_wrong(doc: Doc, answer: dict[str, Any] | None) -> list[str]:
    from tests.support.invoice_answers import same_as_truth

    return ["answer"] if answer is None else same_as_truth(doc.name, answer, doc.truth)


if __name__ == "__main__":
    sys.exit(main())
