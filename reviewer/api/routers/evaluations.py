"""Evaluation sets (admins, as the pages): start a run of a type's set, and read a run's report."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Router

from extraction.doctypes.registry import UnknownDocumentType, get_doctype
from extraction.doctypes.selectors import doctype_versions
from extraction.evaluation.selectors import evaluation_report, evaluation_run_get
from extraction.evaluation.services import EvaluationError, evaluation_run_start
from extraction.ocr.registry import ENGINE_NAMES
from extraction.pipeline import rerun as rerun_service
from reviewer.api.auth import Roles
from reviewer.api.errors import ApiProblem
from reviewer.api.routers.common import PROBLEMS
from reviewer.api.schemas import EvaluationIn, EvaluationOut
from reviewer.roles import ADMIN

router = Router(tags=["evaluation sets"])


def _out(run_id: int) -> dict:
    run = evaluation_run_get(run_id=run_id) if 0 < run_id < 2**31 else None  # beyond an id the database holds
    if run is None:
        raise ApiProblem(404, f"There is no evaluation {run_id}.")
    report = evaluation_report(run=run)
    arms = [{**{k: v for k, v in arm.items() if k not in ("run", "per_document")}, "run": arm["run"].id,
             "version": arm["run"].version} for arm in report["arms"]]
    return {"id": run.id, "doctype": run.doctype, "done": report["done"], "arms": arms, "warnings": report["warnings"]}


@router.post("/doctypes/{name}/evaluations", auth=Roles(ADMIN), url_name="evaluation_start",
             summary="Run a type's evaluation set", response={201: EvaluationOut, **PROBLEMS})
def evaluation_start(request: HttpRequest, name: str, data: EvaluationIn):
    """Read the set again under a version and settings on the workers, beside the live version."""
    try:
        get_doctype(name)
    except UnknownDocumentType:
        raise ApiProblem(404, f"There is no document type {name!r}.") from None
    if data.version is not None and not any(v.version == data.version for v in doctype_versions(name=name)):
        raise ApiProblem(422, f"There is no version {data.version} of {name!r}.", field="version")
    if data.ocr_engine and data.ocr_engine not in ENGINE_NAMES:
        raise ApiProblem(422, f"The OCR engine is one of {', '.join(ENGINE_NAMES)}.", field="ocr_engine")
    try:
        options = rerun_service.rerun_options(llm_model=data.llm_model, llm_input=data.llm_input,
                                              max_rounds=data.max_rounds)
        run = evaluation_run_start(doctype=name, version=data.version, options=options, ocr_engine=data.ocr_engine,
                                   user=request.user)
    except (rerun_service.RerunError, EvaluationError) as err:
        raise ApiProblem(422, str(err)) from None
    return 201, _out(run.id)


@router.get("/evaluations/{run_id}", auth=Roles(ADMIN), url_name="evaluation_get",
            summary="Get an evaluation's report", response={200: EvaluationOut, **PROBLEMS})
def evaluation_get(request: HttpRequest, run_id: int):
    """A run's figures against people, beside the live version's, and where it is worse."""
    return _out(run_id)
