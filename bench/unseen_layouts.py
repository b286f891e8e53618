"""Layout generalisation: do right readings pass, and wrong ones get caught, on layouts never tuned on?

Run from the project root:
    .venv/bin/python bench/unseen_layouts.py [--seeds 5] [--scan-seeds 6] [--no-scans] [--layouts a,b]
    .venv/bin/python bench/unseen_layouts.py --sampled measure [--sampled-pdfs 100] [--sampled-scans 100]
    .venv/bin/python bench/unseen_layouts.py --layouts none --family forms --sampled tune [--sampled-pdfs 40]

Two kinds of sheets. The FIXED layouts: every layout of sheetgen/layouts.py (TUNE_LAYOUTS may be
tuned on, MEASURE_LAYOUTS are only measured), each seed a clean sheet as a born-digital PDF and as a scan
degraded in the layout's style. The SAMPLED layouts (`--sampled tune|measure|both`): every sheet's layout
drawn convention by convention from its seed (sheetgen/conventions.py: how counts are printed, where
the words go, merged and rotated cells, blocks side by side, totals, page, fills, rules, header numbers,
signatures, stamps, fonts; its scan degraded with parameters of its own), TUNE seeds from
SAMPLED_TUNE_FROM, which may be looked at, MEASURE seeds from SAMPLED_MEASURE_FROM, which are only reported
on. For sampled sheets that fail, the conventions they have in common are printed.

`--family` picks the family of sampled sheets: `tables` (the default, above), `forms` (sheetgen/forms.py:
printed lines on thermal strips 58 or 80 mm wide or on paper, or a table; one long page or several; receipt
fonts; photographed on a table or scanned), or `both`. The forms family has its own seeds: TUNE from
FORMS_TUNE_FROM, MEASURE from FORMS_MEASURE_FROM, which are only reported on, like the tables'. A sheet of
several pages is read as one document: all its pages are OCR'd and read together; its scan is a PDF of the
page images.

Each sheet is read the production way, without Django: pages rendered (extraction.pipeline.render), OCR by the
`auto` engine (the PDF text layer; rapidocr for the scan), then for each scripted model (tests/support/acta_models.py:
one that reads right, five that err as a real model did in the seed study) the validation loop runs through
extraction.reading.rounds.read_pages -- prompt, messages, the LLM client against the scripted OpenAI-compatible
server on loopback, the acta rules and the proof rules, feedback, best round kept.

Reported per layout and input: clean documents that pass (the right model's answer passes every rule),
documents that pass with a wrong value (the kept answer differs from what the sheet prints), injected
errors caught (flagged, or corrected: passed with every value right), whether an all-zero round was ever
kept, stop reasons, and the rules that fired on clean documents; and what retry rounds cost: each round's
prompt and completion tokens (o200k, counted as bench/retry_cost.py counts them), round k against round 1
of the same readings. OCR results are cached per (layout, seed, input, document bytes) under
var/bench/unseen_layouts/, so reruns cost only the loop.
Prints markdown tables on stdout.
"""

from __future__ import annotations

import argparse
import hashlib
import json
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
sys.path.insert(0, str(ROOT / "bench"))

from retry_cost import metered  # noqa: E402

from extraction.doctypes.registry import get_doctype  # noqa: E402
from extraction.llm.config import LlmConfig  # noqa: E402
from extraction.ocr.blocks import OcrPage, SourceDocument  # noqa: E402
from extraction.ocr.registry import get_engine  # noqa: E402
from extraction.pipeline import render  # noqa: E402
from extraction.reading.rounds import read_pages  # noqa: E402
from sheetgen.conventions import AXES  # noqa: E402
from sheetgen.forms import FORM_AXES  # noqa: E402
from sheetgen.generate import generate_acta  # noqa: E402
from sheetgen.layouts import LAYOUTS, TUNE_LAYOUTS  # noqa: E402
from sheetgen.sampled import SampledActa, generate_sampled, scan_sampled  # noqa: E402
from sheetgen.scans import scan_image  # noqa: E402
from tests.support.acta_models import ERRING, MODELS, ActaModel, is_all_zero, model_step, wrong_fields  # noqa: E402
from tests.support.llm_server import SCRIPTED_MODEL, ScriptedLLMServer  # noqa: E402

