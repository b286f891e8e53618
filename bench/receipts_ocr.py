"""OCR quality on real scanned receipts: line recall and character error rate per local engine.

Run from the project root:
    .venv/bin/python bench/receipts_ocr.py [--engines rapidocr,tesseract] [--limit N] [--jobs N]
    .venv/bin/python bench/receipts_ocr.py --engines rapidocr,rapidocr-as-before  # the default beside its old self

Inputs: the 80 scanned receipts of ../shared/data/receipts (see its README.md), each `receipt-NNN.jpg` with
`receipt-NNN.lines.csv`: every printed line as a person transcribed it, with its box in the JPEG's pixels.
Each receipt is read the production way: rendered (extraction.pipeline.render), then the engine's `read`.

Metrics, per engine over every transcribed line of every receipt read:
- Matching, by geometry only: an OCR LINE block (its bbox, fractions of the page, times the JPEG's pixel size)
  corresponds to a transcribed line (the rectangle around its four corners) when their vertical overlap is at
  least half the smaller of the two heights and their horizontal overlap is more than zero. Every OCR line that
  corresponds counts, so a line the engine split is read whole: its pieces joined left to right with a space.
  One OCR line may correspond to several transcribed lines (the engine joined what the person split): each of
  them is then compared with the whole OCR line, and the extra words count as errors.
- The text read at a transcribed line: those OCR lines' text, or "" where none corresponds.
- A line's distance: Levenshtein distance (rapidfuzz) between the transcription and the text read there, both
  with runs of whitespace collapsed to one space and stripped; case-sensitive; a line's CER is that over the
  transcription's length (above 1 when the engine read more than is there).
- CER = sum of distances / sum of transcription lengths: a line not read at all counts all its characters wrong.
- Line recall = share of transcribed lines with CER <= 0.2 (CLOSE); exact lines = share with CER 0.
- The table is printed twice: case-sensitive, and with both sides upper-cased, because the transcriptions are
  all in capitals (none of the 4,520 lines holds a lower-case letter) where the receipts print "Total Incl." too.
- s/page: CPU seconds of the OCR call (`read`) per receipt, every thread of the process and its children
  (tesseract runs as a child process), model loading and rendering excluded. CPU, not wall, because the bench
  shares its cores with other jobs; the mean wall time is printed below the tables.

A second measure beside it, words placed by their centre (upper-cased): each OCR WORD block goes to the one
transcribed line whose rectangle holds its box's centre (the line whose middle is vertically nearest where
rectangles overlap; none, and the word is counted apart as outside every line); the text read at a transcribed
line is its words left to right, joined by a space, scored as above. It does not charge a line for the engine's
idea of where lines end: where the person split a price from its tax flag (`RM2.70` | `S`) and the engine read
`RM2.70 S` as one line, the first measure compares each piece with the whole line, this one each piece with
its own words. It still charges what the engine read wrong, did not read, or read as one word (`RM2.70S`).

Below the tables, per engine, the first measure's bound for its segmentation: what a reader that read every
character right within the engine's lines would score (each transcribed line compared with the transcriptions
of every transcribed line its OCR lines cover, left to right; a line no OCR line covers counted as read). What
it lacks of 100% is where the engine's lines end, not what it read.

Every table gives all the receipts, then the even-numbered ones (receipt-010, -034, ...: the half the OCR's
settings were tuned on) and the odd-numbered ones (held out).

OCR results (pages and timings) are cached per (engine, receipt, JPEG bytes, OCR code) under
var/bench/receipts_ocr/, so reruns cost only the scoring; the timings shown are then those of the run that read.
Prints markdown tables on stdout.
"""

from __future__ import annotations

import argparse
import hashlib
import pickle
import re
import resource
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image
from rapidfuzz.distance import Levenshtein

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # runnable as a plain script from anywhere

from extraction.ocr.blocks import BlockType, OcrPage  # noqa: E402

