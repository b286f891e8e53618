"""OCR of generated faded thermal strips: digits and words read per printed row, per engine setting.

Run from the project root:
    .venv/bin/python bench/faded_strips_ocr.py [--strips 12] [--engines rapidocr,rapidocr-as-before]

Inputs: tally sheets of the forms family (sheetgen/forms.py) printed on a thermal strip 58 or 80 mm wide, in lines
(no table), from seed FIRST_SEED on, each photographed on a table (sheetgen/photo.py) with the drawn photo's
conventions except its fade, set to the faintest the family draws (FADE: the ink lightened by up to 65%,
unevenly, with the strip's curl, streaks, shadow, grain and JPEG as drawn). A strip cut over several pages is
photographed page by page and read as one sheet. Each page is read the production way: rendered
(extraction.pipeline.render), then the engine's `read`; the engines (bench/receipts_ocr.py's, by name) read each strip in
turn, so their CPU times are taken under a like load.

Scores (bench/ocr_truth.py, as bench/ocr_engines.py scores its sheets): per party row, whether its votes in digits
were read as one word, and its votes in words as one run of a line, each printed row matched at most once.
CPU s/strip: the OCR calls of a strip's pages, every thread of the process, model loading and rendering excluded.
These seeds are not the unseen-layout bench's (bench/unseen_layouts.py: 300,000 on); sheetgen draws them, so a
change there changes the strips. Prints a markdown table on stdout.
"""

from __future__ import annotations

import argparse
import dataclasses
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from ocr_truth import RowScore, acta_rows_right, page_lines, page_words  # noqa: E402
from receipts_ocr import KNOWN_ENGINES  # noqa: E402

FIRST_SEED = 9001
FADE = 0.65  # sheetgen/forms.py draws a photo's fade from 0 to 0.65


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def faded_strips(count: int, work: Path) -> list[tuple[int, str, list[Path], dict]]:
    """(seed, page kind, photo of each page, what the sheet prints) of the first `count` strips from FIRST_SEED."""
    import pymupdf

    from sheetgen.forms import draw_form_scan, is_strip
    from sheetgen.generate import render_page
    from sheetgen.photo import photograph
    from sheetgen.sampled import generate_sampled

    strips = []
    seed = FIRST_SEED
    while len(strips) < count:
        sheet = generate_sampled(seed, family="forms")
        conventions = sheet.conventions
        if is_strip(conventions.page) and conventions.structure != "table":
            scan = dataclasses.replace(draw_form_scan(seed), style="photo", fade=FADE)
            with pymupdf.open(stream=sheet.pdf_bytes, filetype="pdf") as doc:
                pages = doc.page_count
            photos = []
            for number in range(1, pages + 1):
                path = work / f"strip-{seed}-{number}.jpg"
                path.write_bytes(photograph(render_page(sheet.pdf_bytes, dpi=scan.dpi, page=number), scan,
                                            seed=seed * 8 + number - 1))
                photos.append(path)
            strips.append((seed, conventions.page, photos, sheet.printed))
        seed += 1
    return strips


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--strips", type=int, default=12, help="strips read (default 12)")
    parser.add_argument("--engines", default="rapidocr,rapidocr-as-before",
                        help=f"comma-separated, of: {', '.join(KNOWN_ENGINES)}")
    args = parser.parse_args()
    names = [e for e in args.engines.split(",") if e]
    unknown = [e for e in names if e not in KNOWN_ENGINES or KNOWN_ENGINES[e][0] != "rapidocr"]
    if unknown:
        parser.error(f"not a RapidOCR setting of bench/receipts_ocr.py: {unknown}")

    from extraction.ocr.blocks import SourceDocument
    from extraction.ocr.registry import get_engine
    from extraction.pipeline import render

    engines = {name: get_engine(KNOWN_ENGINES[name][0], **KNOWN_ENGINES[name][1]) for name in names}
    for engine in engines.values():
        engine._engine()  # noqa: SLF001 - model loading is not a strip's time
    scores = {name: RowScore() for name in names}
    cpu = dict.fromkeys(names, 0.0)
    with tempfile.TemporaryDirectory(prefix="faded-strips-") as tmp:
        work = Path(tmp)
        started = time.monotonic()
        strips = faded_strips(args.strips, work)
        made = time.monotonic() - started
        for seed, _, photos, printed in strips:
            rendered = []
            for k, photo in enumerate(photos):
                [page] = render.render_document(source=photo, kind="image", out_dir=work / f"{seed}-{k}", dpi=150)
                rendered.append((photo, page.as_page_image()))
            for name, engine in engines.items():
                pages = []
                before = _cpu()
                for photo, page in rendered:
                    pages += engine.read(SourceDocument(path=photo, kind="image", pages=[page]))
                cpu[name] += _cpu() - before
                scores[name].add(acta_rows_right(words=page_words(pages), lines=page_lines(pages), printed=printed))

    kinds = ", ".join(sorted({kind for _, kind, _, _ in strips}))
    print(f"\n{len(strips)} faded strips ({kinds}; seeds {strips[0][0]}-{strips[-1][0]}, fade {FADE}), "
          f"{sum(len(p) for _, _, p, _ in strips)} pages; made in {made:.0f} s.\n")
    print("| setting | rows | digits right | words right | CPU s/strip |")
    print("|---|---:|---:|---:|---:|")
    for name in names:
        score = scores[name]
        print(f"| {name} | {score.rows} | {score.digits}/{score.rows} ({score.digits / score.rows:.1%}) | "
              f"{score.words}/{score.rows} ({score.words / score.rows:.1%}) | {cpu[name] / len(strips):.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
