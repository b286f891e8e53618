"""Re-run documents of a batch with other settings (model, input mode, rounds) as new Extractions.

The earlier extractions stay (Document.extractions keeps every run) so runs can be compared side by side.
Each document goes back to the queue through the guarded transition, its task is queued once the
transaction commits, and a ReviewEvent (kind "rerun") records who asked for which settings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.db import transaction

from extraction.models import Batch, Document, ReviewEvent
from extraction.pipeline.requeue import document_requeue
from extraction.states import Status

INPUT_MODES = ("text", "vision", "hybrid")
MAX_ROUNDS_LIMIT = 10
MODEL_NAME = re.compile(r"^[\w.:/@+-]{1,100}$")

# Which documents a scope re-runs.
SCOPES: dict[str, tuple[str, ...]] = {
    "failed": (Status.FAILED.value,),
    "flagged": (Status.FLAGGED.value,),
    "all": (Status.PASSED.value, Status.FLAGGED.value, Status.FAILED.value),
}


class RerunError(Exception):
    """A re-run that cannot be done; the message is for the admin."""


@dataclass(frozen=True)
class RerunResult:
    queued: list[int]
    skipped: int  # in the scope but not requeued (someone moved it first)


def llm_available() -> bool:
    """Whether an LLM endpoint is configured; without one the offline template reader reads once."""
    from extraction.pipeline.extract import llm_config

    return llm_config() is not None


def rerun_options(*, llm_model: str = "", llm_input: str = "", max_rounds: int | str | None = None,
                  ocr_engine: str = "", llm: bool | None = None, doctype_version: int | None = None) -> dict:
    """The overrides for a run; empty values keep the batch's settings. Raises RerunError on a bad value,
    and on LLM settings when no LLM is configured (the offline reader would silently ignore them).
    `doctype_version`: a saved version of the batch's type defined in the app (the caller checks it is)."""
    from extraction.ocr.registry import ENGINE_NAMES

    options: dict = {"doctype_version": doctype_version} if doctype_version else {}
    engine = (ocr_engine or "").strip()
    if engine:
        if engine not in ENGINE_NAMES:
            raise RerunError(f"The OCR engine is one of {', '.join(ENGINE_NAMES)}.")
        options["ocr_engine"] = engine
    llm = llm_available() if llm is None else llm
    if not llm:
        asked = [name for name, value in (("a model", llm_model), ("an input mode", llm_input),
                                          ("rounds", max_rounds)) if str(value or "").strip()]
        if asked:
            raise RerunError(f"No LLM is configured, so {' and '.join(asked)} cannot apply: the offline template "
                             "reader reads each document once. Set LLM_BASE_URL and LLM_MODEL to run the loop.")
        return options
    model = (llm_model or "").strip()
    if model:
        if not MODEL_NAME.fullmatch(model):
            raise RerunError("A model name is letters, digits and . : / @ + - _ (at most 100).")
        options["llm_model"] = model
    mode = (llm_input or "").strip()
    if mode:
        if mode not in INPUT_MODES:
            raise RerunError(f"The input mode is one of {', '.join(INPUT_MODES)}.")
        options["llm_input"] = mode
    if max_rounds not in (None, ""):
        text = str(max_rounds).strip()
        if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= MAX_ROUNDS_LIMIT:
            raise RerunError(f"Rounds must be a whole number from 1 to {MAX_ROUNDS_LIMIT}.")
        options["max_rounds"] = int(text)
    return options


def rerun_candidates(*, batch: Batch, scope: str):
    """The documents a scope would re-run: finished, not duplicates, with their file accepted at upload."""
    if scope not in SCOPES:
        raise RerunError(f"Re-run 'failed', 'flagged' or 'all' documents, not {scope!r}.")
    return (Document.objects.filter(batch=batch, status__in=SCOPES[scope], duplicate_of__isnull=True)
            .exclude(original="").exclude(kind="").order_by("id"))


def batch_rerun(*, batch: Batch, user, scope: str, options: dict) -> RerunResult:
    """Send the scope's documents back to the queue with `options` for their next run."""
    queued, skipped = [], 0
    with transaction.atomic():
        for document_id, status, review_status in rerun_candidates(batch=batch, scope=scope).values_list(
                "id", "status", "review_status"):
            if document_requeue(document_id=document_id, options=options or None):
                queued.append(document_id)
                ReviewEvent.objects.create(
                    document_id=document_id, user=user, kind=ReviewEvent.Kind.RERUN,
                    before={"status": status, "review_status": review_status},
                    after={"status": Status.QUEUED.value, "scope": scope, "options": options},
                )
            else:
                skipped += 1
    return RerunResult(queued=queued, skipped=skipped)
