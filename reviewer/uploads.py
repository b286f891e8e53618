"""Files a request uploaded, written where the intake reads them (extraction/pipeline/ingest.py)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from django.core.files.uploadedfile import UploadedFile

from extraction.pipeline.ingest import IncomingFile

__all__ = ["uploads_written"]


@contextmanager
def uploads_written(uploads: Sequence[UploadedFile], *, prefix: str) -> Iterator[list[IncomingFile]]:
    """Each uploaded file written to a temporary folder, in order, as the intake takes it; the folder and its
    files are gone when the block ends (the intake keeps its own copy)."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        incoming = []
        for index, uploaded in enumerate(uploads):
            path = Path(tmp) / str(index)
            with path.open("wb") as out:
                for chunk in uploaded.chunks():
                    out.write(chunk)
            incoming.append(IncomingFile(filename=uploaded.name, path=path))
        yield incoming
