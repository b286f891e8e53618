"""Tokens per page of the prompt rendering vs plain LINE text vs raw Textract JSON (o200k tokenizer).

Run from the project root: .venv/bin/python bench/prompt_tokens.py [textract-folder]
Prints a markdown table on stdout and writes nothing else.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "textract"


def main(folder: Path = DEFAULT_DATA) -> int:
    sys.path.insert(0, str(ROOT))  # runnable as a plain script from anywhere
    from bpe_openai import get_encoding

    from extraction.ocr.blocks import BlockType
    from extraction.ocr.textract_json import parse_textract
    from extraction.reading.prompt import render_prompt
    from tests.support.pages import textract_sizes

    files = sorted(folder.glob("*.textract.json"))
    if not files:
        print(f"no *.textract.json in {folder}", file=sys.stderr)
        return 1
    enc = get_encoding("o200k_base")

    def count(text: str) -> int:
        return len(enc.encode(text))

    print("| response | pages | rendering tok/page | LINE text tok/page | raw JSON tok/page "
          "| rendering / text | JSON / rendering |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    totals = [0, 0, 0, 0]
    for path in files:
        data = json.loads(path.read_text())
        pages = parse_textract(data, sizes=textract_sizes(path))
        rendering = render_prompt(pages).text
        # plain text in Textract's own LINE order, as a naive prompt would send it
        plain = "\n".join(b["Text"] for b in data["Blocks"] if b["BlockType"] == BlockType.LINE)
        raw = json.dumps(data, separators=(",", ":"), ensure_ascii=False)  # compact: the cheapest raw form
        totals[0] += len(pages)
        row = [count(rendering), count(plain), count(raw)]
        for i, value in enumerate(row, start=1):
            totals[i] += value
        print(_row(path.name.removesuffix(".textract.json"), len(pages), *row))
    print(_row("**all**", *totals))
    return 0


def _row(name: str, pages: int, rendering: int, plain: int, raw: int) -> str:
    per_page = " | ".join(f"{v / pages:,.0f}" for v in (rendering, plain, raw))
    return f"| {name} | {pages} | {per_page} | {rendering / plain:.2f}x | {raw / rendering:.0f}x |"


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_DATA))
