"""Speed of the review desk with 10,000 flagged documents in the database: click-to-highlight in a browser, the
desk's htmx requests on the server (another page, the presence poll, the edit form, an edit, a value taken from the
page), and the queue.

    .venv/bin/python bench/desk_speed.py            # a throwaway SQLite database in a temporary folder
    BENCH_DATABASE_URL=postgres://... .venv/bin/python bench/desk_speed.py   # a throwaway test_ database there

Prints a markdown table. The browser rows need Debian's chromium (CHROMIUM_PATH); they are skipped without it.
BENCH_BROWSER_ONLY=1 skips the server's timings.

Click to painted highlight: Playwright's real mouse clicks on the fields of a PDF document and of a scanned one
(raster JPEG pages of 2550 x 3300 pixels), 3 pages each, the fields taken in a fixed spread order so that some
proofs are on the page shown and others on another page. Measured in the page, from the click event's
`timeStamp` (when the browser received the click) to a task posted from the first animation frame that finds
the field's box shown: that task runs once that frame is painted. "The click's listeners alone" is from the
first click listener (capture, on the window) to the last (bubble, on the window); the start of the frame is
its animation frame callbacks' timestamp. "The floor" is the same measure for a real click on text that no
listener acts on (the keys hint): what the browser takes to reach and paint its next frame, whatever the page.
The Event Timing API's duration of each click (to the next paint as the screen shows it, in 8 ms steps; it
reports only clicks of 16 ms or more, the others count as 0) is printed beside it.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TMP = Path(tempfile.mkdtemp(prefix="proofdesk-bench-desk-"))
os.environ["DJANGO_SETTINGS_MODULE"] = "reviewer.settings"
os.environ["PROOFDESK_VAR_DIR"] = str(TMP)
os.environ["DATABASE_URL"] = os.environ.get("BENCH_DATABASE_URL") or f"sqlite:///{TMP / 'bench.sqlite3'}"
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's sync API beside the ORM
os.environ.setdefault("LOG_LEVEL", "WARNING")
for name in ("LLM_BASE_URL", "LLM_MODEL", "LLM_API_KEY"):
    os.environ.pop(name, None)

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth.models import User  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from django.urls import reverse  # noqa: E402

PASSWORD = "bench-password-9"  # noqa: S105
CLICKS = 300
EDITS = 100
BROWSER_CLICKS = 60
QUEUE_DOCS = 10_000
TEAMS = int(os.environ.get("BENCH_TEAMS", "10"))  # the documents' teams; the reviewer is in each


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def setup_database() -> None:
    if os.environ.get("BENCH_DATABASE_URL"):
        connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    else:
        call_command("migrate", verbosity=0)


def settle() -> None:
    """The database as a server's is between bursts of work: statistics gathered and the setup's bulk writes
    flushed, so that the timings do not share the two cores with their aftermath (autovacuum, a checkpoint)."""
    from django.db import DatabaseError

    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("VACUUM ANALYZE")
            try:
                cursor.execute("CHECKPOINT")  # a superuser's (or pg_checkpoint's) right: else left to the server
            except DatabaseError:
                pass
        else:
            cursor.execute("ANALYZE")
            cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def reviewer() -> User:
    """A reviewer of every team (TEAMS of them): each read is scoped by all of them."""
    from extraction.models import Team, default_team_id
    from reviewer.models import Membership

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    user = User.objects.create_user(username="reviewer", password=PASSWORD)
    teams = [default_team_id()] + [Team.objects.create(name=f"bench team {i}", slug=f"bench-{i}").pk
                                   for i in range(1, TEAMS)]
    Membership.objects.bulk_create([Membership(user=user, team_id=t, role="reviewer") for t in teams])
    return user


def big_document():
    """A flagged acta of 3 pages and about 500 blocks, proofs and violations as the pipeline stores them."""
    from tests.support.desk_data import flagged_acta

    acta = flagged_acta(seed=7, pages=3, filler_words=180)
    return acta


def _timed(client: Client, method: str, url: str, data_of, n: int) -> dict[str, float]:
    """p50 and p95 of n requests, then the queries of one more counted apart: Django's query capture
    formats every statement's SQL, which a server does not, so it stays out of the timed requests."""
    if method == "post":  # as htmx posts a form: urlencoded (the test client's default is multipart)
        def call(url, data, **extra):
            return client.post(url, urlencode(data), content_type="application/x-www-form-urlencoded", **extra)
    else:
        call = client.get
    call(url, data_of(0), HTTP_HX_REQUEST="true")  # warm
    times = []
    for i in range(n):
        data = data_of(i)  # before the clock: reading the current version is the bench's, not the request's
        started = time.perf_counter()
        response = call(url, data, HTTP_HX_REQUEST="true")
        times.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, (url, response.status_code)
    data = data_of(n)
    with CaptureQueriesContext(connection) as queries:
        call(url, data, HTTP_HX_REQUEST="true")
    counted = len(queries.captured_queries)  # now: the next request clears Django's query log
    calls = []
    for i in range(5):
        data = data_of(n + 1 + i)
        calls.append(_python_calls(lambda data=data: call(url, data, HTTP_HX_REQUEST="true")))
    return {"p50": pct(times, 50), "p95": pct(times, 95), "queries": counted, "calls": sum(calls) / len(calls)}


