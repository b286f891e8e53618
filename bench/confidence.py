"""Field confidence on layouts never tuned on: does it rank wrong fields below right ones, is it calibrated,
and what does the suspicious-pass route catch for the review load it adds?

Run from the project root:
    .venv/bin/python bench/confidence.py [--seeds 5] [--scan-seeds 0] [--layouts a,b]
    .venv/bin/python bench/confidence.py --layouts none --sampled-pdfs 100 --sampled-scans 100

The documents and readings are those of bench/unseen_layouts.py (same sheets, OCR cache, scripted models
of tests/support/acta_models.py through the scripted OpenAI-compatible server and extraction.reading.rounds.read_pages).
Every field of every kept answer gets the signals of extraction/confidence/signals.py and a label: right
when it equals what the sheet prints. The confidence model is fitted on the TUNE layouts and TUNE sampled
sheets (the per-kind "corrected" rate is the TUNE share of wrong fields, as reviews would give it) and
reported on the MEASURE layouts and MEASURE sampled sheets, held back: AUROC of confidence for right vs wrong
fields, expected calibration error (10 bins), Brier score, for the documented prior and for the fit. The
suspicious-pass threshold is chosen on TUNE as the highest that adds at most 10% to the review load (flagged
documents); on MEASURE it is reported with the passing documents it routes and the wrong-but-passing documents
among them.

With `--no-proof-rules` the loop's rules are only the type's own (sums, digits against words, rows), as in
the seed study, which had no proof rules: forced sums, moved votes and all-zero rounds then pass every rule
with wrong values (the study's silent errors), and the suspicious-pass route is what must catch them. The
confidence signals still look at the proofs.
Prints markdown on stdout.
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
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from unseen_layouts import CACHE, FIRST_SEED, OCR_CODE, Doc, _ocr, document_bytes, sampled_docs  # noqa: E402

from extraction.confidence.calibration import auroc, brier, ece, threshold_curve  # noqa: E402
from extraction.confidence.model import fit, prior_model  # noqa: E402
from extraction.confidence.second_engine import page_words, second_engine_agreement  # noqa: E402
from extraction.confidence.signals import field_kind, field_signals  # noqa: E402
from extraction.doctypes.registry import get_doctype  # noqa: E402
from extraction.llm.config import LlmConfig  # noqa: E402
from extraction.ocr.blocks import SourceDocument  # noqa: E402
from extraction.ocr.registry import get_engine  # noqa: E402
from extraction.pipeline import render  # noqa: E402
from extraction.reading.rounds import read_pages  # noqa: E402
from sheetgen.layouts import LAYOUTS  # noqa: E402
from tests.support.acta_models import MODELS, ActaModel, model_step, wrong_fields  # noqa: E402
from tests.support.llm_server import SCRIPTED_MODEL, ScriptedLLMServer  # noqa: E402

MAX_ADDED_LOAD = 0.10  # the suspicious-pass route may add at most this share to the review load


def _second(job: tuple[Doc, str]) -> dict[int, list]:
    """A second engine's words per page of one sheet (rendered as production renders it), cached on disk."""
    doc, engine = job
    data, kind, _ = document_bytes(doc)
    key = hashlib.sha256(data + OCR_CODE + engine.encode()).hexdigest()[:16]
    path = CACHE / f"{doc.layout}-{doc.seed}-{doc.input}-second-{engine}-{key}.pkl"
    if path.exists():
        return pickle.loads(path.read_bytes())  # noqa: S301 - a cache this bench wrote itself
    with tempfile.TemporaryDirectory(prefix="second-") as tmp:
        source = Path(tmp) / ("sheet.pdf" if kind == "pdf" else "sheet.jpg")
        source.write_bytes(data)
        rendered = render.render_document(source=source, kind=kind, out_dir=Path(tmp) / "pages", dpi=150)
        pages = get_engine(engine).read(
            SourceDocument(path=source, kind=kind, pages=[r.as_page_image() for r in rendered]))
    words = {p.number: page_words(p) for p in pages}
    CACHE.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(words))
    return words


@dataclass
class Reading:
    doc: Doc
    kind: str  # the scripted model
    passed: bool
    fields: dict[str, dict[str, float]]  # path -> signals
    wrong: set[str]  # labelled fields that differ from the sheet
    labelled: set[str]


