"""Write the demo's sample tally sheets into samples/actas (run once; the files are committed).

Usage: .venv/bin/python scripts/make_samples.py
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sheetgen.generate import generate_acta, render_scan  # noqa: E402

# (seed, poll-worker errors, as scan?) — some clean, some with the mistakes reviewers must catch.
SHEETS = [
    (101, [], False),
    (102, ["digits_words_mismatch"], False),
    (103, ["sum_mismatch"], False),
    (104, [], True),
    (105, ["total_mismatch"], True),
    (106, ["digits_words_mismatch"], True),
]


def main() -> None:
    out = ROOT / "samples" / "actas"
    out.mkdir(parents=True, exist_ok=True)
    for seed, errors, scan in SHEETS:
        sheet = generate_acta(seed=seed, errors=errors)
        stem = f"acta-{seed}" + ("-" + "-".join(e.replace("_", "-") for e in errors) if errors else "")
        if scan:
            (out / f"{stem}-scan.jpg").write_bytes(render_scan(sheet.pdf_bytes, seed=seed))
        else:
            (out / f"{stem}.pdf").write_bytes(sheet.pdf_bytes)
    print(f"wrote {len(SHEETS)} sheets to {out}")


if __name__ == "__main__":
    main()
