"""A load scenario shared by the load test and bench/load.py: many small ownership deeds through real
workers and the scripted LLM, while the desk is asked for pages."""

from __future__ import annotations

import multiprocessing
import os
import re
import statistics
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pymupdf

from tests.support.llm_server import ScriptedLLMServer, reply_json

OWNERS = [("Ana Perez", "1/2"), ("Luis Gomez", "1/4"), ("Marta Diaz", "1/4")]

# The suite's load test: 300 documents (bench/load.py asks for 1,000 through LOAD_DOCUMENTS). It waits 1.5 s a
# document (several times what the bench measures), at least 5 minutes, and its own timeout is above that
# wait, with room for the workers' start and stop, so neither cuts the other short.
COUNT = int(os.environ.get("LOAD_DOCUMENTS", "300"))
WAIT = max(300, int(COUNT * 1.5))
TIMEOUT = WAIT + 300
# pdf-text reads the deeds' own text; bench/load.py may ask for an OCR engine, to load the workers as scans do.
ENGINE = os.environ.get("LOAD_OCR_ENGINE", "pdf-text")


def make_deeds(directory: Path, count: int) -> list[Path]:
    paths = []
    for i in range(count):
        path = directory / f"deed-{i:04d}.pdf"
        with pymupdf.open() as doc:
            page = doc.new_page(width=300, height=200)
            lines = [f"PROPERTY DEED P-{i:04d}"] + [f"Owner: {n} share {f}" for n, f in OWNERS]
            for row, text in enumerate(lines):
                page.insert_text((20, 40 + 25 * row), text, fontsize=11)
            doc.save(path)
        paths.append(path)
    return paths


_LINE = re.compile(r"^L(\d+) (.*)$", re.MULTILINE)


def answer_from_request(body: dict) -> object:
    """What a careful model answers for a deed: each value cites the line it is printed on."""
    text = "\n".join(
        m["content"] if isinstance(m["content"], str) else " ".join(p.get("text", "") for p in m["content"])
        for m in body["messages"] if m["role"] == "user"
    )
    lines = {int(n): t.strip() for n, t in _LINE.findall(text)}
    title = next(n for n, t in lines.items() if t.startswith("PROPERTY DEED"))
    owners = []
    for name, share in OWNERS:
        n = next(n for n, t in lines.items() if name in t)
        owners.append({"name": {"value": name, "proof": [{"type": "LINE", "id": n}]},
                       "fraction": {"value": share, "proof": [{"type": "LINE", "id": n}]}})
    prop_id = lines[title].split()[-1]
    return reply_json({
        "property": {"id": {"value": prop_id, "proof": [{"type": "LINE", "id": title}]},
                     "description": {"value": "PROPERTY DEED", "proof": [{"type": "LINE", "id": title}]}},
        "owners": owners,
    }, usage=(180, 90))


@dataclass
class DeskProbe:
    """Asks the desk for a page every `interval` seconds and keeps the latencies."""

    latencies_ms: list[float] = field(default_factory=list)
    by_url: dict[str, list[float]] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)

    def probe(self, client, urls: list[str]) -> None:
        for url in urls:
            started = time.perf_counter()
            response = client.get(url)
            took = (time.perf_counter() - started) * 1000
            self.latencies_ms.append(took)
            self.by_url.setdefault(url, []).append(took)
            if response.status_code != 200:
                self.failures.append(f"{url}: {response.status_code}")

    @staticmethod
    def _figures(values: list[float]) -> dict[str, float]:
        data = sorted(values)
        if not data:
            return {"n": 0}
        return {"n": len(data), "p50_ms": statistics.median(data),
                "p95_ms": data[min(len(data) - 1, int(0.95 * len(data)))], "max_ms": data[-1]}

    def summary(self) -> dict:
        return {**self._figures(self.latencies_ms),
                "by_url": {url: self._figures(values) for url, values in self.by_url.items()}}


def _serve_model(address) -> None:
    with ScriptedLLMServer() as llm:
        llm.always(answer_from_request)
        address.put(llm.base_url)
        threading.Event().wait()  # until the test ends this process


@contextmanager
def model_in_own_process() -> Iterator[str]:
    """The scripted model, answering from a process of its own (its base URL): a real model is elsewhere, and
    its work in the test's process would queue the desk's requests behind it for the interpreter's lock."""
    context = multiprocessing.get_context("fork")
    address = context.Queue()
    process = context.Process(target=_serve_model, args=(address,), daemon=True)
    process.start()
    try:
        yield address.get(timeout=30)
    finally:
        process.terminate()
        process.join(timeout=10)