CACHE = ROOT / "var" / "bench" / "unseen_layouts"
FIRST_SEED = 5000
INPUTS = ("pdf", "scan")
SAMPLED = "sampled"  # the layout name of sheets whose conventions are drawn from their seed
# Sampled sheets from these seeds on may be looked at while building readers, rules, prompts and thresholds ...
SAMPLED_TUNE_FROM = 100_000
# ... and from these on they are only reported on: nobody reads their failures to fix a special case.
SAMPLED_MEASURE_FROM = 900_000
FORMS = "forms"  # the layout name of sampled sheets of the forms family (printed lines, strips, photos)
# The forms family's seeds: TUNE from here (may be looked at) ...
FORMS_TUNE_FROM = 300_000
# ... MEASURE from here (only reported on; nobody reads their failures before the reading code is final).
FORMS_MEASURE_FROM = 700_000
FAMILY_OF = {SAMPLED: "tables", FORMS: "forms"}
# The cache is keyed by the document and by the code that reads it: a change to rendering or OCR reads again.
OCR_CODE = b"".join(p.read_bytes() for p in sorted([ROOT / "extraction" / "pipeline" / "render.py",
                                                     *(ROOT / "extraction" / "ocr").glob("*.py")]))


@dataclass(frozen=True)
class Doc:
    layout: str
    seed: int
    input: str

    @property
    def sampled(self) -> bool:
        return self.layout in FAMILY_OF

    @property
    def split(self) -> str:
        if self.layout == SAMPLED:
            return "tune" if self.seed < SAMPLED_MEASURE_FROM else "measure"
        if self.layout == FORMS:
            return "tune" if self.seed < FORMS_MEASURE_FROM else "measure"
        return "tune" if self.layout in TUNE_LAYOUTS else "measure"

    @property
    def group(self) -> str:
        """'fixed tune', 'sampled measure', 'forms tune', ...: the kind of layout and the split."""
        kind = {SAMPLED: "sampled", FORMS: "forms"}.get(self.layout, "fixed")
        return f"{kind} {self.split}"


def sampled_docs(split: str, *, pdfs: int, scans: int, skip: int = 0, family: str = "tables") -> list[Doc]:
    """Sampled sheets of one split and family: `pdfs` read as born-digital PDFs and `scans` other sheets read
    as scans, after the split's first `skip` seeds (a set of sheets not read before)."""
    if family == "forms":
        layout, first = FORMS, (FORMS_TUNE_FROM if split == "tune" else FORMS_MEASURE_FROM) + skip
    else:
        layout, first = SAMPLED, (SAMPLED_TUNE_FROM if split == "tune" else SAMPLED_MEASURE_FROM) + skip
    return ([Doc(layout, first + k, "pdf") for k in range(pdfs)]
            + [Doc(layout, first + pdfs + k, "scan") for k in range(scans)])


def sheet_of(doc: Doc) -> SampledActa:
    return generate_sampled(doc.seed, family=FAMILY_OF[doc.layout])


def printed_of(doc: Doc) -> dict:
    """What one clean sheet prints (without making its scan)."""
    if doc.sampled:
        return sheet_of(doc).printed
    return generate_acta(seed=doc.seed, layout=doc.layout).printed


