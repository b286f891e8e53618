"""Throughput of 2 workers and the desk's latency meanwhile (1,000 small deeds, scripted LLM).

Runs tests/reviewer/desk/test_load.py through scripts/test.sh (PostgreSQL, Redis, real workers) once per setting and prints
a row each. A setting is a space-separated list of NAME=value for the workers' environment, e.g. the workers'
priority below the web process (WORKER_NICENESS) or the OCR threads per page (OCR_THREADS), or LOAD_OCR_ENGINE
(default pdf-text: the deeds' own text, no OCR; rapidocr reads the rendered page as a scan would be read).
The desk's requests are made by the test's own process, at the niceness the bench was started with: the web.

Usage: .venv/bin/python bench/load.py [DOCUMENTS] [--settings "WORKER_NICENESS=0" "WORKER_NICENESS=10" ...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(count: int, setting: str) -> dict:
    extra = dict(part.split("=", 1) for part in setting.split())
    env = {**os.environ, "LOAD_DOCUMENTS": str(count), **extra}
    subprocess.run(["bash", "scripts/test.sh", "-q", "-p", "no:randomly", "tests/reviewer/desk/test_load.py"], cwd=ROOT, env=env,
                   check=True)
    return json.loads((ROOT / "tests" / "artifacts" / "load.json").read_text())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("documents", nargs="?", type=int, default=1000)
    parser.add_argument("--settings", nargs="+", default=["WORKER_NICENESS=0", "WORKER_NICENESS=10"])
    args = parser.parse_args()
    rows = [(setting, run(args.documents, setting)) for setting in args.settings]
    print("| setting | documents | workers | seconds | documents/s | desk requests | desk p50 ms | desk p95 ms "
          "| desk max ms |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for setting, figures in rows:
        desk = figures["desk"]
        print(f"| {setting} | {figures['documents']} | {figures['workers']} | {figures['seconds']} "
              f"| {figures['documents_per_second']} | {desk['n']} | {desk['p50_ms']:.0f} | {desk['p95_ms']:.0f} "
              f"| {desk['max_ms']:.0f} |")


if __name__ == "__main__":
    main()
