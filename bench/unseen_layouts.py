"""Layout generalisation: do right readings pass, and wrong ones get caught, on layouts never tuned on?

Run from the project root:
    .venv/bin/python bench/unseen_layouts.py [--seeds 5] [--scan-seeds 6] [--no-scans] [--layouts a,b]

For every layout of the acta generator (extraction/acta/layouts.py: TUNE_LAYOUTS may be tuned on,
MEASURE_LAYOUTS are only measured) and every seed, a clean sheet is made as a born-digital PDF and as a
scan degraded in the layout's style. Each is read the production way, without Django: pages rendered
(extraction.render), OCR by the `auto` engine (the PDF text layer; rapidocr for the scan), then for each
scripted model (tests/acta_models.py: one that reads right, five that err as a real model did in the seed
study) the validation loop runs through extraction.reading.read_pages -- prompt, messages, the LLM client
against the scripted OpenAI-compatible server on loopback, the acta rules and the proof rules, feedback,
best round kept.

Reported per layout and input: clean documents that pass (the right model's answer passes every rule),
documents that pass with a wrong value (the kept answer differs from what the sheet prints), injected
errors caught (flagged, or corrected: passed with every value right), whether an all-zero round was ever
kept, stop reasons, and the rules that fired on clean documents. OCR results are cached per (layout, seed,
input, document bytes) under var/bench/unseen_layouts/, so reruns cost only the loop.
Prints markdown tables on stdout.
"""

from __future__ import annotations

import argparse
import hashlib
import pickle
import sys
import tempfile
import time
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # runnable as a plain script from anywhere

from extraction import render  # noqa: E402
from extraction.acta.generate import generate_acta  # noqa: E402
from extraction.acta.layouts import LAYOUTS, TUNE_LAYOUTS  # noqa: E402
from extraction.acta.scans import scan_image  # noqa: E402
from extraction.doctypes.registry import get_doctype  # noqa: E402
from extraction.llm.config import LlmConfig  # noqa: E402
from extraction.ocr.blocks import OcrPage, SourceDocument  # noqa: E402
from extraction.ocr.registry import get_engine  # noqa: E402
from extraction.reading import read_pages  # noqa: E402
from tests.acta_models import ERRING, MODELS, ActaModel, is_all_zero, model_step, wrong_fields  # noqa: E402
from tests.llm_server import SCRIPTED_MODEL, ScriptedLLMServer  # noqa: E402

CACHE = ROOT / "var" / "bench" / "unseen_layouts"
FIRST_SEED = 5000
INPUTS = ("pdf", "scan")
# The cache is keyed by the document and by the code that reads it: a change to rendering or OCR reads again.
OCR_CODE = b"".join(p.read_bytes() for p in sorted([ROOT / "extraction" / "render.py",
                                                     *(ROOT / "extraction" / "ocr").glob("*.py")]))


@dataclass(frozen=True)
class Doc:
    layout: str
    seed: int
    input: str

    @property
    def split(self) -> str:
        return "tune" if self.layout in TUNE_LAYOUTS else "measure"


def document_bytes(doc: Doc) -> tuple[bytes, str, dict]:
    """(file bytes, kind, what the sheet prints) of one clean sheet."""
    acta = generate_acta(seed=doc.seed, layout=doc.layout)
    if doc.input == "pdf":
        return acta.pdf_bytes, "pdf", acta.printed
    return scan_image(acta.pdf_bytes, seed=doc.seed, style=LAYOUTS[doc.layout].scan), "image", acta.printed


