"""Throughput of 2 workers and the desk's latency meanwhile (1,000 small deeds, scripted LLM).

Runs tests/test_load.py through scripts/test.sh (PostgreSQL, Redis, real workers) and prints its figures.
Usage: .venv/bin/python bench/load.py [DOCUMENTS]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    count = sys.argv[1] if len(sys.argv) > 1 else "1000"
    env = {**os.environ, "LOAD_DOCUMENTS": count}
    subprocess.run(["bash", "scripts/test.sh", "-q", "tests/test_load.py"], cwd=ROOT, env=env, check=True)
    figures = json.loads((ROOT / "tests" / "artifacts" / "load.json").read_text())
    desk = figures["desk"]
    print("| documents | workers | seconds | documents/s | desk requests | desk p50 ms | desk p95 ms | desk max ms |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    print(f"| {figures['documents']} | {figures['workers']} | {figures['seconds']} | {figures['documents_per_second']} "
          f"| {desk['n']} | {desk['p50_ms']:.0f} | {desk['p95_ms']:.0f} | {desk['max_ms']:.0f} |")


if __name__ == "__main__":
    main()
