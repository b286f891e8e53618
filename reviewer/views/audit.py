"""Supervisor audit: random samples of a batch's passed documents, a verdict on each, the false-pass estimate."""

from __future__ import annotations

from django.contrib import messages
from django.db.models import Count, Q
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_POST

from extraction import charts, selectors
from extraction.doctypes.base import FieldLabels
from extraction.models import Extraction, Round
from extraction.states import Status
from reviewer.access import role_required
from reviewer.models import AuditItem, AuditSample, FieldAuditItem
from reviewer.presenters.desk import field_items, labels_for, ocr_layer
from reviewer.roles import ADMIN, SUPERVISOR
from reviewer.selectors_audit import audit_summary
from reviewer.services import audit as audit_service
from reviewer.views.batches import get_batch

AUDIT_ROLES = (SUPERVISOR, ADMIN)


def get_sample(request: HttpRequest, sample_id: int) -> AuditSample:
    """The access helper for a sample: 404 when it does not exist (roles are checked by the view)."""
    return get_object_or_404(AuditSample.objects.select_related("batch", "created_by"), pk=sample_id)


def get_item(request: HttpRequest, sample_id: int, item_id: int) -> AuditItem:
    """The access helper for an item: 404 unless it exists and belongs to that sample."""
    return get_object_or_404(
        AuditItem.objects.select_related("sample__batch", "document", "decided_by"), pk=item_id, sample_id=sample_id)


def family_labels(batch, summary: dict) -> dict:
    """Name the field families of the audit summary ('rows[].votes') for people, from one answer of the
    batch: 'Votes by party · votes'."""
    answer = (Extraction.objects.filter(document__batch=batch).exclude(answer=None).values_list("answer", "doctype")
              .first())
    labels = labels_for(Extraction(answer=answer[0], doctype=answer[1])) if answer else FieldLabels()
    named = [(labels.of_family(family), n) for family, n in summary["by_field"]]
    return {**summary, "by_field": named}


def estimate_charts(summary: dict) -> dict:
    """The estimate's SVGs (built from escaped text by extraction.charts, so safe to insert)."""
    e = summary["estimate"]
    return {
        "interval_svg": mark_safe(charts.interval_chart(  # noqa: S308 - every label is escaped in charts
            estimate=e.estimate, low=e.low, high=e.high, title="Estimated false-pass rate, 95 % interval")),
        "audit_fields_svg": mark_safe(charts.bar_chart(  # noqa: S308
            summary["by_field"], title="Audit disagreements by field", colours=["bad"] * len(summary["by_field"]))),
        "audit_rules_svg": mark_safe(charts.bar_chart(  # noqa: S308
            [(label, n) for _, label, n in summary["by_rule"]], title="Audit disagreements by rule",
            colours=["warn"] * len(summary["by_rule"]))),
    }


@role_required(*AUDIT_ROLES)
def audit_home(request: HttpRequest) -> HttpResponse:
    batches = selectors.audit_batches().annotate(
        n_audited=Count("audit_samples__items", filter=~Q(audit_samples__items__verdict=AuditItem.Verdict.PENDING)),
        n_disagreed=Count("audit_samples__items", filter=Q(audit_samples__items__verdict=AuditItem.Verdict.DISAGREE)),
    )
    return render(request, "audit/home.html", {"batches": batches})


@role_required(*AUDIT_ROLES)
def audit_batch(request: HttpRequest, batch_id: int) -> HttpResponse:
    batch = get_batch(request, batch_id)
    summary = family_labels(batch, audit_summary(batch=batch))
    samples = list(batch.audit_samples.select_related("created_by").annotate(
        n_pending=Count("items", filter=Q(items__verdict=AuditItem.Verdict.PENDING)),
        n_disagreed=Count("items", filter=Q(items__verdict=AuditItem.Verdict.DISAGREE)),
    ))
    field_samples = list(batch.field_audit_samples.select_related("created_by").annotate(
        n_pending=Count("items", filter=Q(items__verdict=FieldAuditItem.Verdict.PENDING)),
        n_wrong=Count("items", filter=Q(items__verdict=FieldAuditItem.Verdict.WRONG)),
    ))
    context = {
        "batch": batch, "summary": summary, **estimate_charts(summary), "samples": samples,
        "population": len(audit_service.audit_population(batch=batch)), "form": request.GET,
        "field_samples": field_samples,
    }
    return render(request, "audit/batch.html", context)