def _ocr(doc: Doc) -> tuple[list[OcrPage], float]:
    """The production reading of one file: render the pages, then the `auto` OCR engine. Cached on disk."""
    data, kind, _ = document_bytes(doc)
    key = hashlib.sha256(data + OCR_CODE).hexdigest()[:16]
    path = CACHE / f"{doc.layout}-{doc.seed}-{doc.input}-{key}.pkl"
    if path.exists():
        return pickle.loads(path.read_bytes()), 0.0  # noqa: S301 - a cache this bench wrote itself
    started = time.process_time()
    with tempfile.TemporaryDirectory(prefix="unseen-") as tmp:
        source = Path(tmp) / ("sheet.pdf" if kind == "pdf" else "sheet.jpg")
        source.write_bytes(data)
        rendered = render.render_document(source=source, kind=kind, out_dir=Path(tmp) / "pages", dpi=150)
        pages = get_engine("auto").read(
            SourceDocument(path=source, kind=kind, pages=[r.as_page_image() for r in rendered]))
    seconds = time.process_time() - started
    CACHE.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(pages))
    return pages, seconds


@dataclass
class Tally:
    docs: int = 0
    clean_pass: int = 0
    wrong_pass: int = 0  # any model: passed with a value the sheet does not print
    injected: int = 0
    flagged: int = 0
    corrected: int = 0
    missed: int = 0
    zero_kept: int = 0
    stops: Counter = field(default_factory=Counter)
    clean_rules: Counter = field(default_factory=Counter)  # rules that fired on the right model's kept answer
    ocr_s: float = 0.0

    def add(self, other: Tally) -> None:
        for name in ("docs", "clean_pass", "wrong_pass", "injected", "flagged", "corrected", "missed",
                     "zero_kept", "ocr_s"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.stops.update(other.stops)
        self.clean_rules.update(other.clean_rules)


def run_doc(doc: Doc, pages: list[OcrPage], printed: dict, server: ScriptedLLMServer, current: list,
            models: list[str], by_model: dict, examples: list) -> Tally:
    tally = Tally(docs=1)
    doctype = get_doctype("acta")
    config = LlmConfig(base_url=server.base_url, model=SCRIPTED_MODEL, max_retries=0, timeout_s=60)
    for kind in models:
        model = ActaModel(kind, printed, seed=doc.seed)
        current[0] = model
        result = read_pages(pages=pages, doctype=doctype, config=config, max_rounds=3).result
        wrong = wrong_fields(result.answer, printed)
        tally.stops[result.reason] += 1
        if result.passed and wrong:
            tally.wrong_pass += 1
            examples.append(f"{doc.layout} {doc.input} seed {doc.seed} {kind} ({model.site or 'clean'}): "
                            f"passed with {', '.join(wrong[:4])} wrong")
        if is_all_zero(result.answer) and not is_all_zero_printed(printed):
            tally.zero_kept += 1
        stats = by_model[(doc.split, doc.input, kind)]
        if kind == "right":
            stats["docs"] += 1
            if result.passed and not wrong:
                tally.clean_pass += 1
                stats["passed"] += 1
            else:
                tally.clean_rules.update({v.code for v in result.violations})
            continue
        if not model.injected:
            continue
        tally.injected += 1
        stats["injected"] += 1
        if not result.passed:
            tally.flagged += 1
            stats["flagged"] += 1
        elif not wrong:
            tally.corrected += 1
            stats["corrected"] += 1
        else:
            tally.missed += 1
            stats["missed"] += 1
    current[0] = None
    return tally


def is_all_zero_printed(printed: dict) -> bool:
    return all(r["votes"] == 0 for r in printed["rows"])


def _ranked(counter: Counter) -> list[tuple[str, int]]:
    return sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))  # ties by name: the same text every run