def document_bytes(doc: Doc) -> tuple[bytes, str, dict]:
    """(file bytes, kind, what the sheet prints) of one clean sheet. A scan of several pages is a PDF of the
    page images."""
    if doc.sampled:
        sheet = sheet_of(doc)
        if doc.input == "pdf":
            return sheet.pdf_bytes, "pdf", sheet.printed
        data = scan_sampled(sheet, seed=doc.seed)
        return data, "pdf" if data.startswith(b"%PDF") else "image", sheet.printed
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
        source = Path(tmp) / ("sheet.pdf" if kind == "pdf" else "sheet.jpg")  # a scan of pages: a PDF
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
    # every reading's rounds, each (prompt tokens, completion tokens)
    rounds: list[list[tuple[int, int]]] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)  # what went wrong on this sheet: "clean flagged", ...

    def add(self, other: Tally) -> None:
        for name in ("docs", "clean_pass", "wrong_pass", "injected", "flagged", "corrected", "missed",
                     "zero_kept", "ocr_s"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.stops.update(other.stops)
        self.clean_rules.update(other.clean_rules)
        self.rounds += other.rounds
        self.failed += other.failed


def run_doc(doc: Doc, pages: list[OcrPage], printed: dict, server: ScriptedLLMServer, current: list,
            models: list[str], by_model: dict, examples: list, rounds: list) -> Tally:
    tally = Tally(docs=1)
    doctype = get_doctype("acta")
    config = LlmConfig(base_url=server.base_url, model=SCRIPTED_MODEL, max_retries=0, timeout_s=60)
    for kind in models:
        model = ActaModel(kind, printed, seed=doc.seed)
        current[0] = model
        rounds.append([])
        result = read_pages(pages=pages, doctype=doctype, config=config, max_rounds=3).result
        tally.rounds.append(rounds[-1])
        wrong = wrong_fields(result.answer, printed)
        tally.stops[result.reason] += 1
        if result.passed and wrong:
            tally.wrong_pass += 1
            tally.failed.append("passed wrong")
            examples.append(f"{doc.layout} {doc.input} seed {doc.seed} {kind} ({model.site or 'clean'}): "
                            f"passed with {', '.join(wrong[:4])} wrong")
        if is_all_zero(result.answer) and not is_all_zero_printed(printed):
            tally.zero_kept += 1
        stats = by_model[(doc.group, doc.input, kind)]
        if kind == "right":
            stats["docs"] += 1
            if result.passed and not wrong:
                tally.clean_pass += 1
                stats["passed"] += 1
            else:
                tally.clean_rules.update({v.code for v in result.violations})
                tally.failed.append("clean flagged")
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
            tally.failed.append("missed")
            stats["missed"] += 1
    current[0] = None
    return tally


def is_all_zero_printed(printed: dict) -> bool:
    return all(r["votes"] == 0 for r in printed["rows"])


def _ranked(counter: Counter) -> list[tuple[str, int]]:
    return sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))  # ties by name: the same text every run


def _pct(n: int, d: int) -> str:
    return f"{n}/{d} ({n / d:.0%})" if d else "—"


