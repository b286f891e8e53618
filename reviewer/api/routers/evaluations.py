"""Evaluation sets (admins, as the pages): start a run of a type's set, and read a run's report."""

from __future__ import annotations

from django.http import Http404, HttpRequest
from ninja import Router

from extraction.doctypes.registry import UnknownDocumentType, get_doctype
from extraction.doctypes.selectors import doctype_versions
from extraction.evaluation.selectors import evaluation_report, evaluation_runs_with_their_own
from extraction.evaluation.services import EvaluationError, evaluation_run_start
from extraction.ocr.registry import ENGINE_NAMES
from extraction.pipeline import rerun as rerun_service
from reviewer.api.auth import Roles
from reviewer.api.errors import ApiProblem
from reviewer.api.routers.common import PROBLEMS
from reviewer.api.schemas import EvaluationIn, EvaluationOut
from reviewer.roles import ADMIN
from reviewer.teams.scope import defined_type_team, get_for

router = Router(tags=["evaluation sets"])


def _out(request: HttpRequest, run_id: int) -> dict:
    if not 0 < run_id < 2**31:  # beyond an id the database holds
        raise ApiProblem(404, f"There is no evaluation {run_id}.")
    try:
        run = get_for(request, evaluation_runs_with_their_own(), pk=run_id)
    except Http404:  # said as for one that does not exist: another team's is none of the caller's
        raise ApiProblem(404, f"There is no evaluation {run_id}.") from None
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
        defined_type_team(request, name)  # another team's type does not exist for the caller
    except (UnknownDocumentType, Http404):
        raise ApiProblem(404, f"There is no document type {name!r}.") from None
    if data.version is not None and not any(v.version == data.version for v in doctype_versions(name=name)):
        raise ApiProblem(422, f"There is no version {data.version} of {name!r}.", field="version")
    if data.ocr_engine and data.ocr_engine not in ENGINE_NAMES:
        raise ApiProblem(422, f"The OCR engine is one of {', '.join(ENGINE_NAMES)}.", field="ocr_engine")
    try:
        options = rerun_service.rerun_options(llm_model=data.llm_model, llm_input=data.llm_input,
                                              max_rounds=data.max_rounds)
        run = evaluation_run_start(doctype=name, team_id=request.auth.team_id, version=data.version, options=options,
                                   ocr_engine=data.ocr_engine, user=request.user)
    except (rerun_service.RerunError, EvaluationError) as err:
        raise ApiProblem(422, str(err)) from None
    return 201, _out(request, run.id)


@router.get("/evaluations/{run_id}", auth=Roles(ADMIN), url_name="evaluation_get",
            summary="Get an evaluation's report", response={200: EvaluationOut, **PROBLEMS})
def evaluation_get(request: HttpRequest, run_id: int):
    """A run's figures against people, beside the live version's, and where it is worse."""
    return _out(request, run_id)