@require_POST
@role_required(*AUDIT_ROLES)
def audit_sample_create(request: HttpRequest, batch_id: int) -> HttpResponse:
    batch = get_batch(request, batch_id)
    amount = (request.POST.get("amount") or "").strip()
    kind = request.POST.get("kind", "count")
    try:
        wanted = audit_service.sample_request(
            count=amount if kind == "count" else None, percent=amount if kind == "percent" else None,
            seed=request.POST.get("seed"))
        sample = audit_service.audit_sample_draw(batch=batch, user=request.user, request=wanted)
    except audit_service.AuditError as err:
        messages.error(request, str(err))
        query = urlencode({"amount": amount, "kind": kind, "seed": request.POST.get("seed", "")})
        return redirect(f"{reverse('audit_batch', args=[batch.id])}?{query}")
    messages.success(request, f"Drew {sample.size} of {sample.population} passed documents (seed {sample.seed}).")
    return redirect("audit_sample", sample_id=sample.id)


@role_required(*AUDIT_ROLES)
def audit_sample(request: HttpRequest, sample_id: int) -> HttpResponse:
    sample = get_sample(request, sample_id)
    items = list(sample.items.select_related("document", "decided_by").order_by("position", "id"))
    redraw = audit_service.audit_sample_redraw(sample=sample)
    context = {
        "sample": sample, "batch": sample.batch, "items": items,
        "reproducible": redraw == sorted(i.document_id for i in items),
        "next_item": audit_service.next_pending_item(sample=sample),
        "n_pending": sum(1 for i in items if i.verdict == AuditItem.Verdict.PENDING),
    }
    return render(request, "audit/sample.html", context)


@role_required(*AUDIT_ROLES)
def audit_item(request: HttpRequest, sample_id: int, item_id: int, *, error: str = "", status: int = 200
               ) -> HttpResponse:
    item = get_item(request, sample_id, item_id)
    document = item.document
    extraction = item.extraction if item.verdict != AuditItem.Verdict.PENDING and item.extraction_id else (
        Extraction.objects.current_for(document))
    rounds = Round.objects.filter(extraction=extraction).count() if extraction else 0
    items = list(item.sample.items.order_by("position", "id").values_list("id", flat=True))
    index = items.index(item.id)
    violations = selectors.desk_violations(extraction=extraction) if extraction else []
    groups, labels, items_by_path = field_items(document, extraction, violations, can_edit=False)
    pages = selectors.document_pages(document=document)
    page = pages.get(min(pages)) if pages else None
    context = {
        "item": item, "sample": item.sample, "batch": item.sample.batch, "document": document,
        "extraction": extraction, "rounds": rounds, "fields": list(items_by_path.values()),
        "wrong_labels": [labels.of(p) for p in item.wrong_fields or []],
        "page": page, "pages": pages, "page_number": page.number if page else None,
        "ocr_layer": ocr_layer(page) if page else "", "proof_rects": "", "can_edit": False,
        "desk_url": reverse("desk_document", args=[document.id]),
        "can_decide": item.verdict == AuditItem.Verdict.PENDING and document.status == Status.PASSED.value,
        "error": error, "posted": request.POST if error else {},
        "checked": set(request.POST.getlist("fields")) if error else set(),
        "previous_id": items[index - 1] if index > 0 else None,
        "next_id": items[index + 1] if index + 1 < len(items) else None,
        "position": index + 1, "count": len(items),
    }
    return render(request, "audit/item.html", context, status=status)


@require_POST
@role_required(*AUDIT_ROLES)
def audit_item_decide(request: HttpRequest, sample_id: int, item_id: int) -> HttpResponse:
    item = get_item(request, sample_id, item_id)
    verdict = request.POST.get("verdict", "")
    try:
        audit_service.audit_item_decide(item_id=item.id, user=request.user, verdict=verdict,
                                        note=request.POST.get("note", ""),
                                        wrong_fields=request.POST.getlist("fields"))
    except audit_service.AuditError as err:
        return audit_item(request, sample_id, item_id, error=str(err), status=400)
    except AuditItem.DoesNotExist:
        raise Http404("No such audit item.") from None
    if verdict == AuditItem.Verdict.DISAGREE:
        messages.success(request, f"{item.document.filename} is in the reviewers' queue with your note.")
    else:
        messages.success(request, f"You agreed with {item.document.filename}.")
    following = audit_service.next_pending_item(sample=item.sample, after_position=item.position)
    if following is not None:
        return redirect("audit_item", sample_id=sample_id, item_id=following.id)
    return redirect("audit_sample", sample_id=sample_id)