GROUPS = ("fixed tune", "fixed measure", "sampled tune", "sampled measure", "forms tune", "forms measure")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5, help="sheets per layout read as born-digital PDFs")
    parser.add_argument("--scan-seeds", type=int, default=6, help="sheets per layout read as scans (rapidocr)")
    parser.add_argument("--no-scans", action="store_true", help="PDFs only")
    parser.add_argument("--layouts", default="", help="comma-separated fixed layout names (default: all; "
                        "'none' for none)")
    parser.add_argument("--sampled", choices=["", "tune", "measure", "both"], default="",
                        help="sampled sheets of this split too")
    parser.add_argument("--sampled-pdfs", type=int, default=100, help="sampled sheets per split read as PDFs")
    parser.add_argument("--sampled-scans", type=int, default=100, help="sampled sheets per split read as scans")
    parser.add_argument("--sampled-skip", type=int, default=0, help="start after the split's first N seeds")
    parser.add_argument("--family", choices=["tables", "forms", "both"], default="tables",
                        help="the family of sampled sheets: tables (sheetgen/conventions.py), forms (printed lines, "
                        "thermal strips, photos: sheetgen/forms.py) or both")
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated scripted models")
    parser.add_argument("--jobs", type=int, default=2, help="processes for OCR not yet cached")
    parser.add_argument("--outcomes", type=Path, help="write each sampled sheet's outcome and conventions here "
                        "(JSON)")
    args = parser.parse_args()

    layouts = [] if args.layouts == "none" else [n for n in (args.layouts.split(",") if args.layouts else LAYOUTS) if n]
    unknown = [name for name in layouts if name not in LAYOUTS]
    if unknown:
        parser.error(f"unknown layouts {unknown}; known: {list(LAYOUTS)}")
    models = [m for m in args.models.split(",") if m]
    docs = [Doc(name, FIRST_SEED + k, "pdf") for name in layouts for k in range(args.seeds)]
    if not args.no_scans:
        docs += [Doc(name, FIRST_SEED + k, "scan") for name in layouts for k in range(args.scan_seeds)]
    families = ["tables", "forms"] if args.family == "both" else [args.family]
    for family in families:
        for split in ("tune", "measure") if args.sampled == "both" else [args.sampled] if args.sampled else []:
            docs += sampled_docs(split, pdfs=args.sampled_pdfs, scans=0 if args.no_scans else args.sampled_scans,
                                 skip=args.sampled_skip, family=family)

    started = time.monotonic()
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        ocr = dict(zip(docs, pool.map(_ocr, docs), strict=True))
    ocr_wall = time.monotonic() - started

    per: dict[tuple[str, str], Tally] = defaultdict(Tally)
    by_model: dict[tuple[str, str, str], Counter] = defaultdict(Counter)
    sheets: dict[Doc, Tally] = {}
    examples: list[str] = []
    current: list = [None]
    rounds: list[list[tuple[int, int]]] = []
    with ScriptedLLMServer() as server:
        server.always(metered(model_step(lambda: current[0]), rounds))
        for doc in docs:
            pages, seconds = ocr[doc]
            tally = run_doc(doc, pages, printed_of(doc), server, current, models, by_model, examples, rounds)
            tally.ocr_s = seconds
            sheets[doc] = tally
            per[(doc.group if doc.sampled else doc.layout, doc.input)].add(tally)
    loop_wall = time.monotonic() - started - ocr_wall

    n_sampled = Counter(doc.group for doc in docs if doc.sampled)
    print(f"## Unseen layouts: {len(layouts)} fixed layouts"
          + (f", {args.seeds} PDF + {0 if args.no_scans else args.scan_seeds} scan sheets each" if layouts else "")
          + "".join(f"; {n} {group} sheets" for group, n in sorted(n_sampled.items()))
          + f"; models: {', '.join(models)}")
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
    for name in [*layouts, *(g for g in GROUPS if n_sampled[g])]:
        for inp in INPUTS:
            t = per.get((name, inp))
            if t is None:
                continue
            group = name if name in GROUPS else f"fixed {'tune' if name in TUNE_LAYOUTS else 'measure'}"
            totals[(group, inp)].add(t)
            stops = ", ".join(f"{k} {v}" for k, v in _ranked(t.stops))
            rules = ", ".join(f"{k} {v}" for k, v in _ranked(t.clean_rules)) or "—"
            print(f"| {group} | {name} | {inp} | {_pct(t.clean_pass, t.docs)} | {t.wrong_pass} | "
                  f"{_pct(t.flagged + t.corrected, t.injected)} | {t.zero_kept} | {stops} | {rules} |")
    print("\n| split | input | documents | clean pass | pass with a wrong value | injected | flagged | corrected | "
          "missed | all-zero kept |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for group in GROUPS:
        for inp in INPUTS:
            t = totals.get((group, inp))
            if t is None:
                continue
            print(f"| **{group.upper()}** | {inp} | {t.docs} | {_pct(t.clean_pass, t.docs)} | {t.wrong_pass} | "
                  f"{t.injected} | {t.flagged} | {t.corrected} | {t.missed} | {t.zero_kept} |")
    print("\n| split | input | model | injected | flagged | corrected | missed (passed wrong) |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: |")
    for group in GROUPS:
        for inp in INPUTS:
            for kind in ERRING:
                s = by_model.get((group, inp, kind))
                if s:
                    print(f"| {group} | {inp} | {kind} | {s['injected']} | {s['flagged']} | {s['corrected']} | "
                          f"{s['missed']} |")
    print_round_costs(totals)
    for layout in FAMILY_OF:
        print_failing_conventions({doc: t for doc, t in sheets.items() if doc.layout == layout})
    if examples:
        print("\nPassed with a wrong value (first 12):")
        for line in examples[:12]:
            print(f"- {line}")
    if args.outcomes:
        args.outcomes.write_text(json.dumps([
            {"family": FAMILY_OF[doc.layout], "seed": doc.seed, "input": doc.input, "split": doc.split,
             "failed": t.failed, "clean_rules": sorted(t.clean_rules), "conventions": conventions_of(doc)}
            for doc, t in sheets.items() if doc.sampled], indent=1))
    return 0


def print_round_costs(totals: dict[tuple[str, str], Tally]) -> None:
    """Round k against round 1 of the same readings: the ratio of their mean tokens, and the largest single
    reading's ratio."""
    print("\n| split | input | readings (rounds 1/2/3) | round 1 prompt | round k / round 1 prompt (largest) | "
          "round 1 completion | round k / round 1 completion (largest) |")
    print("| --- | --- | --- | ---: | --- | ---: | --- |")
    for group in GROUPS:
        for inp in INPUTS:
            t = totals.get((group, inp))
            if t is None or not t.rounds:
                continue
            counts = "/".join(str(sum(len(r) >= k for r in t.rounds)) for k in (1, 2, 3))
            first = [r[0] for r in t.rounds if r]
            cells = []
            for i in (0, 1):
                later = []
                for k in (2, 3):
                    reached = [r for r in t.rounds if len(r) >= k and r[0][i]]
                    if reached:
                        mean = sum(r[k - 1][i] for r in reached) / sum(r[0][i] for r in reached)
                        top = max(r[k - 1][i] / r[0][i] for r in reached)
                        later.append(f"r{k} {mean:.2f}x ({top:.2f}x)")
                cells.append(", ".join(later) or "—")
            print(f"| {group} | {inp} | {counts} | {sum(f[0] for f in first) / len(first):,.0f} | {cells[0]} | "
                  f"{sum(f[1] for f in first) / len(first):,.0f} | {cells[1]} |")


def conventions_of(doc: Doc) -> dict[str, str]:
    """The conventions a sampled sheet was drawn in (its scan's only when it was read as a scan)."""
    summary = sheet_of(doc).conventions.summary()
    return {k: v for k, v in summary.items() if doc.input == "scan" or not k.startswith("scan.")}


def _binned(summaries: dict[Doc, dict[str, str]], axes: dict = AXES) -> dict[Doc, dict[str, str]]:
    """Measured conventions (a size, a blur, a JPEG quality) as the third of their range over these sheets
    they fall in, so that sheets can share them; named values as they are."""
    out = {d: dict(s) for d, s in summaries.items()}
    keys = {k for s in summaries.values() for k in s if k not in axes}
    for key in keys:
        try:
            values = {d: abs(float(s[key])) for d, s in summaries.items() if key in s and s[key] != "-"}
        except ValueError:
            continue
        if not values:
            continue
        ranked = sorted(values.values())
        low, high = ranked[len(ranked) // 3], ranked[2 * len(ranked) // 3]
        for d, v in values.items():
            out[d][key] = f"<= {low:g}" if v <= low else f"<= {high:g}" if v <= high else f"> {high:g}"
    return out


def print_failing_conventions(sheets: dict[Doc, Tally]) -> None:
    """For the sampled sheets where anything failed (a clean sheet flagged, a wrong value passed, an injected
    error missed), per input: the conventions most of them share, against how common each is overall."""
    for inp in INPUTS:
        docs = [d for d in sheets if d.input == inp]
        failing = [d for d in docs if sheets[d].failed]
        if not failing:
            continue
        family = FAMILY_OF[docs[0].layout]
        every = _binned({d: conventions_of(d) for d in docs}, FORM_AXES if family == "forms" else AXES)
        seen, bad = Counter(), Counter()
        for d, summary in every.items():
            for item in summary.items():
                seen[item] += 1
                bad[item] += d in failing
        shared = sorted((item for item in bad if bad[item] >= len(failing) / 2),
                        key=lambda item: (-bad[item] / seen[item], -bad[item], item))
        print(f"\nSampled {inp} sheets ({family}) where something failed: {len(failing)} of {len(docs)} "
              f"({', '.join(f'{k} {v}' for k, v in _ranked(Counter(f for d in failing for f in sheets[d].failed)))}). "
              "Conventions at least half of them share, by how often a sheet with it fails:")
        print("\n| convention | failing sheets with it | sheets with it | of those failing |")
        print("| --- | ---: | ---: | ---: |")
        for (axis, value) in shared[:15]:
            print(f"| {axis} = {value} | {bad[(axis, value)]} | {seen[(axis, value)]} | "
                  f"{bad[(axis, value)] / seen[(axis, value)]:.0%} |")
        print("\nSeeds: " + ", ".join(str(d.seed) for d in failing[:40]))


if __name__ == "__main__":
    raise SystemExit(main())
