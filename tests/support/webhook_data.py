"""Data for the webhook tests: a batch of generated tally sheets, queued for the worker or processed in-line."""

from __future__ import annotations

from extraction.pipeline.ingest import IncomingFile, batch_create_from_files
from sheetgen.generate import generate_acta


def acta_batch(tmp_path, *seeds_and_errors):
    files = []
    for seed, errors in seeds_and_errors:
        path = tmp_path / f"acta-{seed}.pdf"
        path.write_bytes(generate_acta(seed=seed, errors=errors).pdf_bytes)
        files.append(IncomingFile(path.name, path))
    return batch_create_from_files(name="hooks", doctype="acta", ocr_engine="pdf-text", files=files)
