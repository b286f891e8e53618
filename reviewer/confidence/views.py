"""The confidence page of a document type (admin and supervisor): how well field confidence matched what
people found, the wrong rate per field kind, the suspicious-pass threshold chosen from the measured curve,
the rubric judge against people, and refits shown old against new before they are saved."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
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

WIDTHS = (0.05, 0.1, 0.2)


def _doctype(name: str):
    try:
        return get_doctype(name)
    except UnknownDocumentType:
        raise Http404("no such document type") from None


def interval_width(raw: str | None) -> float:
    """The interval width a page was asked for (one of WIDTHS; 0.1 otherwise)."""
    try:
        value = float(raw or 0.1)
    except ValueError:
        return 0.1
    return value if value in WIDTHS else 0.1


def strata_in_words(doctype: str, strata: list[dict]) -> list[dict]:
    """Each kind of field ('rows[].votes_words') named as people name it ('Votes by party · votes in
    words'), from one answer of the type, with its wrong rate in percent like the other pages."""
    answer = (Extraction.objects.filter(doctype=doctype).exclude(answer=None).order_by("-id")
              .values_list("answer", "doctype_version").first())
    labels = labels_for(Extraction(answer=answer[0], doctype=doctype, doctype_version=answer[1])) if answer \
        else FieldLabels()
    return [{**s, "label": labels.of_family(s["kind"]),
             "rate_text": rate_with_interval(s.get("rate"), s.get("low"), s.get("high"))} for s in strata]


def _context(doctype, width: float) -> dict:
    summary = calibration_summary(doctype=doctype.name, width=width)
    summary = {**summary, "strata": strata_in_words(doctype.name, summary.get("strata") or [])}
    bins = [(b.low, b.high, b.count, b.mean_confidence, b.accuracy) for b in summary["bins"]]
    return {
        "doctype": doctype, "doctypes": DOCTYPE_CHOICES, "summary": summary, "width": width, "widths": WIDTHS,
        "reliability_svg": mark_safe(charts.reliability_chart(  # noqa: S308 - charts escapes every text
            bins, title=f"Reliability of field confidence ({doctype.name})")),
        "versions": ConfidenceModel.objects.filter(doctype=doctype.name).select_related("created_by")[:10],
        "curve": threshold_curve_estimate(doctype=doctype.name),
        "threshold": suspicious_threshold(doctype=doctype.name), "bands": audit_by_band(doctype=doctype.name),
        "judge": judge_agreement(doctype=doctype.name) if doctype.rubric else None,
    }


@role_required(ADMIN, SUPERVISOR)
def confidence_page(request: HttpRequest, doctype: str) -> HttpResponse:
    dt = _doctype(doctype)
    return render(request, "confidence/page.html", _context(dt, interval_width(request.GET.get("width"))))


@require_POST
@role_required(ADMIN, SUPERVISOR)
def confidence_threshold(request: HttpRequest, doctype: str) -> HttpResponse:
    dt = _doctype(doctype)
    raw = request.POST.get("threshold", "")
    try:
        value = None if raw == "" else float(raw)
        suspicious_threshold_set(doctype=dt.name, threshold=value, user=request.user)
    except ValueError:
        messages.error(request, "A threshold is a confidence between 0 and 1.")
    else:
        messages.success(request, "No pass is routed to review now." if value is None else
                         f"Passes whose least sure field is under {value:.1%} go to review from now on.")
    return redirect("confidence_page", doctype=dt.name)


@require_POST
@role_required(ADMIN, SUPERVISOR)
def confidence_refit_view(request: HttpRequest, doctype: str) -> HttpResponse:
    """Fit and show old against new; only a second POST with `save` and the version it was measured
    against stores it."""
    dt = _doctype(doctype)
    context = _context(dt, 0.1)
    try:
        refit = confidence_refit(doctype=dt.name)
    except NotEnoughLabels as err:
        messages.error(request, str(err))
        return redirect("confidence_page", doctype=dt.name)
    if request.POST.get("save") and str(refit.old_version) == request.POST.get("against"):
        try:
            row = confidence_model_save(refit=refit, user=request.user, note=request.POST.get("note", "")[:500])
        except ValueError as err:
            messages.error(request, str(err))
        else:
            messages.success(request, f"Confidence v{row.version} is in use for {dt.name} from now on.")
        return redirect("confidence_page", doctype=dt.name)
    return render(request, "confidence/page.html", {**context, "refit": refit})
