"""Scripted runs of one generated tally sheet through the production pipeline (pdf-text engine).

`acta_pdf` writes a sheet, `process` ingests it as a batch and runs it synchronously, and `model`/`when_told`
are steps for the scripted LLM server that read the prompt like a careful model and spoil the answer.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pymupdf

from extraction.models import Document
from extraction.pipeline.ingest import IncomingFile, batch_create_from_files
from extraction.pipeline.process import document_process
from sheetgen.generate import generate_acta, render_scan
from tests.support.acta_answers import correct_answer, data_section, feedback_of
from tests.support.llm_server import openai_error_body, reply_json, reply_status

USAGE = (1200, 300)  # prompt and completion tokens each scripted answer reports


def acta_pdf(tmp_path: Path, *, seed: int, errors=(), layout="classic", extra_text: str | None = None):
    acta = generate_acta(seed=seed, errors=errors, layout=layout)
    path = tmp_path / f"acta-{seed}.pdf"
    if extra_text is None:
        path.write_bytes(acta.pdf_bytes)
    else:
        with pymupdf.open(stream=acta.pdf_bytes, filetype="pdf") as doc:
            doc[0].insert_text((36, 140), extra_text, fontsize=7, fontname="helv")
            path.write_bytes(doc.tobytes())
    return acta, path


def scanned_acta(tmp_path: Path, *, seed: int) -> IncomingFile:
    """A generated sheet printed and scanned (a JPEG), ready to upload."""
    path = tmp_path / f"acta-{seed}.jpg"
    path.write_bytes(render_scan(generate_acta(seed=seed).pdf_bytes, seed=seed))
    return IncomingFile(path.name, path)


def process(path: Path, *, options: dict | None = None) -> Document:
    batch = batch_create_from_files(
        name="llm", doctype="acta", ocr_engine="pdf-text", files=[IncomingFile(path.name, path)], options=options,
    )
    doc = batch.documents.get()
    document_process(document_id=doc.id)
    doc.refresh_from_db()
    return doc


def model(printed: dict, spoil: Callable[[dict], dict] = lambda a: a, *, extra: dict | None = None):
    """A scripted step: read the prompt like a careful model, then spoil the answer."""

    def step(body: dict[str, Any]):
        try:
            answer = spoil(correct_answer(data_section(body), printed))
        except Exception:  # a bug in the script: show it on the document instead of a dropped connection
            return reply_status(400, openai_error_body(f"scripted model failed: {traceback.format_exc()}"))
        return reply_json({**answer, **(extra or {})}, usage=USAGE)

    return step


def when_told(needle: str, then, otherwise):
    """A step that answers `then` when the feedback of the request mentions `needle`, else `otherwise`."""

    def step(body: dict[str, Any]):
        return then if needle in feedback_of(body) else otherwise

    return step


def row_with(printed: dict, digit: str) -> int:
    return next(i for i, r in enumerate(printed["rows"]) if digit in str(r["votes"]))
