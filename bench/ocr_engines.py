"""OCR speed, memory and accuracy per engine and setting, with a profile of where a scanned page's time goes.

Run from the project root:
    .venv/bin/python bench/ocr_engines.py [--seeds 1] [--settings before,default,...] [--no-render]

Inputs: scans of generated tally sheets (sheetgen/, one per layout and seed, each degraded in its
layout's scan style: rotated, blurred, low-res, photographed, ...), split into TUNE layouts (settings are
chosen there) and MEASURE layouts (only reported); and the shared invoices' PNGs, whose PDF text layer is
their truth. Each setting runs in a fresh process, so its peak memory (ru_maxrss) is that of one worker
reading pages, models included. Per page: the production path, rendering (extraction.pipeline.render) then OCR of
the rendered image. Timings exclude model loading, which has its own column.
Prints markdown tables on stdout; the figures and the chosen defaults are in docs/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

INVOICES = ROOT.parent / "shared" / "data" / "invoices"
FIRST_SEED = 5000
DPI = 150
STEPS = ("render", "detect", "recognise", "other", "blocks")

# name -> (engine, options). "before" is the adapter before issue 16's tuning; "onnxruntime (RapidOCR's own)"
# the default until OpenVINO (RapidOCR's own reading on onnxruntime, one thread); "default" is whatever the
# adapter defaults to now; the rest each change one thing from "default" (or from the setting named first)
# to show its effect. Settings measured before OpenVINO ran on onnxruntime, as they say.
ORT = {"runtime": "onnxruntime", "east_asian": True}
BEFORE = {**ORT, "threads": 1, "det_limit": None, "rec_batch": 6, "rec_width": 320, "lean": False}
OWN = {**ORT, "threads": 1, "rec_width": 320}  # RapidOCR's own reading, lean onnxruntime sessions
FAST = {**ORT, "threads": 1, "det_limit": 1152, "rec_batch": 3, "rec_width": 96}
SETTINGS: dict[str, tuple[str, dict[str, Any]]] = {
    "before": ("rapidocr", BEFORE),
    "before + angle classifier": ("rapidocr", {**BEFORE, "params": {"Global.use_cls": True}}),
    "before + threads=2": ("rapidocr", {**BEFORE, "threads": 2}),
    "before + det_limit=1280": ("rapidocr", {**BEFORE, "det_limit": 1280}),
    "before + rec_width=96": ("rapidocr", {**BEFORE, "rec_width": 96}),
    "before + lean sessions": ("rapidocr", {**BEFORE, "lean": True}),
    "onnxruntime (RapidOCR's own)": ("rapidocr", OWN),
    "onnxruntime (RapidOCR's own) + threads=2": ("rapidocr", {**OWN, "threads": 2}),
    "onnxruntime + not lean": ("rapidocr", {**OWN, "lean": False}),
    "onnxruntime + det_limit=960": ("rapidocr", {**OWN, "det_limit": 960}),
    "onnxruntime + det_limit=1280": ("rapidocr", {**OWN, "det_limit": 1280}),
    "onnxruntime + rec_batch=12": ("rapidocr", {**OWN, "rec_batch": 12}),
    "onnxruntime + rec_workers=2": ("rapidocr", {**OWN, "rec_workers": 2}),
    "onnxruntime + page_workers=2": ("rapidocr", {**OWN, "page_workers": 2}),
    # the faster onnxruntime reading measured before OpenVINO: the unseen-layout bench lost clean scans with it
    "fast": ("rapidocr", FAST),
    "fast + threads=2": ("rapidocr", {**FAST, "threads": 2}),
    "onnxruntime + threads=2 + rec_width=96": ("rapidocr", {**OWN, "threads": 2, "rec_width": 96}),
    "default": ("rapidocr", {}),
    "default + onnxruntime": ("rapidocr", {"runtime": "onnxruntime"}),
    "default + east_asian": ("rapidocr", {"east_asian": True}),
    "default + threads=1": ("rapidocr", {"threads": 1}),
    "default + rec_width=320": ("rapidocr", {"rec_width": 320}),
    "default + rec_pixels=2048": ("rapidocr", {"rec_pixels": 2048}),
    # pages shrunk by RapidOCR's own rule (long side at most 2000 px), as the default read them before page_limit
    "default + page_limit=none": ("rapidocr", {"page_limit": None}),
    "tesseract": ("tesseract", {}),
}


# ------------------------------------------------------------------------------------------------ inputs


def make_inputs(work: Path, seeds: int, dpi: int = DPI) -> list[dict[str, Any]]:
    """The pages every setting reads: acta scans with what they print, invoice PNGs with their PDF's words.
    At another `dpi` than 150 the scans are resized by dpi/150: a 200 dpi page's pixels, for time and memory."""
    from extraction.ocr.pdf_text import open_pdf
    from sheetgen.generate import generate_acta
    from sheetgen.layouts import LAYOUTS, TUNE_LAYOUTS
    from sheetgen.scans import scan_image

    pages = []
    for name, layout in LAYOUTS.items():
        for seed in range(FIRST_SEED, FIRST_SEED + seeds):
            acta = generate_acta(seed=seed, layout=name)
            path = work / f"{name}-{seed}.jpg"
            path.write_bytes(scan_image(acta.pdf_bytes, seed=seed, style=layout.scan))
            if dpi != DPI:
                with Image.open(path) as scan:
                    scan.resize((round(scan.width * dpi / DPI), round(scan.height * dpi / DPI)),
                                Image.Resampling.LANCZOS).save(path, quality=92)
            pages.append({"path": str(path), "set": "tune" if name in TUNE_LAYOUTS else "measure",
                          "style": layout.scan, "printed": acta.printed})
    for png in sorted(INVOICES.glob("*.png")):
        pdf = png.with_suffix(".pdf")
        if pdf.exists():
            with open_pdf(pdf) as doc:
                truth = [w[4] for page in doc for w in page.get_text("words")]
            pages.append({"path": str(png), "set": "invoices", "truth_words": truth})
    return pages


