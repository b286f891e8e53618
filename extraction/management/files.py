"""Files and folders named on a command line, as uploads."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError

from extraction.pipeline.ingest import IncomingFile


def incoming_files(paths: list[Path]) -> list[IncomingFile]:
    """Every file named, and every file under each folder named (sorted); an error for a missing path."""
    files: list[IncomingFile] = []
    for path in paths:
        if path.is_dir():
            files += [IncomingFile(filename=p.name, path=p) for p in sorted(path.rglob("*")) if p.is_file()]
        elif path.is_file():
            files.append(IncomingFile(filename=path.name, path=path))
        else:
            raise CommandError(f"{path} does not exist")
    if not files:
        raise CommandError("no files found")
    return files