def _pct(n: int, d: int) -> str:
    return f"{n}/{d} ({n / d:.0%})" if d else "—"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5, help="sheets per layout read as born-digital PDFs")
    parser.add_argument("--scan-seeds", type=int, default=6, help="sheets per layout read as scans (rapidocr)")
    parser.add_argument("--no-scans", action="store_true", help="PDFs only")
    parser.add_argument("--layouts", default="", help="comma-separated layout names (default: all)")
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated scripted models")
    parser.add_argument("--jobs", type=int, default=2, help="processes for OCR not yet cached")
    args = parser.parse_args()

    layouts = [name for name in (args.layouts.split(",") if args.layouts else LAYOUTS) if name]
    unknown = [name for name in layouts if name not in LAYOUTS]
    if unknown:
        parser.error(f"unknown layouts {unknown}; known: {list(LAYOUTS)}")
    models = [m for m in args.models.split(",") if m]
    docs = [Doc(name, FIRST_SEED + k, "pdf") for name in layouts for k in range(args.seeds)]
    if not args.no_scans:
        docs += [Doc(name, FIRST_SEED + k, "scan") for name in layouts for k in range(args.scan_seeds)]

    started = time.monotonic()
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        ocr = dict(zip(docs, pool.map(_ocr, docs), strict=True))
    ocr_wall = time.monotonic() - started

    per: dict[tuple[str, str], Tally] = defaultdict(Tally)
    by_model: dict[tuple[str, str, str], Counter] = defaultdict(Counter)
    examples: list[str] = []
    current: list = [None]
    with ScriptedLLMServer() as server:
        server.always(model_step(lambda: current[0]))
        for doc in docs:
            pages, seconds = ocr[doc]
            _, _, printed = document_bytes(doc)
            tally = run_doc(doc, pages, printed, server, current, models, by_model, examples)
            tally.ocr_s = seconds
            per[(doc.layout, doc.input)].add(tally)
    loop_wall = time.monotonic() - started - ocr_wall

    print(f"## Unseen layouts: {len(layouts)} layouts, {args.seeds} PDF + "
          f"{0 if args.no_scans else args.scan_seeds} scan sheets each, models: {', '.join(models)}")
    fresh = Counter(doc.input for doc in docs if ocr[doc][1] > 0)
    cpu = Counter()
    for doc in docs:
        cpu[doc.input] += ocr[doc][1]
    ocr_cpu = ", ".join(f"{inp} {cpu[inp] / fresh[inp]:.1f} s CPU/page over {fresh[inp]}" for inp in INPUTS
                        if fresh[inp])
    print(f"\n(OCR {ocr_wall:.0f} s wall for what was not cached{': ' + ocr_cpu if ocr_cpu else ''}; "
          f"loops {loop_wall:.0f} s)")
    print("\n| split | layout | input | clean pass | pass with a wrong value | injected errors caught | "
          "all-zero kept | stop reasons | rules on clean documents |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | --- | --- |")
    totals: dict[tuple[str, str], Tally] = defaultdict(Tally)
    for name in layouts:
        for inp in INPUTS:
            t = per.get((name, inp))
            if t is None:
                continue
            split = "tune" if name in TUNE_LAYOUTS else "measure"
            totals[(split, inp)].add(t)
            stops = ", ".join(f"{k} {v}" for k, v in _ranked(t.stops))
            rules = ", ".join(f"{k} {v}" for k, v in _ranked(t.clean_rules)) or "—"
            print(f"| {split} | {name} | {inp} | {_pct(t.clean_pass, t.docs)} | {t.wrong_pass} | "
                  f"{_pct(t.flagged + t.corrected, t.injected)} | {t.zero_kept} | {stops} | {rules} |")
    print("\n| split | input | documents | clean pass | pass with a wrong value | injected | flagged | corrected | "
          "missed | all-zero kept |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for split in ("tune", "measure"):
        for inp in INPUTS:
            t = totals.get((split, inp))
            if t is None:
                continue
            print(f"| **{split.upper()}** | {inp} | {t.docs} | {_pct(t.clean_pass, t.docs)} | {t.wrong_pass} | "
                  f"{t.injected} | {t.flagged} | {t.corrected} | {t.missed} | {t.zero_kept} |")
    print("\n| split | input | model | injected | flagged | corrected | missed (passed wrong) |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: |")
    for split in ("tune", "measure"):
        for inp in INPUTS:
            for kind in ERRING:
                s = by_model.get((split, inp, kind))
                if s:
                    print(f"| {split} | {inp} | {kind} | {s['injected']} | {s['flagged']} | {s['corrected']} | "
                          f"{s['missed']} |")
    if examples:
        print("\nPassed with a wrong value (first 12):")
        for line in examples[:12]:
            print(f"- {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