def read_all(docs: list[Doc], ocr: dict, models: list[str], second: dict | None = None) -> list[Reading]:
    doctype = get_doctype("acta")
    out: list[Reading] = []
    current: list = [None]
    with ScriptedLLMServer() as server:
        server.always(model_step(lambda: current[0]))
        config = LlmConfig(base_url=server.base_url, model=SCRIPTED_MODEL, max_retries=0, timeout_s=60)
        for doc in docs:
            pages, _ = ocr[doc]
            _, _, printed = document_bytes(doc)
            for kind in models:
                model = ActaModel(kind, printed, seed=doc.seed)
                current[0] = model
                reading = read_pages(pages=pages, doctype=doctype, config=config, max_rounds=3)
                result = reading.result
                if result.answer is None:
                    continue
                ctx = reading.ctx
                kept = result.best.number
                agreement = (second_engine_agreement(answer=result.answer, ctx=ctx, words_by_page=second[doc])
                             if second else None)
                signals = field_signals(answer=result.answer, violations=result.violations, ctx=ctx,
                                        settled=result.settled, second_engine=agreement,
                                        round_answers=[r.answer for r in result.rounds if r.number <= kept])
                wrong = set(wrong_fields(result.answer, printed))
                labelled = {p for p in signals if p in _labelled_paths(printed)}
                out.append(Reading(doc, kind, result.passed, {p: s.values for p, s in signals.items()}, wrong,
                                   labelled))
            current[0] = None
    return out


def _labelled_paths(printed: dict) -> set[str]:
    from tests.support.acta_models import printed_counts

    return set(printed_counts(printed))


def rows_of(readings: list[Reading]) -> tuple[list[dict], list[int]]:
    rows, labels = [], []
    for r in readings:
        for path in sorted(r.labelled):
            rows.append(r.fields[path])
            labels.append(0 if path in r.wrong else 1)
    return rows, labels


def with_rates(readings: list[Reading], rates: dict[str, float]) -> None:
    for r in readings:
        for path, values in r.fields.items():
            values["corrected_rate"] = rates.get(field_kind(path), 0.0)


