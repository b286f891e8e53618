"""A type's evaluation set (admins): its documents with the values people confirmed, runs of the set under a
version and settings on the workers, each run's report beside the live version's, and making a version live
after seeing that comparison."""

from __future__ import annotations

import csv

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse

from extraction.doctypes.defined.check import DefinitionError
from extraction.doctypes.registry import UnknownDocumentType, get_doctype
from extraction.doctypes.selectors import doctype_live_version, doctype_versions
from extraction.doctypes.services import doctype_version_make_live
from extraction.evaluation.expected import ExpectedError
from extraction.evaluation.selectors import (
    evaluation_items,
    evaluation_report,
    evaluation_runs,
    evaluation_runs_with_their_own,
    run_candidate_newest,
    run_name,
)
from extraction.evaluation.services import (
    EvaluationError,
    evaluation_item_remove,
    evaluation_items_collect,
    evaluation_items_upload,
    evaluation_run_start,
)
from extraction.models import EvaluationRun
from extraction.ocr.registry import ENGINE_CHOICES
from extraction.pipeline import rerun as rerun_service
from reviewer.access import role_required
from reviewer.evaluation.presenters import report_rows, report_table
from reviewer.roles import ADMIN
from reviewer.teams.scope import acting_team, defined_type_team, get_for
from reviewer.uploads import uploads_written
from reviewer.whole_numbers import whole_number


def get_doctype_or_404(name: str):
    """The access helper for a type's set: 404 unless the type exists (roles are checked by the view)."""
    try:
        return get_doctype(name)
    except UnknownDocumentType:
        raise Http404("No such document type.") from None


def get_set(request: HttpRequest, name: str):
    """The access helper for a type's set: (the type, the team whose set it is). A type defined in the app has
    its team's set (another team's type is a 404); a shipped type has a set in each team (?team=, else the
    first of one's)."""
    doctype = get_doctype_or_404(name)
    return doctype, defined_type_team(request, name) or acting_team(request).pk


def get_run(request: HttpRequest, run_id: int) -> EvaluationRun:
    """The access helper for a run: 404 unless it is one of one's team's."""
    return get_for(request, evaluation_runs_with_their_own(), pk=run_id)


@role_required(ADMIN)
def evaluation_set(request: HttpRequest, name: str) -> HttpResponse:
    """GET: the set, its runs and the forms. POST action=collect | upload | remove | run, then back here (or to
    the run)."""
    doctype, team_id = get_set(request, name)
    here = f"{reverse('evaluation_set', args=[name])}?team={team_id}"
    error, form = "", request.POST if request.method == "POST" else {}
    if request.method == "POST":
        action = request.POST.get("action", "")
        try:
            if action == "collect":
                counts = evaluation_items_collect(doctype=name, team_id=team_id)
                messages.success(request, f"{counts['added']} document{'s' if counts['added'] != 1 else ''} added, "
                                          f"{counts['updated']} updated from what people confirmed since.")
                return redirect(here)
            if action == "upload":
                added = _upload(request, name, team_id)
                messages.success(request, f"{added} document{'s' if added != 1 else ''} added with their expected values.")
                return redirect(here)
            if action == "remove":
                removed = evaluation_item_remove(doctype=name, team_id=team_id,
                                                 item_id=whole_number(request.POST.get("item", "")) or 0)
                messages.success(request, f"{removed} is out of the set.")
                return redirect(here)
            if action == "run":
                run = _start(request, name, team_id)
                return redirect("evaluation_run", run_id=run.id)
            error = "Choose what to do: add documents people confirmed, upload documents, or run the set."
        except (EvaluationError, ExpectedError, rerun_service.RerunError) as err:
            error = str(err)
    context = {
        "doctype": doctype, "items": evaluation_items(doctype=name, team_id=team_id),
        "runs": [{"run": run, "name": run_name(run), "compared_with": run_name(run.compared_with)
                  if run.compared_with else ""} for run in evaluation_runs(doctype=name, team_id=team_id)],
        "versions": doctype_versions(name=name) if doctype.version is not None else [],
        "live": doctype.version, "error": error, "form": form, "engines": ENGINE_CHOICES,
        "llm": rerun_service.llm_available(), "input_modes": rerun_service.INPUT_MODES,
        "max_rounds_limit": rerun_service.MAX_ROUNDS_LIMIT,
    }
    return render(request, "evaluation/set.html", context, status=400 if error else 200)


