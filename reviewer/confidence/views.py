"""The confidence page of a document type (admin and supervisor): how well field confidence matched what
people found, the wrong rate per field kind, the suspicious-pass threshold chosen from the measured curve,
the rubric judge against people, and refits shown old against new before they are saved."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_POST

from extraction.confidence.selectors import suspicious_threshold
from extraction.confidence.services import suspicious_threshold_set
from extraction.doctypes.base import FieldLabels
from extraction.doctypes.registry import DOCTYPE_CHOICES, UnknownDocumentType, get_doctype
from extraction.models import ConfidenceModel, Extraction
from reviewer import charts
from reviewer.access import role_required
from reviewer.confidence.calibration import (
    audit_by_band,
    calibration_summary,
    judge_agreement,
    threshold_curve_estimate,
)
from reviewer.confidence.services import NotEnoughLabels, confidence_model_save, confidence_refit
from reviewer.desk.fields import labels_for
from reviewer.figures import rate_with_interval
from reviewer.roles import ADMIN, SUPERVISOR
from reviewer.teams.scope import acting_team, defined_type_team

WIDTHS = (0.05, 0.1, 0.2)


def get_confidence(request: HttpRequest, name: str):
    """The access helper for a type's confidence: (the type, the team whose figures they are). Each team's model
    is fitted on its own people's judgements: a shipped type's of the team asked for (?team=, else one's first);
    another team's defined type (not shared) is a 404."""
    try:
        doctype = get_doctype(name)
    except UnknownDocumentType:
        raise Http404("no such document type") from None
    defined_type_team(request, name, shared_too=True)
    return doctype, acting_team(request).pk


def _back(name: str, team_id: int) -> HttpResponse:
    return redirect(f"{reverse('confidence_page', args=[name])}?team={team_id}")


def interval_width(raw: str | None) -> float:
    """The interval width a page was asked for (one of WIDTHS; 0.1 otherwise)."""
    try:
        value = float(raw or 0.1)
    except ValueError:
        return 0.1
    return value if value in WIDTHS else 0.1


def strata_in_words(doctype: str, strata: list[dict], team_id: int) -> list[dict]:
    """Each kind of field ('rows[].votes_words') named as people name it ('Votes by party · votes in
    words'), from one answer of the type, with its wrong rate in percent like the other pages."""
    answer = (Extraction.objects.filter(doctype=doctype, document__batch__team=team_id).exclude(answer=None)
              .order_by("-id")
              .values_list("answer", "doctype_version").first())
    labels = labels_for(Extraction(answer=answer[0], doctype=doctype, doctype_version=answer[1])) if answer \
        else FieldLabels()
    return [{**s, "label": labels.of_family(s["kind"]),
             "rate_text": rate_with_interval(s.get("rate"), s.get("low"), s.get("high"))} for s in strata]


def _context(doctype, width: float, team_id: int) -> dict:
    summary = calibration_summary(doctype=doctype.name, width=width, team_id=team_id)
    summary = {**summary, "strata": strata_in_words(doctype.name, summary.get("strata") or [], team_id)}
    bins = [(b.low, b.high, b.count, b.mean_confidence, b.accuracy) for b in summary["bins"]]
    return {
        "doctype": doctype, "doctypes": DOCTYPE_CHOICES, "summary": summary, "width": width, "widths": WIDTHS,
        "reliability_svg": mark_safe(charts.reliability_chart(  # noqa: S308 - charts escapes every text
            bins, title=f"Reliability of field confidence ({doctype.name})")),
        "versions": ConfidenceModel.objects.filter(doctype=doctype.name, team=team_id)
        .select_related("created_by")[:10],
        "curve": threshold_curve_estimate(doctype=doctype.name, team_id=team_id),
        "threshold": suspicious_threshold(doctype=doctype.name, team_id=team_id),
        "bands": audit_by_band(doctype=doctype.name, team_id=team_id),
        "judge": judge_agreement(doctype=doctype.name, team_id=team_id) if doctype.rubric else None,
        "team_id": team_id,
    }


@role_required(ADMIN, SUPERVISOR)
def confidence_page(request: HttpRequest, doctype: str) -> HttpResponse:
    dt, team_id = get_confidence(request, doctype)
    return render(request, "confidence/page.html", _context(dt, interval_width(request.GET.get("width")), team_id))


@require_POST
@role_required(ADMIN, SUPERVISOR)
def confidence_threshold(request: HttpRequest, doctype: str) -> HttpResponse:
    dt, team_id = get_confidence(request, doctype)
    raw = request.POST.get("threshold", "")
    try:
        value = None if raw == "" else float(raw)
        suspicious_threshold_set(doctype=dt.name, threshold=value, user=request.user, team_id=team_id)
    except ValueError:
        messages.error(request, "A threshold is a confidence between 0 and 1.")
    else:
        messages.success(request, "No pass is routed to review now." if value is None else
                         f"Passes whose least sure field is under {value:.1%} go to review from now on.")
    return _back(dt.name, team_id)


@require_POST
@role_required(ADMIN, SUPERVISOR)
def confidence_refit_view(request: HttpRequest, doctype: str) -> HttpResponse:
    """Fit and show old against new; only a second POST with `save` and the version it was measured
    against stores it."""
    dt, team_id = get_confidence(request, doctype)
    context = _context(dt, 0.1, team_id)
    try:
        refit = confidence_refit(doctype=dt.name, team_id=team_id)
    except NotEnoughLabels as err:
        messages.error(request, str(err))
        return _back(dt.name, team_id)
    if request.POST.get("save") and str(refit.old_version) == request.POST.get("against"):
        try:
            row = confidence_model_save(refit=refit, user=request.user, note=request.POST.get("note", "")[:500])
        except ValueError as err:
            messages.error(request, str(err))
        else:
            messages.success(request, f"Confidence v{row.version} is in use for {dt.name} from now on.")
        return _back(dt.name, team_id)
    return render(request, "confidence/page.html", {**context, "refit": refit})
