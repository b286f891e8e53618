"""AWS Textract as an OCR engine: AnalyzeDocument for an image or a one-page PDF, an asynchronous job through
S3 for longer PDFs (or one call per rendered page without a bucket). Its JSON is read by
extraction/ocr/textract_json.py."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from extraction.ocr.blocks import OcrError, OcrPage, SourceDocument
from extraction.ocr.geometry import PageSize
from extraction.ocr.textract_json import parse_textract

log = logging.getLogger(__name__)

_SYNC_LIMIT_BYTES = 10 * 1024 * 1024  # AnalyzeDocument accepts at most 10 MB of raw bytes
_SYNC_SUFFIXES = {".png", ".jpg", ".jpeg", ".tif", ".tiff", ".pdf"}


class TextractEngine:
    """OcrEngine on AWS Textract (AnalyzeDocument with TABLES).

    Images and 1-page PDFs go through the synchronous API. Multi-page PDFs are uploaded to S3 and read by an
    asynchronous job; without a bucket they fall back to one synchronous call per rendered page image.
    """

    name = "textract"

    def __init__(
        self,
        client: Any = None,
        *,
        region: str,
        bucket: str | None,
        prefix: str = "proofdesk/",
        poll_seconds: float = 2.0,
        timeout_seconds: float = 600,
        s3_client: Any = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if client is None or (bucket and s3_client is None):
            import boto3  # deferred: importing the module must not need AWS configuration

            client = client or boto3.client("textract", region_name=region)
            if bucket and s3_client is None:
                s3_client = boto3.client("s3", region_name=region)
        self.client = client
        self.s3 = s3_client
        self.region = region
        self.bucket = bucket
        self.prefix = prefix
        self.poll_seconds = poll_seconds
        self.timeout_seconds = timeout_seconds
        self._sleep = sleep

    def read(self, document: SourceDocument) -> list[OcrPage]:
        page_count = max(len(document.pages), 1)
        if document.kind == "pdf" and page_count > 1:
            pages = self._read_async(document) if self.bucket else self._read_page_images(document)
        elif document.kind == "pdf" or (document.kind == "image" and page_count == 1):
            pages = self._analyze(self._single_page_bytes(document), page=1, sizes=document.page_sizes())
        else:
            pages = self._read_page_images(document)
        return _one_per_page(pages, page_count)

    # -- sync

    def _single_page_bytes(self, document: SourceDocument) -> bytes:
        original = Path(document.path)
        if (
            original.suffix.lower() in _SYNC_SUFFIXES
            and original.exists()
            and original.stat().st_size <= _SYNC_LIMIT_BYTES
        ):
            return original.read_bytes()
        if not document.pages:
            raise OcrError(f"Cannot send {original.name} to Textract: no rendered page, unsupported format.")
        return Path(document.pages[0].path).read_bytes()

    def _read_page_images(self, document: SourceDocument) -> list[OcrPage]:
        out: list[OcrPage] = []
        sizes = document.page_sizes()
        for image in document.pages:
            out += self._analyze(Path(image.path).read_bytes(), page=image.number, sizes=sizes)
        return out

    def _analyze(self, data: bytes, *, page: int, sizes: dict[int, PageSize]) -> list[OcrPage]:
        response = self._call("AnalyzeDocument", self.client.analyze_document,
                              Document={"Bytes": data}, FeatureTypes=["TABLES"])
        # A sync call always reads one page: it is measured, and numbered, as the page it was sent for.
        parsed = parse_textract(response, sizes={1: sizes[page]} if page in sizes else {})
        for p in parsed:
            p.number = page
            for b in p.blocks:
                b.page = page
        return parsed

    # -- async

    def _read_async(self, document: SourceDocument) -> list[OcrPage]:
        key = f"{self.prefix}{uuid.uuid4().hex}/{Path(document.path).name}"
        self._call("S3 PutObject", self.s3.put_object, Bucket=self.bucket, Key=key,
                   Body=Path(document.path).read_bytes())
        try:
            job = self._call(
                "StartDocumentAnalysis", self.client.start_document_analysis,
                DocumentLocation={"S3Object": {"Bucket": self.bucket, "Name": key}}, FeatureTypes=["TABLES"],
            )
            return parse_textract(self._collect(job["JobId"]), sizes=document.page_sizes())
        finally:
            try:
                self.s3.delete_object(Bucket=self.bucket, Key=key)
            except Exception:  # the upload is only a staging copy; a leftover is not worth failing the read
                log.warning("could not delete s3://%s/%s", self.bucket, key, exc_info=True)

    def _collect(self, job_id: str) -> list[dict]:
        deadline = time.monotonic() + self.timeout_seconds
        while True:
            first = self._call("GetDocumentAnalysis", self.client.get_document_analysis, JobId=job_id)
            status = first.get("JobStatus")
            if status == "SUCCEEDED":
                break
            if status in ("FAILED", "PARTIAL_SUCCESS"):
                detail = first.get("StatusMessage") or first.get("Warnings") or "no detail"
                raise OcrError(f"Textract job {job_id} ended {status}: {detail}")
            if time.monotonic() >= deadline:
                raise OcrError(f"Textract job {job_id} did not finish within {self.timeout_seconds:g} s.")
            self._sleep(self.poll_seconds)
        parts = [first]
        while parts[-1].get("NextToken"):
            parts.append(self._call("GetDocumentAnalysis", self.client.get_document_analysis,
                                    JobId=job_id, NextToken=parts[-1]["NextToken"]))
        return parts

    @staticmethod
    def _call(what: str, fn: Callable[..., dict], **kwargs: Any) -> dict:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return fn(**kwargs)
        except ClientError as exc:
            err = exc.response.get("Error", {})
            code, message = err.get("Code", "?"), err.get("Message", str(exc))
            raise OcrError(f"Textract {what} failed: {code}: {message}") from exc
        except BotoCoreError as exc:
            raise OcrError(f"Textract {what} failed: {exc}") from exc


def _one_per_page(pages: list[OcrPage], count: int) -> list[OcrPage]:
    by_number = {p.number: p for p in pages}
    extra = sorted(n for n in by_number if n > count)
    if extra:
        raise OcrError(f"Textract returned page {extra[0]} for a document of {count} page(s).")
    return [by_number.get(n) or OcrPage(number=n, engine="textract") for n in range(1, count + 1)]