def _python_calls(request) -> int:
    """The Python and C function calls one request makes: the work it does, counted the same whatever the
    machine's speed at the moment (untimed: the counting slows the request)."""
    count = 0

    def hook(frame, event, arg):
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    sys.setprofile(hook)
    try:
        request()
    finally:
        sys.setprofile(None)
    return count


def machine_reference() -> float:
    """The median time of a fixed pure-Python loop, in ms: this machine's speed drifts from one hour to the
    next (docs/BENCHMARKS.md), so each run prints it beside its figures (lower is faster)."""
    times = []
    for _ in range(15):
        started, total = time.perf_counter(), 0
        for i in range(300_000):
            total += i * i % 7
        times.append((time.perf_counter() - started) * 1000)
    return pct(times, 50)


def bench_htmx(client: Client, acta) -> list[tuple[str, dict[str, float]]]:
    """The desk's htmx requests, timed on the server (Django's test client, no network)."""
    from extraction.models import Block, Document, FieldValue

    doc = acta.document
    paths = list(FieldValue.objects.filter(extraction=acta.extraction).values_list("path", flat=True))
    version = lambda: Document.objects.values_list("version", flat=True).get(pk=doc.id)  # noqa: E731
    rows = [
        ("another page (page switch)", _timed(client, "get", reverse("desk_proof", args=[doc.id]),
                                              lambda i: {"page": 1 + i % 3}, CLICKS)),
        ("presence poll", _timed(client, "get", reverse("desk_presence", args=[doc.id]),
                                 lambda i: {"version": doc.version, "held": ""}, CLICKS)),
        ("edit form", _timed(client, "get", reverse("desk_edit", args=[doc.id]),
                             lambda i: {"field": paths[i % len(paths)], "version": doc.version}, CLICKS)),
    ]
    words = list(Block.objects.filter(document=doc, page__number=1, type="WORD", text__regex=r"^[0-9]{4}$")
                 .values_list("id", "text"))
    rows.append(("edit saved (the rules run again)", _timed(
        client, "post", reverse("desk_edit", args=[doc.id]),
        lambda i: {"field": "rows[0].votes", "value": str(i % 50), "version": version()}, EDITS)))
    rows.append(("value taken from the page (the rules run again)", _timed(
        client, "post", reverse("desk_take", args=[doc.id]),
        lambda i: {"field": "rows[0].votes", "blocks": str(words[i % len(words)][0]), "version": version()}, EDITS)))
    return rows


