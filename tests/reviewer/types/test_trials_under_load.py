"""Two admins try a draft on a 150-page scan at once (issue 42): each request only queues its sample, the pages
keep answering meanwhile, and no trial document is left queued or being read.

The suite runs it with the trial's page bound (both samples are refused at intake, said on the editor);
bench/trials.py runs it with TRIAL_MAX_PAGES at the scan's length, so that two workers read all 300 pages, and
reports how long the pages took to answer meanwhile (tests/artifacts/trials.json)."""

from __future__ import annotations

import io
import json
import os
import random
import threading
import time

import pymupdf
import pytest
from django.conf import settings
from django.test import Client
from PIL import Image, ImageDraw

from extraction.models import Document
from extraction.states import FINAL_STATUSES
from tests.support.accounts import give_roles
from tests.support.browser import ARTIFACTS
from tests.support.doctype_forms import posted
from tests.support.load import DeskProbe
from tests.support.utility_bills import BILL
from tests.support.worker import WorkerProcess

pytestmark = [pytest.mark.worker, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

PAGES = int(os.environ.get("TRIAL_SCAN_PAGES", "150"))
ENGINE = os.environ.get("TRIAL_OCR_ENGINE", "auto")
WAIT = float(os.environ.get("TRIAL_WAIT", "60"))  # bench/trials.py gives the workers the time 300 pages take


def long_scan(pages: int) -> bytes:
    """A scan of `pages` pages, each its own grey image with a few lines of text and the scanner's noise."""
    rng = random.Random(42)
    doc = pymupdf.open()
    for number in range(1, pages + 1):
        image = Image.effect_noise((850, 1100), 12).point(lambda v: 255 - v // 4)
        draw = ImageDraw.Draw(image)
        for line in range(8):
            draw.text((80, 120 + 40 * line), f"Page {number} line {line}: {rng.randint(1000, 9999)}", fill=0)
        out = io.BytesIO()
        image.save(out, "JPEG", quality=60)
        page = doc.new_page(width=612, height=792)
        page.insert_image(page.rect, stream=out.getvalue())
    return doc.tobytes()


def _bill_type() -> dict:
    return {"name": "utility_bill", "label": "Utility bill", "instructions": "You read utility bills.",
            "fields": [{"key": key, "label": key.replace("_", " ").capitalize()} for key in BILL]}


@pytest.mark.timeout(int(WAIT) + 300)
def test_two_trials_of_a_long_scan_leave_the_pages_answering_and_no_trial_stuck(worker_env, users, tmp_path):
    scan = tmp_path / "scan.pdf"
    scan.write_bytes(long_scan(PAGES))
    from django.contrib.auth.models import User

    second = User.objects.create_user(username="second_admin")
    give_roles(second, "admin")
    admins = [users["admin"], second]
    # under the default bound the samples are refused at intake and no worker is needed to end them
    workers = [WorkerProcess(worker_env, tmp_path / f"worker{i}.log") for i in range(2)] \
        if PAGES <= settings.TRIAL_MAX_PAGES else []
    for worker in workers:
        worker.start()
    tries: list[dict] = []

    def try_it(admin) -> None:
        client = Client()
        client.force_login(admin)
        started = time.perf_counter()
        with scan.open("rb") as sample:
            response = client.post("/types/new/", {**posted(_bill_type()), "action": "try", "ocr_engine": ENGINE,
                                                   "sample": sample})
        tries.append({"status": response.status_code, "ms": (time.perf_counter() - started) * 1000})

    reviewer, admin = Client(), Client()
    reviewer.force_login(users["reviewer"])
    admin.force_login(users["admin"])
    probe = DeskProbe()
    try:
        threads = [threading.Thread(target=try_it, args=(a,)) for a in admins]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            probe.probe(reviewer, ["/queue/", "/account/tokens/"])
            probe.probe(admin, ["/types/", "/batches/", "/types/new/"])
            trials = Document.objects.filter(batch__trial=True)
            if len(tries) == 2 and trials.count() == 2 and all(d.status in FINAL_STATUSES for d in trials):
                break
            time.sleep(0.5)
        for thread in threads:
            thread.join()
    finally:
        for worker in workers:
            worker.stop()

    trials = list(Document.objects.filter(batch__trial=True))
    assert [t["status"] for t in tries] == [302, 302]  # each request only queued its sample
    assert len(trials) == 2 and all(d.status in FINAL_STATUSES for d in trials), [(d.status, d.page_count)
                                                                                  for d in trials]
    if PAGES > settings.TRIAL_MAX_PAGES:
        assert all(d.error_code == "too_many_pages" for d in trials), [d.error_message for d in trials]
    assert not probe.failures, probe.failures[:5]
    figures = {"pages": PAGES, "trial_max_pages": settings.TRIAL_MAX_PAGES, "engine": ENGINE,
               "trials": [{"status": d.status, "pages_read": d.pages.count()} for d in trials],
               "try_requests_ms": sorted(round(t["ms"]) for t in tries), "pages_meanwhile": probe.summary()}
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "trials.json").write_text(json.dumps(figures, indent=2))
    print(json.dumps(figures))
