"""The desk's two writes (an edit saved, a value taken from the page) in this checkout against another revision,
request by request in turn, so that both meet the machine in the same state.

This machine's speed drifts within minutes (a shared host: `bench/desk_speed.py` prints a reference loop
before and after for that reason; docs/BENCHMARKS.md), so two runs of `desk_speed.py` an hour apart cannot tell
a small change from the drift. Here each checkout runs in a process of its own, set up as `desk_speed.py`
sets up its server timings (its own throwaway database, the same document of 3 pages and 507 blocks, a
logged-in reviewer); the driver asks them in turn, alternating which goes first, and prints each side's
p50 / p95 and the median of the per-pair ratios (this checkout's time over the other's). The revision is
checked out into a temporary git worktree, removed at the end.

    .venv/bin/python bench/desk_paired.py [REV] [--requests N]      # default: HEAD (the uncommitted change)
    BENCH_DATABASE_URL=postgres://... .venv/bin/python bench/desk_paired.py REV

Against HEAD with nothing changed, the ratio shows the method's own noise.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
KINDS = ("edit", "take")


def serve(root: Path) -> None:
    """A checkout's side: set up as desk_speed.py does, then time the requests the driver names on stdin."""
    sys.path[:0] = [str(root / "bench"), str(root)]
    import desk_speed as bench  # that checkout's own setup (and Django, configured by it)
    from django.conf import settings
    from django.db import connection
    from django.urls import reverse

    from extraction.models import Block, Document

    settings.DEBUG = False
    settings.ALLOWED_HOSTS = ["*"]
    bench.setup_database()
    client = bench.Client()
    client.force_login(bench.reviewer())
    doc = bench.big_document().document
    bench.settle()
    words = list(Block.objects.filter(document=doc, page__number=1, type="WORD", text__regex=r"^[0-9]{4}$")
                 .values_list("id", flat=True))
    urls = {"edit": reverse("desk_edit", args=[doc.id]), "take": reverse("desk_take", args=[doc.id])}

    def timed(kind: str, i: int) -> float:
        version = Document.objects.values_list("version", flat=True).get(pk=doc.id)
        data = ({"field": "rows[0].votes", "value": str(i % 50), "version": version} if kind == "edit" else
                {"field": "rows[0].votes", "blocks": str(words[i % len(words)]), "version": version})
        body = urlencode(data)  # as htmx posts a form
        started = time.perf_counter()
        response = client.post(urls[kind], body, content_type="application/x-www-form-urlencoded",
                               HTTP_HX_REQUEST="true")
        elapsed = (time.perf_counter() - started) * 1000
        assert response.status_code == 200, (kind, response.status_code)
        return elapsed

    for i in range(6):  # warm: the rule context, the templates, the connection
        for kind in KINDS:
            timed(kind, i)
    print("ready", flush=True)
    for line in sys.stdin:
        kind, i = line.split()
        print(f"{timed(kind, int(i)):.3f}", flush=True)
    if os.environ.get("BENCH_DATABASE_URL"):
        connection.close()
        connection.creation.destroy_test_db(settings.DATABASES["default"]["NAME"], verbosity=0)


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("rev", nargs="?", default="HEAD")
    parser.add_argument("--requests", type=int, default=150)
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(Path(args.serve))
        return
    other = Path(tempfile.mkdtemp(prefix="proofdesk-paired-"))
    subprocess.run(["git", "worktree", "add", "--detach", "-q", str(other), args.rev], cwd=ROOT, check=True)
    (other / ".venv").symlink_to(ROOT / ".venv")
    sides = {args.rev: other, "this checkout": ROOT}
    procs = {}
    try:
        for n, (name, root) in enumerate(sides.items()):
            env = {**os.environ, "TEST_DATABASE_NAME": f"test_proofdesk_paired_{os.getpid()}_{n}"}
            procs[name] = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--serve", str(root)],
                                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
                                           cwd=root)
        for name, proc in procs.items():
            while (line := proc.stdout.readline()) and line.strip() != "ready":
                pass
            if not line:
                raise SystemExit(f"{name}: its setup failed (see above)")
        times = {(name, kind): [] for name in procs for kind in KINDS}
        for i in range(args.requests):
            for kind in KINDS:
                for name in (list(procs) if i % 2 == 0 else list(procs)[::-1]):
                    procs[name].stdin.write(f"{kind} {i}\n")
                    procs[name].stdin.flush()
                    times[(name, kind)].append(float(procs[name].stdout.readline()))
    finally:
        for proc in procs.values():
            proc.stdin.close()
            proc.wait()
        subprocess.run(["git", "worktree", "remove", "--force", str(other)], cwd=ROOT, check=False)
    engine = "PostgreSQL" if os.environ.get("BENCH_DATABASE_URL") else "SQLite"
    print(f"The desk's writes, this checkout against {args.rev} ({engine}; {args.requests} requests each, in turn)")
    print("| request | side | p50 | p95 | mean |")
    print("| --- | --- | ---: | ---: | ---: |")
    for kind in KINDS:
        for name in procs:
            v = times[(name, kind)]
            print(f"| {kind} | {name} | {pct(v, 50):.1f} ms | {pct(v, 95):.1f} ms | {statistics.mean(v):.1f} ms |")
    for kind in KINDS:
        ratios = [b / a for a, b in zip(times[(args.rev, kind)], times[("this checkout", kind)], strict=True)]
        print(f"{kind}: this checkout's time over {args.rev}'s, median of the pairs: {pct(ratios, 50):.2f}")


if __name__ == "__main__":
    main()