# Installed in the page by the bench: a capture-phase click listener on the window (it runs before the desk's own)
# notes the click event's timeStamp and, once the click's listeners have all run (a bubble listener on the window
# runs last), waits for the first animation frame whose callbacks find the field's proof box shown (class `on`, in
# the page stage shown, its image loaded), then for a MessageChannel task posted from that frame's callback:
# that task runs once the frame has been painted (style, layout, paint and commit done). The time from the event's
# timeStamp (when the browser received the click) to that task is "click to painted highlight". The Event Timing
# API reports, for comparison, every click whose duration to its next paint is 16 ms or more.
PROBE = """() => {
  if (window.__bench) { return; }
  const bench = window.__bench = { pending: null, handlerEnd: 0, slow: [] };
  window.addEventListener("click", () => { bench.handlerEnd = performance.now(); });
  try {
    new PerformanceObserver((list) => {
      list.getEntries().forEach((e) => {
        if (e.name === "click") { bench.slow.push([e.startTime, e.duration]); }
      });
    }).observe({ type: "event", durationThreshold: 16 });
  } catch (err) { bench.slow = null; }
  window.addEventListener("click", (ev) => {
    const link = ev.target.closest && ev.target.closest("#fields a.field");
    const idle = ev.target.closest && ev.target.closest(".keys-hint");  // the floor: a click that changes nothing
    if (!link && !idle) { return; }
    const path = link ? link.getAttribute("data-path") : null, t0 = ev.timeStamp, h0 = performance.now();
    const pageBefore = document.getElementById("page-stage").getAttribute("data-page");
    bench.pending = new Promise((resolve) => {
      let frames = 0;
      const frame = () => requestAnimationFrame((frameStart) => {
        frames += 1;
        const stage = document.getElementById("page-stage");
        const img = stage && stage.querySelector("img.page-image");
        const shown = idle || (stage && Array.prototype.some.call(stage.querySelectorAll(".proof-box.on"),
                                                                  (b) => b.getAttribute("data-path") === path));
        if (!shown || !img || !img.complete) { frame(); return; }
        const channel = new MessageChannel();
        const seen = performance.now();
        channel.port1.onmessage = () => resolve({
          ms: performance.now() - t0, handler: bench.handlerEnd - h0, t0: t0, frames: frames,
          wait: frameStart - t0, render: performance.now() - seen,
          moved: stage.getAttribute("data-page") !== pageBefore });
        channel.port2.postMessage(0);
      });
      frame();
    });
  }, true);
}"""


def _clicks(page, base: str, document, paths: list[str]) -> dict:
    """Real mouse clicks (Playwright moves the mouse and presses it) on the document's fields, one at a time."""
    page.goto(f"{base}/documents/{document.id}/")
    page.wait_for_selector("#fields a.field")
    page.evaluate(PROBE)
    page.wait_for_timeout(1500)  # the other pages are prefetched once the desk is idle
    results = []
    for i in range(BROWSER_CLICKS + 5):
        path = paths[(i * 7) % len(paths)]
        page.locator(f'#fields a.field[data-path="{path}"]').click()
        result = page.evaluate("() => window.__bench.pending")
        if i >= 5:  # the first clicks warm the page's images and the JIT
            results.append(result)
        page.wait_for_timeout(60)
    page.wait_for_timeout(200)  # the Event Timing API reports a click after its paint
    slow = page.evaluate("() => window.__bench.slow")
    floor = []
    for _ in range(30):
        page.locator(".keys-hint").click()
        floor.append(page.evaluate("() => window.__bench.pending")["ms"])
        page.wait_for_timeout(60)
    times = [r["ms"] for r in results]
    out = {"p50": pct(times, 50), "p95": pct(times, 95), "n": len(times),
           "handler_p50": pct([r["handler"] for r in results], 50),
           "handler_p95": pct([r["handler"] for r in results], 95), "slow": None,
           "first_frame": sum(1 for r in results if r["frames"] == 1),
           "wait_p50": pct([r["wait"] for r in results], 50), "wait_p95": pct([r["wait"] for r in results], 95),
           "render_p50": pct([r["render"] for r in results], 50),
           "render_p95": pct([r["render"] for r in results], 95),
           "floor_p50": pct(floor, 50), "floor_p95": pct(floor, 95)}
    if slow is not None:
        # the API's durations (8 ms steps) of the clicks it reported; the others took under 16 ms (0 here)
        reported = [next((d for start, d in slow if abs(start - r["t0"]) < 0.5), 0.0) for r in results]
        out["slow"] = {"n": sum(1 for d in reported if d), "p50": pct(reported, 50), "p95": pct(reported, 95)}
    for name, moved in (("same", False), ("other", True)):
        values = [r["ms"] for r in results if r["moved"] is moved]
        out[name] = {"p50": pct(values, 50), "p95": pct(values, 95), "n": len(values)} if values else None
    return out