# ------------------------------------------------------------------------------------------------ one setting


def _cpu() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def run_setting(name: str, inputs: list[dict[str, Any]], work: Path) -> dict[str, Any]:
    """Read every input page with one setting (in this process) and score it."""
    from ocr_truth import RowScore, acta_rows_right, characters_right, page_lines, page_words

    from extraction.ocr.blocks import SourceDocument
    from extraction.ocr.registry import get_engine
    from extraction.pipeline import render

    engine_name, options = SETTINGS[name]
    engine = get_engine(engine_name, **json.loads(json.dumps(options)))
    started = time.perf_counter()
    if hasattr(engine, "_engine"):
        engine._engine()  # noqa: SLF001 - model loading, timed apart from the pages
    load_s = time.perf_counter() - started

    rendered = []
    render_s = []
    for k, item in enumerate(inputs):
        t = time.perf_counter()
        [page] = render.render_document(source=Path(item["path"]), kind="image", out_dir=work / f"{name}-{k}", dpi=DPI)
        render_s.append(time.perf_counter() - t)
        rendered.append(page.as_page_image())

    workers = getattr(engine, "page_workers", 1)
    results: list[dict[str, Any]] = []
    for start in range(0, len(inputs), workers):  # pages in parallel are read as one document
        group = list(range(start, min(start + workers, len(inputs))))
        wall, cpu = time.perf_counter(), _cpu()
        pages = engine.read(SourceDocument(Path(inputs[group[0]]["path"]), "image", [rendered[i] for i in group]))
        wall, cpu = (time.perf_counter() - wall) / len(group), (_cpu() - cpu) / len(group)
        for i, page in zip(group, pages, strict=True):
            item = inputs[i]
            row: dict[str, Any] = {"set": item["set"], "style": item.get("style", ""), "wall": wall, "cpu": cpu,
                                   "steps": {"render": render_s[i], **getattr(engine, "timings", {}).get(
                                       rendered[i].number, {})}}
            words, lines = page_words([page]), page_lines([page])
            if item["set"] == "invoices":
                row["chars"] = characters_right(truth_words=item["truth_words"], words=words)
            else:
                score: RowScore = acta_rows_right(words=words, lines=lines, printed=item["printed"])
                row["rows"], row["digits"], row["words"] = score.rows, score.digits, score.words
            results.append(row)
    return {"name": name, "load_s": load_s, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "pages": results}


def _worker(name: str, manifest: Path, out: Path, kind: str) -> None:
    inputs = [i for i in json.loads(manifest.read_text()) if (i["set"] == "invoices") == (kind == "invoices")]
    with tempfile.TemporaryDirectory(prefix="ocr-bench-") as tmp:
        out.write_text(json.dumps(run_setting(name, inputs, Path(tmp))))