def _upload(request: HttpRequest, name: str, team_id: int) -> int:
    files, expected = request.FILES.getlist("documents"), request.FILES.get("expected")
    if not files or expected is None:
        raise EvaluationError("Choose the documents and the file of their expected values (JSON or CSV).")
    with uploads_written([*files, expected], prefix="proofdesk-evaluation-") as (*documents, values):
        return evaluation_items_upload(doctype=name, team_id=team_id, files=documents, expected=values,
                                       user=request.user)


def _start(request: HttpRequest, name: str, team_id: int) -> EvaluationRun:
    options = rerun_service.rerun_options(
        llm_model=request.POST.get("llm_model", ""), llm_input=request.POST.get("llm_input", ""),
        max_rounds=request.POST.get("max_rounds"))
    engine = request.POST.get("ocr_engine", "")
    if engine and engine not in dict(ENGINE_CHOICES):
        raise EvaluationError("Choose an OCR engine from the list.")
    version = whole_number(request.POST.get("version", ""))
    if version is not None and not any(v.version == version for v in doctype_versions(name=name)):
        raise EvaluationError(f"There is no version {version} of this type.")
    return evaluation_run_start(doctype=name, team_id=team_id, version=version, options=options, ocr_engine=engine,
                                user=request.user)


@role_required(ADMIN)
def evaluation_run(request: HttpRequest, run_id: int) -> HttpResponse:
    """A run's report beside the live version's; while the workers read, its progress is polled."""
    run = get_run(request, run_id)
    report = evaluation_report(run=run)
    context = {"report": report, "run": run, "table": report_table(report), "doctype": get_doctype_or_404(run.doctype),
               "live": doctype_live_version(name=run.doctype)}
    if request.htmx and request.GET.get("partial") == "report":
        return render(request, "evaluation/run.html#report", context)
    return render(request, "evaluation/run.html", context)


@role_required(ADMIN)
def evaluation_run_csv(request: HttpRequest, run_id: int) -> HttpResponse:
    """The report as CSV: a row per figure (outcome, field accuracy, rule precision and recall, cost and time),
    a column per run."""
    run = get_run(request, run_id)
    report = evaluation_report(run=run)
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="evaluation-{run.id}-{run.doctype}.csv"'
    writer = csv.writer(response)
    writer.writerow(["figure", "of", *[arm["name"] for arm in report["arms"]]])
    writer.writerows(report_rows(report))
    return response


@role_required(ADMIN)
def doctype_make_live(request: HttpRequest, name: str, version: int) -> HttpResponse:
    """Make a saved version live: the comparison first (its newest evaluation against the live version), said
    plainly when it is worse; the admin may still go ahead, and the decision keeps the figures."""
    doctype, team_id = get_set(request, name)
    if doctype.version is None or not any(v.version == version for v in doctype_versions(name=name)):
        raise Http404("No such version.")
    live = doctype.version
    run = run_candidate_newest(doctype=name, team_id=team_id, version=version, live=live)
    report = evaluation_report(run=run) if run else None
    if request.method == "POST" and version != live:
        if report is None:
            warnings = [f"v{version} has not been evaluated against v{live}."]
        else:  # figures still growing say nothing yet: that itself is recorded
            warnings = report["warnings"] if report["done"] else [
                f"Evaluation {run.id} was still being read; its figures were not final."]
        try:
            doctype_version_make_live(name=name, version=version, user=request.user, run=run, warnings=warnings,
                                      comparison={"rows": report_rows(report)} if report else {})
        except DefinitionError as err:
            messages.error(request, "; ".join(err.problems))
        else:
            messages.success(request, f"v{version} is live: batches uploaded from now on are read under it.")
        return redirect("doctype_edit", name=name)
    context = {"doctype": doctype, "version": version, "live": live, "run": run, "report": report,
               "table": report_table(report) if report else None}
    return render(request, "evaluation/live.html", context)
