"""Two trials of a 150-page scan at once, read by two workers, and how long the pages take to answer meanwhile.

Runs tests/reviewer/types/test_trials_under_load.py through scripts/test.sh (PostgreSQL, Redis, real workers)
with TRIAL_MAX_PAGES raised to the scan's length, so that the workers render and OCR all 300 pages (no LLM is
configured: each trial then ends failed, "needs an LLM", once its pages are read), and prints the figures of
tests/artifacts/trials.json. The suite runs the same test with the default bound, where both are refused.

Usage: .venv/bin/python bench/trials.py [--pages 150] [--engine auto] [--wait 1800]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=150)
    parser.add_argument("--engine", default="auto")
    parser.add_argument("--wait", type=int, default=1800)
    args = parser.parse_args()
    env = {**os.environ, "TRIAL_SCAN_PAGES": str(args.pages), "TRIAL_MAX_PAGES": str(args.pages),
           "TRIAL_OCR_ENGINE": args.engine, "TRIAL_WAIT": str(args.wait), "PYTEST_WORKERS": "1"}
    subprocess.run(["bash", "scripts/test.sh", "-q", "-p", "no:randomly", "tests/reviewer/types/test_trials_under_load.py"],
                   cwd=ROOT, env=env, check=True)
    figures = json.loads((ROOT / "tests" / "artifacts" / "trials.json").read_text())
    pages = figures["pages_meanwhile"]
    trials = ", ".join(f"{t['status']} ({t['pages_read']} read)" for t in figures["trials"])
    print("| pages a trial | trials | try requests ms | page requests | p50 ms | p95 ms | max ms |")
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: |")
    print(f"| {figures['pages']} | {trials} "
          f"| {', '.join(map(str, figures['try_requests_ms']))} | {pages['n']} | {pages['p50_ms']:.0f} "
          f"| {pages['p95_ms']:.0f} | {pages['max_ms']:.0f} |")


if __name__ == "__main__":
    main()
