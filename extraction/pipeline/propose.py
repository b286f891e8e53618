"""Starting a type from a sample document: the model proposes fields from the sample's text, on a worker (a
web request never reads a document). The sample is a hidden batch like a trial's; its one extraction's answer
is the proposed definition, which the Types page opens for the admin to edit."""

from __future__ import annotations

import time
from dataclasses import replace
from decimal import Decimal

import pydantic
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from extraction.doctypes.defined.propose import Proposal, proposal_definition, proposal_messages
from extraction.llm.client import LlmClient
from extraction.llm.errors import LlmError
from extraction.models import Batch, Document, Extraction, Round
from extraction.pipeline.ingest import IncomingFile, batch_add_files, intake_limits
from extraction.pipeline.lease import ClaimLost, Lease
from extraction.pipeline.transitions import document_transition
from extraction.states import Status, StopReason

__all__ = ["PROPOSAL_DOCTYPE", "doctype_proposal_start", "proposal_run"]

PROPOSAL_DOCTYPE = "proposal"  # the hidden batch's type: no type exists yet


def doctype_proposal_start(*, file: IncomingFile, ocr_engine: str, user, team_id: int) -> Document:
    """Queue a sample to be read and its fields proposed (bounded by TRIAL_MAX_PAGES, as a trial)."""
    batch = Batch.objects.create(name="Fields proposed from a sample", doctype=PROPOSAL_DOCTYPE,
                                 ocr_engine=ocr_engine, settings={"propose": True}, trial=True, created_by=user,
                                 team_id=team_id)
    limits = replace(intake_limits(), max_pages=min(intake_limits().max_pages, settings.TRIAL_MAX_PAGES),
                     pages_advice="The model proposes fields from a short sample: choose a document of fewer pages.")
    return batch_add_files(batch=batch, files=[file], limits=limits)[0]


def proposal_run(*, document: Document, pages, config, lease: Lease | None = None) -> str:
    """Ask the model for a first definition of the sample's kind; the document ends PASSED with the proposal as
    its extraction's answer, or FAILED with the reason (retryable when the endpoint failed)."""
    claim = lease.claim if lease is not None else None
    if config is None:
        return _end(document, claim, Status.FAILED, error_code="needs_llm",
                    error_message="Proposing fields needs an LLM: set LLM_BASE_URL and LLM_MODEL, then retry.")
    extraction = Extraction.objects.create(document=document, doctype=PROPOSAL_DOCTYPE, reader=Extraction.Reader.LLM,
                                           settings={"max_rounds": 1, "model": config.model, "input": "text"})
    messages = proposal_messages(pages=pages)
    current = Round.objects.create(extraction=extraction, number=1, request={"messages": messages})
    started = time.monotonic()
    reply, error, answer = None, "", None
    try:
        with LlmClient(config, deadline=time.monotonic() + config.document_timeout_s) as client:
            if lease is not None:
                lease.on_lost(client.abort)
            reply = client.complete_json(messages=messages, schema=Proposal, schema_name="proposal")
        answer = proposal_definition(reply.parsed or Proposal.model_validate(reply.data or {}))
    except (LlmError, pydantic.ValidationError) as err:
        reply = getattr(err, "reply", None) or reply
        error = str(err)
    if lease is not None:
        lease.check()
    usage = {"prompt_tokens": reply.usage.prompt_tokens if reply else 0,
             "completion_tokens": reply.usage.completion_tokens if reply else 0,
             "cost": Decimal(str(round(reply.cost, 6))) if reply else Decimal(0)}
    with transaction.atomic():
        Round.objects.filter(pk=current.pk).update(
            state=Round.State.FAILED if error else Round.State.COMPLETED, raw_answer=reply.raw_text if reply else "",
            parsed=answer, error=error, latency_ms=int((time.monotonic() - started) * 1000),
            finished_at=timezone.now(), **usage)
        Extraction.objects.filter(pk=extraction.pk).update(
            answer=answer, error=error, best_round=1 if answer else None, finished_at=timezone.now(),
            stop_reason=StopReason.ERROR.value if error else StopReason.PASSED.value, **usage)
        if error:
            return _end(document, claim, Status.FAILED, error_code="llm",
                        error_message=f"The model could not propose fields: {error}. It can be retried.")
        return _end(document, claim, Status.PASSED)


def _end(document: Document, claim: int | None, to: Status, **error: str) -> str:
    if not document_transition(document_id=document.id, to=to, claim=claim, **error) and claim is not None:
        raise ClaimLost(f"document {document.id} was taken back before its proposal could end it")
    return to.value
