"""Re-run a batch's failed, flagged or all documents with other settings (admin); earlier runs are kept."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from extraction.doctypes.selectors import doctype_version_get
from extraction.ocr.registry import ENGINE_CHOICES
from extraction.pipeline import rerun as rerun_service
from extraction.states import ReviewStatus
from reviewer.access import role_required
from reviewer.batches.selectors import batch_runs
from reviewer.batches.views import get_batch
from reviewer.roles import ADMIN


def _scope_counts(batch) -> dict[str, dict[str, int]]:
    out = {}
    for scope in rerun_service.SCOPES:
        candidates = rerun_service.rerun_candidates(batch=batch, scope=scope)
        out[scope] = {"n": candidates.count(),
                      "reviewed": candidates.exclude(review_status=ReviewStatus.UNREVIEWED.value).count()}
    return out


@role_required(ADMIN)
def batch_rerun(request: HttpRequest, batch_id: int) -> HttpResponse:
    batch = get_batch(request, batch_id)
    newest = doctype_version_get(name=batch.doctype) if batch.doctype_version else None  # a type defined in the app
    error = ""
    form = request.POST if request.method == "POST" else {}
    if request.method == "POST":
        try:
            options = rerun_service.rerun_options(
                llm_model=request.POST.get("llm_model", ""), llm_input=request.POST.get("llm_input", ""),
                max_rounds=request.POST.get("max_rounds"), ocr_engine=request.POST.get("ocr_engine", ""),
                doctype_version=newest.version if newest and request.POST.get("newest_type") else None)
            result = rerun_service.batch_rerun(batch=batch, user=request.user,
                                               scope=request.POST.get("scope", ""), options=options)
        except rerun_service.RerunError as err:
            error = str(err)
        else:
            if result.queued:
                messages.success(request, f"{len(result.queued)} document{'s' if len(result.queued) != 1 else ''} "
                                          "queued again; earlier runs are kept for comparison.")
            else:
                messages.info(request, "No document in that choice could be re-run.")
            if result.skipped:
                messages.info(request, f"{result.skipped} changed state meanwhile and were left alone.")
            return redirect("batch_dashboard", batch_id=batch.id)
    scopes = _scope_counts(batch)
    if not form.get("scope"):  # the first choice that has documents, never "failed (0)"
        form = {**form, "scope": next((s for s in ("failed", "flagged", "all") if scopes[s]["n"]), "all")}
    context = {
        "batch": batch, "error": error, "form": form, "scopes": scopes, "llm": rerun_service.llm_available(),
        "engines": ENGINE_CHOICES,
        "input_modes": rerun_service.INPUT_MODES, "max_rounds_limit": rerun_service.MAX_ROUNDS_LIMIT,
        "runs": batch_runs(batch=batch), "newest": newest,
    }
    return render(request, "batches/rerun.html", context, status=400 if error else 200)