RECEIPTS = ROOT.parent / "shared" / "data" / "receipts"
CACHE = ROOT / "var" / "bench" / "receipts_ocr"
# A line within a fifth of its characters of the transcription is one a reader (or a fuzzy match against an
# expected value) still recognises; a stricter bar would count a lost comma as a line not found.
CLOSE = 0.2
# The registry's local engines that read images: "pdf-text" reads only a PDF's text layer, "auto" reads an image
# with rapidocr (it would repeat that row) and "textract" is a cloud service. rapidocr runs on OpenVINO by
# default; its other runtime, onnxruntime (the fallback where OpenVINO cannot load), is measured beside it.
# Tesseract's adapter already runs it with OMP_THREAD_LIMIT=1 (its OpenMP threads only slow parallel workers).
ENGINES: dict[str, tuple[str, dict[str, Any]]] = {
    "rapidocr": ("rapidocr", {}),
    "rapidocr-onnxruntime": ("rapidocr", {"runtime": "onnxruntime"}),
    "tesseract": ("tesseract", {}),
}
# Read only when named (--engines), to measure a change beside the default in one session: the default as it read
# before pages were shrunk by their short side (it shrank them by RapidOCR's rule, wherever the long side exceeds
# 2000 px), and the default reading leaders as printed (before they were painted over: extraction/ocr/leaders.py).
MORE_ENGINES: dict[str, tuple[str, dict[str, Any]]] = {
    "rapidocr-as-before": ("rapidocr", {"page_limit": None}),
    "rapidocr-leaders-kept": ("rapidocr", {"leaders": True}),
}
KNOWN_ENGINES = {**ENGINES, **MORE_ENGINES}
# Cached pages are keyed by the code that produced them too: a change to rendering or OCR reads again.
OCR_CODE = b"".join(p.read_bytes() for p in sorted([ROOT / "extraction" / "pipeline" / "render.py",
                                                     *(ROOT / "extraction" / "ocr").glob("*.py")]))


# ------------------------------------------------------------------------------------------------ metrics (pure)


@dataclass(frozen=True)
class Box:
    """left, top, right, bottom in the image's pixels."""

    left: float
    top: float
    right: float
    bottom: float


@dataclass(frozen=True)
class Line:
    box: Box
    text: str


