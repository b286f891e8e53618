"""Create a batch from files and folders, as the upload page does."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand

from extraction.doctypes.registry import DOCTYPE_CHOICES
from extraction.management.files import incoming_files
from extraction.ocr.registry import ENGINE_CHOICES
from extraction.pipeline.ingest import batch_create_from_files


class Command(BaseCommand):
    help = "Upload files (PDF, images, zips) or folders of them as a new batch and queue them for processing."

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", type=Path)
        parser.add_argument("--type", required=True, choices=[c for c, _ in DOCTYPE_CHOICES], dest="doctype")
        parser.add_argument("--batch", required=True, help="name of the new batch")
        parser.add_argument("--engine", default="auto", choices=[c for c, _ in ENGINE_CHOICES])

    def handle(self, *args, paths, doctype, batch, engine, **options):
        files = incoming_files(paths)
        created = batch_create_from_files(name=batch, doctype=doctype, ocr_engine=engine, files=files)
        for doc in created.documents.order_by("id"):
            line = f"{doc.status:<8} {doc.filename}"
            if doc.error_message:
                line += f"  ({doc.error_code}: {doc.error_message})"
            self.stdout.write(line)
        self.stdout.write(f"batch {created.id} '{created.name}': {created.documents.count()} documents")