def bench_browser(docs: list[tuple[str, object]]) -> list[tuple[str, dict]] | None:
    chromium = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
    if not Path(chromium).exists():
        return None
    from django.contrib.staticfiles.handlers import StaticFilesHandler
    from django.test.testcases import LiveServerThread
    from playwright.sync_api import sync_playwright

    from extraction.models import FieldValue

    server = LiveServerThread("127.0.0.1", StaticFilesHandler)
    server.daemon = True
    server.start()
    server.is_ready.wait()
    if server.error:
        raise server.error
    base = f"http://127.0.0.1:{server.port}"
    out = []
    try:
        with sync_playwright() as pw:
            from tests.support.browser import FLAGS

            browser = pw.chromium.launch(executable_path=chromium, headless=True, args=FLAGS)
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(base + "/login/")
            page.fill("input[name=username]", "reviewer")
            page.fill("input[name=password]", PASSWORD)
            page.click("button[type=submit]")
            page.wait_for_url(base + "/queue/")
            for label, acta in docs:
                paths = list(FieldValue.objects.filter(extraction=acta.extraction).exclude(proofs=[])
                             .order_by("position").values_list("path", flat=True))
                out.append((label, _clicks(page, base, acta.document, paths)))
            browser.close()
    finally:
        server.terminate()
    return out


def scanned_document():
    """The big document's twin as a scan: a raster page of 2550 x 3300 pixels (300 dpi), greyish and noisy as a
    scanner gives it, saved as JPEG, with more words on it."""
    import io

    from django.core.files.base import ContentFile
    from PIL import Image, ImageFilter

    from extraction.models import Document
    from tests.support.desk_data import flagged_acta

    acta = flagged_acta(seed=8, pages=3, filler_words=600, filename="acta-8-scan.jpg")
    Document.objects.filter(pk=acta.document.pk).update(kind="image")
    for page in acta.document.pages.all():
        with page.image.open("rb") as f:
            img = Image.open(f).convert("L").resize((2550, 3300), Image.BILINEAR)
        noise = Image.effect_noise((2550, 3300), 24).filter(ImageFilter.GaussianBlur(0.6))
        img = Image.blend(img, noise, 0.12).convert("RGB")
        buf = io.BytesIO()
        img.save(buf, format="JPEG", quality=85)
        page.image.save(f"page-{page.number:04d}.jpg", ContentFile(buf.getvalue()), save=False)
        page.width, page.height = img.size
        page.save()
    return acta


def many_documents(n: int) -> None:
    """n flagged documents across 10 batches of the TEAMS teams, each with an extraction and one or two
    violations."""
    from extraction.models import Batch, Document, Extraction, Team, Violation

    teams = list(Team.objects.order_by("pk").values_list("pk", flat=True))
    batches = Batch.objects.bulk_create([Batch(name=f"bench-{i}", doctype="acta", team_id=teams[i % len(teams)])
                                         for i in range(10)])
    docs = Document.objects.bulk_create(
        [Document(batch=batches[i % 10], filename=f"doc-{i:05d}.pdf", sha256=f"{i:064x}", status="flagged",
                  review_status="unreviewed") for i in range(n)], batch_size=2000)
    extractions = Extraction.objects.bulk_create(
        [Extraction(document=d, doctype="acta", stop_reason="exhausted") for d in docs], batch_size=2000)
    codes = ["row_digits_words_mismatch", "sum_valid_votes", "valid_plus_null_total", "value_grounded"]
    violations = []
    for i, e in enumerate(extractions):
        violations.append(Violation(extraction=e, code=codes[i % 4], message="m", fields=[]))
        if i % 3 == 0:
            violations.append(Violation(extraction=e, code=codes[(i + 1) % 4], message="m", fields=[]))
    Violation.objects.bulk_create(violations, batch_size=5000)


def bench_queue(client: Client) -> list[tuple[str, dict[str, float]]]:
    rows = []
    for label, params in (("page 1", {}), ("page 100", {"page": 100}),
                          ("filtered by rule, page 20", {"rule": "sum_valid_votes", "page": 20})):
        client.get(reverse("queue"), params)
        times, counts = [], []
        for _ in range(20):
            with CaptureQueriesContext(connection) as queries:
                started = time.perf_counter()
                response = client.get(reverse("queue"), params)
                times.append((time.perf_counter() - started) * 1000)
            counts.append(len(queries.captured_queries))
            assert response.status_code == 200 and response.content.count(b"<tr data-document=") == 50
        rows.append((label, {"p50": pct(times, 50), "p95": pct(times, 95), "queries": max(counts)}))
    return rows