# ------------------------------------------------------------------------------------------------ report


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def report(results: list[dict[str, Any]]) -> None:
    print("\n### Where a scanned page's time goes (seconds of wall per page, all scans)\n")
    print("| setting | " + " | ".join(STEPS) + " |")
    print("|---|" + "---:|" * len(STEPS))
    for r in results:
        scans = [p for p in r["pages"] if p["set"] != "invoices"]
        cells = [f"{_mean([p['steps'].get(s, 0.0) for p in scans]):.2f}" for s in STEPS]
        print(f"| {r['name']} | " + " | ".join(cells) + " |")

    print("\n### Speed, memory and accuracy per setting\n")
    header = ["setting", "pages", "load s", "wall s/page", "CPU s/page", "peak RSS MB (scans)",
              "peak RSS MB (invoices)", "TUNE digits",
              "TUNE words", "MEASURE digits", "MEASURE words", "invoice chars"]
    print("| " + " | ".join(header) + " |")
    print("|---|" + "---:|" * (len(header) - 1))
    for r in results:
        scans = [p for p in r["pages"] if p["set"] != "invoices"]
        cells = [r["name"], str(len(r["pages"])), f"{r['load_s']:.1f}",
                 f"{_mean([p['wall'] for p in scans]):.2f}", f"{_mean([p['cpu'] for p in scans]):.2f}",
                 f"{r['peak_rss_mb_scans']:.0f}", f"{r['peak_rss_mb_invoices']:.0f}"]
        for split in ("tune", "measure"):
            pages = [p for p in scans if p["set"] == split]
            rows = sum(p["rows"] for p in pages)
            for key in ("digits", "words"):
                right = sum(p[key] for p in pages)
                cells.append(f"{right}/{rows} ({right / rows:.1%})" if rows else "—")
        chars = [p["chars"] for p in r["pages"] if p["set"] == "invoices"]
        right, total = sum(c[0] for c in chars), sum(c[1] for c in chars)
        cells.append(f"{right / total:.1%}" if total else "—")
        print("| " + " | ".join(cells) + " |")

    print("\n### MEASURE scans by style: digits right per row\n")
    styles = sorted({p["style"] for r in results for p in r["pages"] if p["set"] == "measure"})
    print("| setting | " + " | ".join(styles) + " |")
    print("|---|" + "---:|" * len(styles))
    for r in results:
        cells = []
        for style in styles:
            pages = [p for p in r["pages"] if p["set"] == "measure" and p["style"] == style]
            cells.append(f"{sum(p['digits'] for p in pages)}/{sum(p['rows'] for p in pages)}")
        print(f"| {r['name']} | " + " | ".join(cells) + " |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=1, help="scans per layout")
    parser.add_argument("--settings", default="before,default", help=f"comma-separated, of: {', '.join(SETTINGS)}")
    parser.add_argument("--dpi", type=int, default=DPI,
                        help="scan resolution: the scans (made at 150 dpi, low-res ones at 100-120) enlarged by dpi/150")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs of each setting, the settings in turn (the fastest wall of each is kept)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--manifest", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--kind", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        _worker(args.worker, Path(args.manifest), Path(args.out), args.kind)
        return 0
    names = [n for n in args.settings.split(",") if n]
    unknown = [n for n in names if n not in SETTINGS]
    if unknown:
        parser.error(f"unknown settings {unknown}; known: {list(SETTINGS)}")
    if "tesseract" in names and not shutil.which("tesseract"):
        print("tesseract is not installed: not measured", file=sys.stderr)
        names.remove("tesseract")

    results = []
    with tempfile.TemporaryDirectory(prefix="ocr-bench-") as tmp:
        work = Path(tmp)
        inputs = make_inputs(work, args.seeds, args.dpi)
        manifest = work / "inputs.json"
        manifest.write_text(json.dumps(inputs))
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
        for k in range(args.repeat):  # settings in turn, so a spell of a slower machine falls on all of them
            for name in names:
                run: dict[str, Any] = {"name": name, "pages": []}
                for kind in ("scans", "invoices"):  # a process each: the scans' peak memory on its own
                    out = work / f"result-{names.index(name)}-{k}-{kind}.json"
                    subprocess.run([sys.executable, __file__, "--worker", name, "--manifest", str(manifest),
                                    "--out", str(out), "--kind", kind], check=True)
                    part = json.loads(out.read_text())
                    run["pages"] += part["pages"]
                    run.setdefault("load_s", part["load_s"])
                    run[f"peak_rss_mb_{kind}"] = part["peak_rss_mb"]
                runs[name].append(run)
                scans = [p for p in run["pages"] if p["set"] != "invoices"]
                print(f"  {name} (run {k + 1}): {_mean([p['wall'] for p in scans]):.2f} s wall, "
                      f"{_mean([p['cpu'] for p in scans]):.2f} s CPU per scan", file=sys.stderr, flush=True)
        for name in names:
            results.append(min(runs[name], key=lambda r: _mean([p["wall"] for p in r["pages"] if p["set"] != "invoices"])))
    print(f"\nScans at {args.dpi} dpi. {len(inputs)} pages ({sum(i['set'] != 'invoices' for i in inputs)} acta scans, "
          f"{sum(i['set'] == 'invoices' for i in inputs)} invoice PNGs), {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.1f} at the end. CPU s/page counts every thread of the process; wall and CPU are "
          f"means over the acta scans.")
    report(results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
