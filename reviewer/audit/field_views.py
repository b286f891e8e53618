"""Field-level audits: draw a sample of a batch's passed fields stratified by field kind, judge each field on
the page beside its proof, read each kind's wrong rate with its interval and the wrong fields it implies."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_POST

from reviewer.access import role_required
from reviewer.audit import common as audit_common
from reviewer.audit import field_audit
from reviewer.audit.selectors import field_audit_strata
from reviewer.audit.views import AUDIT_ROLES
from reviewer.batches.views import get_batch
from reviewer.confidence.views import WIDTHS, interval_width
from reviewer.desk import selectors
from reviewer.desk.fields import field_items, labels_for
from reviewer.desk.presenters import stage_context
from reviewer.figures import rate_with_interval
from reviewer.models import FieldAuditItem, FieldAuditSample


def _said(verdict: str, item: FieldAuditItem) -> str:
    if verdict == FieldAuditItem.Verdict.WRONG:
        return f"Marked wrong; {item.document.filename} goes to the reviewers if it was passed."
    return ""


FIELDS = audit_common.AuditFlow(
    sample_model=FieldAuditSample, item_model=FieldAuditItem,
    item_related=("sample__batch", "document", "extraction", "decided_by"),
    sample_url="field_sample", item_url="field_item", missing="No such sampled field.",
    decide=field_audit.field_audit_decide, next_pending=field_audit.field_audit_next, said=_said,
)


@require_POST
@role_required(*AUDIT_ROLES)
def field_sample_create(request: HttpRequest, batch_id: int) -> HttpResponse:
    batch = get_batch(request, batch_id)
    per, seed = request.POST.get("per_stratum", ""), request.POST.get("seed", "")
    return audit_common.draw_sample(
        request, FIELDS, batch,
        lambda: field_audit.field_audit_draw(batch=batch, user=request.user, per_stratum=per, seed=seed),
        form={"per_stratum": per, "field_seed": seed},
        drew=lambda sample: f"Drew {sample.size} fields, up to {sample.per_stratum} of each of "
                            f"{len(sample.population)} kinds (seed {sample.seed}).")


@role_required(*AUDIT_ROLES)
def field_sample(request: HttpRequest, sample_id: int) -> HttpResponse:
    sample = audit_common.get_sample(request, FIELDS, sample_id)
    width = interval_width(request.GET.get("width"))
    context = audit_common.sample_context(FIELDS, sample, "document", "extraction", "decided_by")
    items = context["items"]
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
    context.update(strata=strata, width=width, widths=WIDTHS)
    return render(request, "audit/field_sample.html", context)


@role_required(*AUDIT_ROLES)
def field_item(request: HttpRequest, sample_id: int, item_id: int, *, error: str = "", status: int = 200
               ) -> HttpResponse:
    """One sampled field beside the page, its proof boxed, and the verdict."""
    item = audit_common.get_item(request, FIELDS, sample_id, item_id)
    document, extraction = item.document, item.extraction
    violations = selectors.desk_violations(extraction=extraction)
    _, _, shown = field_items(document, extraction, violations, can_edit=False, only=item.path)
    field = shown.get(item.path)
    pages = selectors.document_pages(document=document)
    stage = stage_context(pages=pages, chosen=[field] if field else [], page_number=None)
    context = {
        **audit_common.item_context(request, FIELDS, item, page=stage["page"], can_decide=item.is_pending,
                                    error=error),
        "extraction": extraction, "field": field, **stage,
        "selected_field": field, "selected_path": item.path if field else "",
    }
    return render(request, "audit/field_item.html", context, status=status)


@require_POST
@role_required(*AUDIT_ROLES)
def field_item_decide(request: HttpRequest, sample_id: int, item_id: int) -> HttpResponse:
    return audit_common.decide(request, FIELDS, sample_id, item_id, show=field_item)