def main() -> None:
    # As a server runs, not as tests do: no setup_test_environment() (it instruments every template render,
    # a signal and a copy of the context) and DEBUG off (with it on, Django keeps every query's SQL).
    settings.DEBUG = False
    settings.ALLOWED_HOSTS = ["*"]
    setup_database()
    user = reviewer()
    client = Client()
    client.force_login(user)
    from extraction.models import Block

    many_documents(QUEUE_DOCS)
    acta = big_document()
    scan = scanned_document()
    n_blocks = Block.objects.filter(document=acta.document).count()
    n_pages = acta.document.pages.count()
    settle()
    # The server's timings first: a browser and its driver left behind would share the two cores with them.
    reference_before = machine_reference()
    server_too = not os.environ.get("BENCH_BROWSER_ONLY")
    htmx = bench_htmx(client, acta) if server_too else []
    queue = bench_queue(client) if server_too else []
    reference_after = machine_reference()
    browser = bench_browser([("PDF", acta), ("scan", scan)])

    engine = connection.vendor
    print(f"Review desk speed ({engine}; document of {n_pages} pages and {n_blocks} blocks; "
          f"queue over {QUEUE_DOCS:,} flagged documents in {TEAMS} teams, 50 a page)")
    print(f"Machine reference (a fixed pure-Python loop, median of 15): {reference_before:.1f} ms before the "
          f"server's timings, {reference_after:.1f} ms after\n")
    print("| measure | p50 | p95 | queries | Python calls |")
    print("| --- | ---: | ---: | ---: | ---: |")
    if browser:
        for doc, b in browser:
            print(f"| field click to painted highlight, {doc}, chromium ({b['n']} real clicks) | "
                  f"{b['p50']:.1f} ms | {b['p95']:.1f} ms | | |")
            for name, label in (("same", "proof on the page shown"), ("other", "proof on another page")):
                if b[name]:
                    print(f"| … {label} ({b[name]['n']} clicks) | {b[name]['p50']:.1f} ms | {b[name]['p95']:.1f} ms | | |")
            print(f"| … the click's listeners alone | {b['handler_p50']:.1f} ms | {b['handler_p95']:.1f} ms | | |")
            print(f"| … click to the start of the frame that paints ({b['first_frame']} of {b['n']} in the first "
                  f"frame after the click) | {b['wait_p50']:.1f} ms | {b['wait_p95']:.1f} ms | | |")
            print(f"| … that frame, from its animation frame callbacks to painted | {b['render_p50']:.1f} ms | "
                  f"{b['render_p95']:.1f} ms | | |")
            print(f"| … the floor: a click that changes nothing, to its next frame painted (30 clicks) | "
                  f"{b['floor_p50']:.1f} ms | {b['floor_p95']:.1f} ms | | |")
            if b["slow"]:
                e = b["slow"]
                print(f"| … Event Timing API, click to next paint ({e['n']} of {b['n']} at 16 ms or more; "
                      f"under 16 counts as 0) | {e['p50']:.0f} ms | {e['p95']:.0f} ms | | |")
    else:
        print("| field click to painted highlight, chromium | skipped: no chromium | | | |")
    for label, q in htmx:
        print(f"| htmx, server time: {label} | {q['p50']:.1f} ms | {q['p95']:.1f} ms | {q['queries']:.0f} | "
              f"{q['calls']:,.0f} |")
    for label, q in queue:
        print(f"| queue page, {label} | {q['p50']:.1f} ms | {q['p95']:.1f} ms | {q['queries']} | |")
    if os.environ.get("BENCH_DATABASE_URL"):
        with connection.cursor() as cursor:  # the live server's threads may still hold a connection
            cursor.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                           "WHERE datname = current_database() AND pid <> pg_backend_pid()")
        connection.creation.destroy_test_db(settings.DATABASES["default"]["NAME"], verbosity=0)


if __name__ == "__main__":
    main()
