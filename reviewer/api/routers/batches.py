"""Batches: upload one (multipart, once per Idempotency-Key), follow its progress, re-run it."""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path

from django.db import transaction
from django.http import HttpRequest, HttpResponse
from ninja import File, Form, Header, Router, Status, UploadedFile

from extraction.doctypes.selectors import doctype_version_get
from extraction.models import Batch, Team
from extraction.pipeline import rerun as rerun_service
from extraction.pipeline.ingest import IncomingFile, batch_create_from_files
from reviewer.api.auth import Roles
from reviewer.api.errors import ApiProblem
from reviewer.api.presenters import batch_out
from reviewer.api.routers.common import PROBLEMS
from reviewer.api.schemas import BatchIn, BatchOut, Problem, RerunIn, RerunOut
from reviewer.api.services import IdempotencyConflict, upload_once
from reviewer.batches.forms import UploadForm
from reviewer.roles import ADMIN, SUPERVISOR
from reviewer.teams.scope import get_for

router = Router(tags=["batches"])
KEY_MAX = 200


def _form_problem(form: UploadForm) -> ApiProblem:
    field, messages = next(iter(form.errors.items()))
    return ApiProblem(422, f"{field}: {' '.join(messages)}", field=field)


def _fingerprint(fields: dict, files: list[tuple[str, str]]) -> str:
    """What the upload asked for: its fields and each file's name and content digest, in order."""
    return hashlib.sha256(json.dumps({"fields": fields, "files": files}, sort_keys=True).encode()).hexdigest()


@router.post("", auth=Roles(ADMIN), url_name="batch_create",
             summary="Upload a batch", response={201: BatchOut, 200: BatchOut, 409: Problem, **PROBLEMS})
def batch_create(request: HttpRequest, response: HttpResponse, data: Form[BatchIn],
                 files: File[list[UploadedFile]],
                 idempotency_key: str | None = Header(None, alias="Idempotency-Key",
                                                     description="Retrying with the same key creates nothing "
                                                                 "twice; another upload under it is refused.")):
    """A batch of files (PDF, images or zips) read as `doctype`; each file becomes documents, queued.
    201 with the new batch; 200 with the batch a previous request with the same Idempotency-Key made."""
    key = (idempotency_key or "").strip()
    if idempotency_key is not None and not 0 < len(key) <= KEY_MAX:
        raise ApiProblem(422, f"An Idempotency-Key has 1 to {KEY_MAX} characters.", field="Idempotency-Key")
    # the upload page's own checks (types, engines, limits), on the fields as parsed here, defaults included
    team = request.auth.team
    form = UploadForm({"name": data.name, "doctype": data.doctype, "ocr_engine": data.ocr_engine,
                       "max_rounds": data.max_rounds or "", "llm_input": data.llm_input, "team": team.pk},
                      request.FILES, teams=[team.pk])
    form.fields["team"].queryset = Team.objects.filter(pk=team.pk)
    if not form.is_valid():
        raise _form_problem(form)
    cleaned = form.cleaned_data
    options = {k: cleaned[k] for k in ("max_rounds", "llm_input") if cleaned.get(k)}
    fields = {"name": cleaned["name"], "doctype": cleaned["doctype"], "ocr_engine": cleaned["ocr_engine"], **options}
    with tempfile.TemporaryDirectory(prefix="proofdesk-api-upload-") as tmp:
        incoming, digests = [], []
        for index, uploaded in enumerate(cleaned["files"]):
            path, digest = Path(tmp) / str(index), hashlib.sha256()
            with path.open("wb") as out:
                for chunk in uploaded.chunks():
                    out.write(chunk)
                    digest.update(chunk)
            incoming.append(IncomingFile(filename=uploaded.name, path=path))
            digests.append((uploaded.name, digest.hexdigest()))

        def create() -> Batch:
            return batch_create_from_files(name=fields["name"], doctype=fields["doctype"],
                                           ocr_engine=fields["ocr_engine"], files=incoming, options=options,
                                           user=request.user, team_id=request.auth.team_id)

        if not key:
            return Status(201, batch_out(create()))
        try:
            with transaction.atomic():
                batch, created = upload_once(user=request.user, key=key,
                                             fingerprint=_fingerprint(fields, digests), create=create)
        except IdempotencyConflict as err:
            raise ApiProblem(409 if err.busy else 422, str(err), field="Idempotency-Key") from None
    if not created:
        response["Idempotent-Replayed"] = "true"
    return Status(201 if created else 200, batch_out(batch))


@router.get("/{batch_id}", auth=Roles(ADMIN, SUPERVISOR), url_name="batch_detail",
            summary="Get a batch's progress", response={200: BatchOut, **PROBLEMS})
def batch_detail(request: HttpRequest, batch_id: int):
    """A batch and its progress: documents by state."""
    return batch_out(get_for(request, Batch, pk=batch_id, trial=False))


# RerunError says what is wrong in words; these name the field at fault (checked one at a time).
_RERUN_FIELDS = ("ocr_engine", "llm_model", "llm_input", "max_rounds")


def _rerun_field(data: RerunIn) -> str | None:
    for name in _RERUN_FIELDS:
        try:
            rerun_service.rerun_options(**{name: getattr(data, name)})
        except rerun_service.RerunError:
            return name
    return None


@router.post("/{batch_id}/rerun", auth=Roles(ADMIN), url_name="batch_rerun",
             summary="Re-run a batch's documents", response={200: RerunOut, **PROBLEMS})
def batch_rerun(request: HttpRequest, batch_id: int, data: RerunIn):
    """Read the scope's documents again with other settings, as new runs (earlier ones are kept)."""
    batch = get_for(request, Batch, pk=batch_id, trial=False)
    newest = doctype_version_get(name=batch.doctype) if batch.doctype_version and data.newest_type else None
    try:
        options = rerun_service.rerun_options(
            llm_model=data.llm_model, llm_input=data.llm_input, max_rounds=data.max_rounds,
            ocr_engine=data.ocr_engine, doctype_version=newest.version if newest else None)
        result = rerun_service.batch_rerun(batch=batch, user=request.user, scope=data.scope, options=options)
    except rerun_service.RerunError as err:
        raise ApiProblem(422, str(err), field=_rerun_field(data)) from None
    return {"queued": result.queued, "skipped": result.skipped}
