"""Field-level audits: draw a sample of a batch's passed fields stratified by field kind, judge each field on
the page beside its proof, read each kind's wrong rate with its interval and the wrong fields it implies."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_POST

from extraction import selectors
from reviewer.access import role_required
from reviewer.models import FieldAuditItem, FieldAuditSample
from reviewer.presenters.desk import field_items, labels_for, ocr_layer, stage_context
from reviewer.presenters.figures import rate_with_interval
from reviewer.selectors_audit import field_audit_strata
from reviewer.services import audit as audit_service
from reviewer.services import field_audit
from reviewer.views.audit import AUDIT_ROLES
from reviewer.views.batches import get_batch
from reviewer.views.confidence import WIDTHS, interval_width


def get_field_sample(request: HttpRequest, sample_id: int) -> FieldAuditSample:
    """The access helper for a field sample: 404 when it does not exist (roles are checked by the view)."""
    return get_object_or_404(FieldAuditSample.objects.select_related("batch", "created_by"), pk=sample_id)


def get_field_item(request: HttpRequest, sample_id: int, item_id: int) -> FieldAuditItem:
    """The access helper for a sampled field: 404 unless it exists and belongs to that sample."""
    return get_object_or_404(
        FieldAuditItem.objects.select_related("sample__batch", "document", "extraction", "decided_by"),
        pk=item_id, sample_id=sample_id)


@require_POST
@role_required(*AUDIT_ROLES)
def field_sample_create(request: HttpRequest, batch_id: int) -> HttpResponse:
    batch = get_batch(request, batch_id)
    per, seed = request.POST.get("per_stratum", ""), request.POST.get("seed", "")
    try:
        sample = field_audit.field_audit_draw(batch=batch, user=request.user, per_stratum=per, seed=seed)
    except audit_service.AuditError as err:
        messages.error(request, str(err))
        query = urlencode({"per_stratum": per, "field_seed": seed})
        return redirect(f"{reverse('audit_batch', args=[batch.id])}?{query}")
    messages.success(request, f"Drew {sample.size} fields, up to {sample.per_stratum} of each of "
                              f"{len(sample.population)} kinds (seed {sample.seed}).")
    return redirect("field_sample", sample_id=sample.id)


@role_required(*AUDIT_ROLES)
def field_sample(request: HttpRequest, sample_id: int) -> HttpResponse:
    sample = get_field_sample(request, sample_id)
    width = interval_width(request.GET.get("width"))
    items = list(sample.items.select_related("document", "extraction", "decided_by").order_by("position", "id"))
    labels = labels_for(items[0].extraction if items else None)
    strata = field_audit_strata(sample=sample, width=width)
    for s in strata:
        s["label"] = labels.of_family(s["kind"])
        s["rate_text"] = rate_with_interval(s["rate"], s.get("low"), s.get("high"))
    by_extraction: dict[int, object] = {}  # each answer's labels, built once
    for item in items:
        if item.extraction_id not in by_extraction:
            by_extraction[item.extraction_id] = labels_for(item.extraction)
        item.label = by_extraction[item.extraction_id].of(item.path)
    context = {
        "sample": sample, "batch": sample.batch, "items": items, "strata": strata, "width": width, "widths": WIDTHS,
        "next_item": field_audit.field_audit_next(sample=sample),
        "n_pending": sum(1 for i in items if i.verdict == FieldAuditItem.Verdict.PENDING),
    }
    return render(request, "audit/field_sample.html", context)


@role_required(*AUDIT_ROLES)
def field_item(request: HttpRequest, sample_id: int, item_id: int, *, error: str = "", status: int = 200
               ) -> HttpResponse:
    """One sampled field beside the page, its proof boxed, and the verdict."""
    item = get_field_item(request, sample_id, item_id)
    document, extraction = item.document, item.extraction
    violations = selectors.desk_violations(extraction=extraction)
    _, _, shown = field_items(document, extraction, violations, can_edit=False, only=item.path)
    field = shown.get(item.path)
    pages = selectors.document_pages(document=document)
    stage = stage_context(pages=pages, chosen=[field] if field else [], page_number=None)
    order = list(item.sample.items.order_by("position", "id").values_list("id", flat=True))
    index = order.index(item.id)
    context = {
        "item": item, "sample": item.sample, "batch": item.sample.batch, "document": document,
        "extraction": extraction, "field": field, **stage,
        "ocr_layer": ocr_layer(stage["page"]) if stage["page"] else "",
        "selected_field": field, "selected_path": item.path if field else "", "can_edit": False,
        "desk_url": reverse("desk_document", args=[document.id]),
        "can_decide": item.verdict == FieldAuditItem.Verdict.PENDING,
        "error": error, "posted": request.POST if error else {},
        "previous_id": order[index - 1] if index > 0 else None,
        "next_id": order[index + 1] if index + 1 < len(order) else None, "position": index + 1, "count": len(order),
    }
    return render(request, "audit/field_item.html", context, status=status)


@require_POST
@role_required(*AUDIT_ROLES)
def field_item_decide(request: HttpRequest, sample_id: int, item_id: int) -> HttpResponse:
    item = get_field_item(request, sample_id, item_id)
    verdict = request.POST.get("verdict", "")
    try:
        field_audit.field_audit_decide(item_id=item.id, user=request.user, verdict=verdict,
                                       note=request.POST.get("note", ""))
    except audit_service.AuditError as err:
        return field_item(request, sample_id, item_id, error=str(err), status=400)
    except FieldAuditItem.DoesNotExist:
        raise Http404("No such sampled field.") from None
    if verdict == FieldAuditItem.Verdict.WRONG:
        messages.success(request, f"Marked wrong; {item.document.filename} goes to the reviewers if it was passed.")
    following = field_audit.field_audit_next(sample=item.sample, after_position=item.position)
    if following is not None:
        return redirect("field_item", sample_id=sample_id, item_id=following.id)
    return redirect("field_sample", sample_id=sample_id)
