"""Supervisor audit: random samples of a batch's passed documents, a verdict on each, the false-pass estimate."""

from __future__ import annotations

from django.db.models import Count, Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_POST

from extraction.doctypes.base import FieldLabels
from extraction.models import Extraction, Round
from extraction.states import Status
from reviewer import charts
from reviewer.access import role_required
from reviewer.audit import common as audit_common
from reviewer.audit import services as audit_service
from reviewer.audit.selectors import audit_summary
from reviewer.batches.views import get_batch
from reviewer.desk import selectors
from reviewer.desk.fields import field_items, labels_for
from reviewer.models import AuditItem, AuditSample, FieldAuditItem
from reviewer.roles import ADMIN, SUPERVISOR
from reviewer.teams.scope import request_team_ids

AUDIT_ROLES = (SUPERVISOR, ADMIN)


def _said(verdict: str, item: AuditItem) -> str:
    if verdict == AuditItem.Verdict.DISAGREE:
        return f"{item.document.filename} is in the reviewers' queue with your note."
    return f"You agreed with {item.document.filename}."


DOCUMENTS = audit_common.AuditFlow(
    sample_model=AuditSample, item_model=AuditItem, item_related=("sample__batch", "document", "decided_by"),
    sample_url="audit_sample", item_url="audit_item", missing="No such audit item.",
    decide=audit_service.audit_item_decide, next_pending=audit_service.next_pending_item, said=_said,
)


def family_labels(batch, summary: dict) -> dict:
    """Name the field families of the audit summary ('rows[].votes') for people, from one answer of the
    batch: 'Votes by party · votes'."""
    answer = (Extraction.objects.filter(document__batch=batch).exclude(answer=None).values_list("answer", "doctype")
              .first())
    labels = labels_for(Extraction(answer=answer[0], doctype=answer[1])) if answer else FieldLabels()
    named = [(labels.of_family(family), n) for family, n in summary["by_field"]]
    return {**summary, "by_field": named}


def estimate_charts(summary: dict) -> dict:
    """The estimate's SVGs (built from escaped text by reviewer.charts, so safe to insert)."""
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
    batches = selectors.audit_batches(teams=request_team_ids(request)).annotate(
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
    kind, seed = request.POST.get("kind", "count"), request.POST.get("seed")

    def draw() -> AuditSample:
        wanted = audit_service.sample_request(count=amount if kind == "count" else None,
                                              percent=amount if kind == "percent" else None, seed=seed)
        return audit_service.audit_sample_draw(batch=batch, user=request.user, request=wanted)

    return audit_common.draw_sample(
        request, DOCUMENTS, batch, draw, form={"amount": amount, "kind": kind, "seed": seed or ""},
        drew=lambda sample: f"Drew {sample.size} of {sample.population} passed documents (seed {sample.seed}).")


@role_required(*AUDIT_ROLES)
def audit_sample(request: HttpRequest, sample_id: int) -> HttpResponse:
    sample = audit_common.get_sample(request, DOCUMENTS, sample_id)
    context = audit_common.sample_context(DOCUMENTS, sample, "document", "decided_by")
    redraw = audit_service.audit_sample_redraw(sample=sample)
    context["reproducible"] = redraw == sorted(i.document_id for i in context["items"])
    return render(request, "audit/sample.html", context)


@role_required(*AUDIT_ROLES)
def audit_item(request: HttpRequest, sample_id: int, item_id: int, *, error: str = "", status: int = 200
               ) -> HttpResponse:
    item = audit_common.get_item(request, DOCUMENTS, sample_id, item_id)
    document = item.document
    extraction = item.extraction if not item.is_pending and item.extraction_id else (
        Extraction.objects.current_for(document))
    rounds = Round.objects.filter(extraction=extraction).count() if extraction else 0
    violations = selectors.desk_violations(extraction=extraction) if extraction else []
    _, labels, items_by_path = field_items(document, extraction, violations, can_edit=False)
    pages = selectors.document_pages(document=document)
    page = pages.get(min(pages)) if pages else None
    context = {
        **audit_common.item_context(request, DOCUMENTS, item, page=page, error=error,
                                    can_decide=item.is_pending and document.status == Status.PASSED.value),
        "extraction": extraction, "rounds": rounds, "fields": list(items_by_path.values()),
        "wrong_labels": [labels.of(p) for p in item.wrong_fields or []],
        "page": page, "pages": pages, "page_number": page.number if page else None, "proof_rects": "",
        "checked": set(request.POST.getlist("fields")) if error else set(),
    }
    return render(request, "audit/item.html", context, status=status)


@require_POST
@role_required(*AUDIT_ROLES)
def audit_item_decide(request: HttpRequest, sample_id: int, item_id: int) -> HttpResponse:
    return audit_common.decide(request, DOCUMENTS, sample_id, item_id, show=audit_item,
                               wrong_fields=request.POST.getlist("fields"))