def _f(x: float | None, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5, help="sheets per layout read as born-digital PDFs")
    parser.add_argument("--scan-seeds", type=int, default=0, help="sheets per layout read as scans (slow OCR)")
    parser.add_argument("--layouts", default="", help="comma-separated layout names (default: all; 'none' for none)")
    parser.add_argument("--sampled-pdfs", type=int, default=0,
                        help="sampled sheets (bench/unseen_layouts.py) per split read as PDFs: fitted on TUNE, "
                        "reported on MEASURE")
    parser.add_argument("--sampled-scans", type=int, default=0, help="sampled sheets per split read as scans")
    parser.add_argument("--sampled-skip", type=int, default=0, help="start after each split's first N seeds")
    parser.add_argument("--sampled-splits", default="tune,measure", help="which splits of sampled sheets to read "
                        "(tune alone while building: its figures are then in-sample)")
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated scripted models")
    parser.add_argument("--jobs", type=int, default=2, help="processes for OCR not yet cached")
    parser.add_argument("--second-engine", default="", choices=["", "tesseract", "rapidocr"],
                        help="an engine that reads every page again, for the engine_disagrees signal")
    parser.add_argument("--no-proof-rules", action="store_true",
                        help="the loop checks only the type's own rules, as the seed study did")
    args = parser.parse_args()
    if args.no_proof_rules:
        import extraction.reading.validation

        extraction.reading.validation.universal_rules = lambda **kwargs: []  # make_validator looks it up at each call

    layouts = [] if args.layouts == "none" else [n for n in (args.layouts.split(",") if args.layouts else LAYOUTS) if n]
    models = [m for m in args.models.split(",") if m]
    docs = [Doc(n, FIRST_SEED + k, "pdf") for n in layouts for k in range(args.seeds)]
    docs += [Doc(n, FIRST_SEED + k, "scan") for n in layouts for k in range(args.scan_seeds)]
    if args.sampled_pdfs or args.sampled_scans:
        docs += [d for split in args.sampled_splits.split(",")
                 for d in sampled_docs(split, pdfs=args.sampled_pdfs, scans=args.sampled_scans, skip=args.sampled_skip)]
    started = time.monotonic()
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        ocr = dict(zip(docs, pool.map(_ocr, docs), strict=True))
        second = (dict(zip(docs, pool.map(_second, [(d, args.second_engine) for d in docs]), strict=True))
                  if args.second_engine else None)
    readings = read_all(docs, ocr, models, second)
    tune = [r for r in readings if r.doc.split == "tune"]
    measure = [r for r in readings if r.doc.split == "measure"]

    # "how often people corrected this field of this type": the TUNE share of wrong fields per kind
    seen, wrong = Counter(), Counter()
    for r in tune:
        for path in r.labelled:
            seen[field_kind(path)] += 1
            wrong[field_kind(path)] += path in r.wrong
    rates = {k: wrong[k] / n for k, n in seen.items()}
    with_rates(readings, rates)

    tune_rows, tune_labels = rows_of(tune)
    fitted = fit(tune_rows, tune_labels)
    prior = prior_model()
    print(f"## Field confidence: {len(layouts)} layouts, {args.seeds} PDF + {args.scan_seeds} scan sheets each, "
          f"{args.sampled_pdfs} PDF + {args.sampled_scans} scan sampled sheets per split, "
          f"models: {', '.join(models)}{', no proof rules' if args.no_proof_rules else ''}"
          f"{', second engine ' + args.second_engine if args.second_engine else ''} "
          f"({time.monotonic() - started:.0f} s)")
    print("\n| split | model | fields | wrong | AUROC (wrong vs right) | ECE | Brier |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for split, group in (("tune", tune), ("measure (held back)", measure)):
        rows, labels = rows_of(group)
        for name, scorer in (("prior", prior), ("fitted on TUNE", fitted)):
            scores = scorer.predict_many(rows)
            print(f"| {split} | {name} | {len(labels)} | {labels.count(0)} | {_f(auroc(scores, labels))} | "
                  f"{_f(ece(scores, labels))} | {_f(brier(scores, labels), 4)} |")

    if args.scan_seeds or args.sampled_scans:  # born-digital pages give deterministic signals; scans test calibration
        print("\n| MEASURE (held back), by input | model | fields | wrong | AUROC | ECE | Brier |")
        print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
        for kind in ("pdf", "scan"):
            rows, labels = rows_of([r for r in measure if r.doc.input == kind])
            for name, scorer in (("prior", prior), ("fitted on TUNE", fitted)):
                scores = scorer.predict_many(rows)
                print(f"| {kind} | {name} | {len(labels)} | {labels.count(0)} | {_f(auroc(scores, labels))} | "
                      f"{_f(ece(scores, labels))} | {_f(brier(scores, labels), 4)} |")

    print("\nFitted weights (prior in brackets): " + ", ".join(
        f"{n} {fitted.weights[n]:+.2f} ({prior.weights[n]:+.1f})" for n in fitted.weights)
        + f"; bias {fitted.bias:+.2f} ({prior.bias:+.1f})")

    # the suspicious-pass route: passing documents whose least confident field is under the threshold
    def passing(group: list[Reading]) -> list[tuple[float, bool]]:
        return [(min(fitted.predict(r.fields[p]) for p in r.labelled), bool(r.wrong)) for r in group if r.passed]

    thresholds = sorted({round(x / 1000, 3) for x in range(0, 1001, 5)})
    tune_flagged = sum(1 for r in tune if not r.passed)
    # the highest threshold whose needless reviews (right documents routed) stay within the allowance
    chosen = 0.0
    for point in threshold_curve(passing(tune), thresholds):
        if point.routed - point.caught <= MAX_ADDED_LOAD * tune_flagged:
            chosen = max(chosen, point.threshold)
    print(f"\nSuspicious-pass threshold chosen on TUNE (right documents routed at most {MAX_ADDED_LOAD:.0%} "
          f"of the flagged ones): {chosen:.3f}")
    print("\n| split | readings | flagged (review load) | passed | wrong but passing | routed as suspicious | "
          "of them right (needless reviews) | needless reviews / flagged | routed / flagged | wrong passes caught |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for split, group in (("tune", tune), ("measure (held back)", measure)):
        docs_passing = passing(group)
        flagged = sum(1 for r in group if not r.passed)
        [point] = threshold_curve(docs_passing, [chosen])
        wrong_pass = sum(1 for _, w in docs_passing if w)
        needless = point.routed - point.caught
        print(f"| {split} | {len(group)} | {flagged} | {len(docs_passing)} | {wrong_pass} | {point.routed} | "
              f"{needless} | {needless / flagged:.1%} | {point.routed / flagged:.1%} | {point.caught}/{wrong_pass} |"
              if flagged else f"| {split} | {len(group)} | 0 | — |")
    by_kind = defaultdict(list)
    for r in measure:
        rows, labels = rows_of([r])
        by_kind[r.kind] += list(zip(fitted.predict_many(rows), labels, strict=True))
    print("\n| MEASURE, by scripted model | fields | wrong | mean confidence of right | of wrong |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for kind, pairs in by_kind.items():
        right = [s for s, y in pairs if y]
        bad = [s for s, y in pairs if not y]
        print(f"| {kind} | {len(pairs)} | {len(bad)} | {_f(sum(right) / len(right) if right else None)} | "
              f"{_f(sum(bad) / len(bad) if bad else None)} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
