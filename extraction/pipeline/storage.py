"""Files in the configured storage (local folder or S3) as local paths for the pure pipeline code."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.core.files.storage import default_storage


@contextmanager
def local_path(name: str) -> Iterator[Path]:
    """A local path to a stored file: the file itself on disk storage, a temporary copy otherwise."""
    try:
        on_disk = Path(default_storage.path(name))
    except NotImplementedError:
        on_disk = None
    if on_disk is not None:
        yield on_disk
        return
    suffix = Path(name).suffix
    with tempfile.NamedTemporaryFile(suffix=suffix) as tmp:
        with default_storage.open(name, "rb") as src:
            shutil.copyfileobj(src, tmp)
        tmp.flush()
        yield Path(tmp.name)