@dataclass
class Score:
    lines: int = 0
    close: int = 0  # CER <= CLOSE
    exact: int = 0
    distance: int = 0
    chars: int = 0
    joined: int = 0  # transcribed lines whose OCR line also covers another transcribed line (engine joined them)
    outside: int = 0  # words placed by their centre: OCR words in no transcribed line

    def count(self, expected: str, got: str) -> None:
        """One transcribed line, `expected`, read as `got`."""
        distance = Levenshtein.distance(expected, got)
        self.lines += 1
        self.chars += len(expected)
        self.distance += distance
        self.exact += distance == 0
        self.close += distance <= CLOSE * len(expected)

    def add(self, other: Score) -> None:
        for name in ("lines", "close", "exact", "distance", "chars", "joined", "outside"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    @property
    def cer(self) -> float:
        return self.distance / self.chars if self.chars else 0.0


def parse_truth(text: str) -> list[Line]:
    """The rows of a lines.csv: eight corner coordinates, then the text (which may hold commas)."""
    lines = []
    for row in text.splitlines():
        if not row.strip():
            continue
        *corners, words = row.split(",", 8)
        xs, ys = [float(v) for v in corners[0::2]], [float(v) for v in corners[1::2]]
        lines.append(Line(Box(min(xs), min(ys), max(xs), max(ys)), words))
    return lines


def ocr_lines(page: OcrPage, width: int, height: int, kind: BlockType = BlockType.LINE) -> list[Line]:
    """The page's LINE blocks (or blocks of another `kind`) with their boxes in pixels of a `width` x `height`
    image."""
    return [Line(Box(b.bbox.left * width, b.bbox.top * height, b.bbox.right * width, b.bbox.bottom * height), b.text)
            for b in page.blocks if b.type == kind]


def corresponds(a: Box, b: Box) -> bool:
    vertical = min(a.bottom, b.bottom) - max(a.top, b.top)
    horizontal = min(a.right, b.right) - max(a.left, b.left)
    return horizontal > 0 and vertical >= min(a.bottom - a.top, b.bottom - b.top) / 2


def collapse(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def read_at(truth: Line, read: list[Line]) -> str:
    """What the engine read where `truth` is printed: every corresponding OCR line, left to right."""
    found = sorted((line for line in read if corresponds(truth.box, line.box)), key=lambda line: line.box.left)
    return " ".join(line.text for line in found)


def score_page(truth: list[Line], read: list[Line], *, fold: bool = False) -> Score:
    """`fold`: compare upper-cased (the transcriptions are all capitals, where receipts print lower case too)."""
    covers = [sum(corresponds(line.box, r.box) for line in truth) for r in read]  # transcribed lines per OCR line
    score = Score()
    for line in truth:
        expected, got = collapse(line.text), collapse(read_at(line, read))
        if fold:
            expected, got = expected.upper(), got.upper()
        score.count(expected, got)
        score.joined += any(n > 1 for n, r in zip(covers, read, strict=True) if corresponds(line.box, r.box))
    return score


def _line_of(word: Line, truth: list[Line]) -> int | None:
    """The index of the transcribed line whose rectangle holds `word`'s centre (the vertically nearest middle,
    then the smallest rectangle, where several do), or None."""
    x, y = (word.box.left + word.box.right) / 2, (word.box.top + word.box.bottom) / 2
    holding = [i for i, line in enumerate(truth)
               if line.box.left <= x <= line.box.right and line.box.top <= y <= line.box.bottom]
    if not holding:
        return None

    def rank(i: int) -> tuple[float, float]:
        box = truth[i].box
        return abs((box.top + box.bottom) / 2 - y), (box.right - box.left) * (box.bottom - box.top)

    return min(holding, key=rank)


def place_words(truth: list[Line], words: list[Line]) -> tuple[list[str], int]:
    """(the text read at each transcribed line: the OCR words whose centre it holds, left to right; the number of
    words in no transcribed line)."""
    placed: list[list[Line]] = [[] for _ in truth]
    outside = 0
    for word in words:
        index = _line_of(word, truth)
        if index is None:
            outside += 1
        else:
            placed[index].append(word)
    return [" ".join(w.text for w in sorted(group, key=lambda w: w.box.left)) for group in placed], outside


def score_placed(truth: list[Line], words: list[Line]) -> Score:
    """The second measure: each transcribed line against the OCR words placed in it by their centre, both sides
    upper-cased."""
    texts, outside = place_words(truth, words)
    score = Score(outside=outside)
    for line, text in zip(truth, texts, strict=True):
        expected, got = collapse(line.text).upper(), collapse(text).upper()
        score.count(expected, got)
    return score


def score_read_perfectly(truth: list[Line], read: list[Line]) -> Score:
    """The first measure (upper-cased) for a reader that reads every character of the page right but ends its
    lines where the engine's `read` end: the bound the engine's segmentation sets on it."""
    score = Score()
    for line in truth:
        mine = [r for r in read if corresponds(line.box, r.box)]
        under = [t for t in truth if any(corresponds(t.box, r.box) for r in mine)]
        expected = collapse(line.text).upper()
        got = collapse(" ".join(t.text for t in sorted(under, key=lambda t: t.box.left))).upper() if mine else expected
        score.count(expected, got)
    return score


# ------------------------------------------------------------------------------------------------ reading


def _cpu() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def read_receipt(engine_name: str, jpg: Path) -> tuple[OcrPage, float, float, bool]:
    """(page, CPU s, wall s, from the cache) of one receipt read by one engine, the way bench/unseen_layouts.py
    reads a sheet: rendered, then the engine's `read`. Cached on disk."""
    from extraction.ocr.blocks import SourceDocument
    from extraction.ocr.registry import get_engine
    from extraction.pipeline import render

    name, options = KNOWN_ENGINES[engine_name]
    data = jpg.read_bytes()
    key = hashlib.sha256(repr((name, sorted(options.items()))).encode() + data + OCR_CODE).hexdigest()[:16]
    path = CACHE / f"{engine_name}-{jpg.stem}-{key}.pkl"
    if path.exists():
        page, cpu, wall = pickle.loads(path.read_bytes())  # noqa: S301 - a cache this bench wrote itself
        return page, cpu, wall, True
    engine = get_engine(name, **options)
    if hasattr(engine, "_engine"):
        engine._engine()  # noqa: SLF001 - model loading (once per process) is not a page's time
    with tempfile.TemporaryDirectory(prefix="receipts-ocr-") as tmp:
        [rendered] = render.render_document(source=jpg, kind="image", out_dir=Path(tmp), dpi=150)
        with Image.open(jpg) as image:  # the transcription's pixels are the JPEG's: the page must be that size
            if image.size != (rendered.width, rendered.height):
                raise RuntimeError(f"{jpg.name}: rendered {rendered.width}x{rendered.height}, JPEG {image.size}")
        wall, cpu = time.perf_counter(), _cpu()
        [page] = engine.read(SourceDocument(path=jpg, kind="image", pages=[rendered.as_page_image()]))
        wall, cpu = time.perf_counter() - wall, _cpu() - cpu
    CACHE.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps((page, cpu, wall)))
    return page, cpu, wall, False


def _task(job: tuple[str, Path]) -> tuple[Score, Score, float, float, bool, Score, Score]:
    """(score, case-folded score, CPU s, wall s, from the cache, words placed by their centre, the bound of the
    engine's segmentation) of one receipt read by one engine."""
    engine_name, jpg = job
    page, cpu, wall, cached = read_receipt(engine_name, jpg)
    with Image.open(jpg) as image:
        width, height = image.size
    truth = parse_truth(jpg.with_suffix(".lines.csv").read_text(encoding="utf-8-sig"))
    read = ocr_lines(page, width, height)
    placed = score_placed(truth, ocr_lines(page, width, height, BlockType.WORD))
    return (score_page(truth, read), score_page(truth, read, fold=True), cpu, wall, cached, placed,
            score_read_perfectly(truth, read))


def tuned_on(jpg: Path) -> bool:
    """Whether a receipt is in the half the OCR was tuned on: an even number (receipt-010, receipt-034, ...)."""
    return int(jpg.stem.rsplit("-", 1)[-1]) % 2 == 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default=",".join(ENGINES),
                        help=f"comma-separated, of: {', '.join(KNOWN_ENGINES)} (default: {', '.join(ENGINES)})")
    parser.add_argument("--limit", type=int, default=0, help="the first N receipts only (default: all)")
    parser.add_argument("--jobs", type=int, default=2, help="processes for OCR not yet cached")
    args = parser.parse_args()
    if not RECEIPTS.is_dir():
        print(f"no receipts at {RECEIPTS}: this bench needs the shared data beside the project (../shared)",
              file=sys.stderr)
        return 2
    engines = [e for e in args.engines.split(",") if e]
    unknown = [e for e in engines if e not in KNOWN_ENGINES]
    if unknown:
        parser.error(f"unknown engines {unknown}; known: {list(KNOWN_ENGINES)}")
    report(engines, sorted(RECEIPTS.glob("receipt-*.jpg"))[: args.limit or None], jobs=args.jobs)
    return 0


def report(engines: list[str], jpgs: list[Path], *, jobs: int = 2) -> None:
    """Read `jpgs` with each engine (cached) and print the tables; bench/receipts.py prints them too."""
    from extraction.ocr.tesseract import tesseract_available

    if "tesseract" in engines and not tesseract_available():
        print("tesseract is not installed: not measured", file=sys.stderr)
        engines = [e for e in engines if e != "tesseract"]
    pending = [(e, jpg) for jpg in jpgs for e in engines]  # engines in turn, receipt by receipt: a like load
    started = time.monotonic()
    with ProcessPoolExecutor(max_workers=max(1, jobs)) as pool:
        results = list(pool.map(_task, pending))
    elapsed = time.monotonic() - started
    per = {e: [r for (name, _), r in zip(pending, results, strict=True) if name == e] for e in engines}

    halves = [("all", [True] * len(jpgs)), ("even: tuned on", [tuned_on(j) for j in jpgs]),
              ("odd: held out", [not tuned_on(j) for j in jpgs])]
    print(f"\n{len(jpgs)} receipts of {RECEIPTS}; {sum(not r[4] for r in results)} readings now, "
          f"{sum(r[4] for r in results)} from the cache; {elapsed:.0f} s wall.")
    for title, which in (("Case-sensitive", 0),
                         ("Upper-cased on both sides: the transcriptions are all capitals, the receipts are not", 1),
                         ("Words placed by their centre (the second measure, upper-cased)", 5)):
        print(f"\n{title}:\n")
        print(f"| engine | receipts | lines | line recall (CER ≤ {CLOSE}) | exact lines | CER | s/page (CPU) |")
        print("|---|---|---:|---:|---:|---:|---:|")
        for engine, mine in per.items():
            for half, chosen in halves:
                picked = [r for r, keep in zip(mine, chosen, strict=True) if keep]
                if not picked:
                    continue
                total = Score()
                for r in picked:
                    total.add(r[which])
                print(f"| {engine} | {len(picked)} ({half}) | {total.lines} | {total.close / total.lines:.1%} | "
                      f"{total.exact / total.lines:.1%} | {total.cer:.1%} | "
                      f"{sum(r[2] for r in picked) / len(picked):.2f} |")
    print()
    for engine, mine in per.items():
        joined = sum(r[0].joined for r in mine)
        outside = sum(r[5].outside for r in mine)
        bound = Score()
        for r in mine:
            bound.add(r[6])
        print(f"- {engine}: {sum(r[3] for r in mine) / len(mine):.2f} s wall/page; {joined} transcribed lines read "
              f"within an OCR line that covers another transcribed line too; {outside} OCR words in no transcribed "
              f"line; read perfectly within its lines, the first measure (upper-cased) would give line recall "
              f"{bound.close / bound.lines:.1%}, exact lines {bound.exact / bound.lines:.1%}, CER {bound.cer:.1%}")


if __name__ == "__main__":
    raise SystemExit(main())
