"""What the document audit (views/audit.py) and the field audit (views/field_audit.py) do alike.

Both find a sample or one of its items (404 otherwise; the roles are checked by the view), draw a sample from
the batch page's form, show an item with its place in the sample and the verdict form's state, and take a
verdict then move on to the next item still to judge. Each audit passes what differs as an AuditFlow.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.contrib import messages
from django.db import models
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.http import urlencode

from extraction.models import Batch, Page
from reviewer.audit.services import AuditError
from reviewer.desk.presenters import ocr_layer
from reviewer.teams.scope import get_for


@dataclass(frozen=True)
class AuditFlow:
    """One audit's models, URL names and services, for the steps both audits share."""

    sample_model: type[models.Model]
    item_model: type[models.Model]
    item_related: tuple[str, ...]  # what the item page and the verdict read of an item
    sample_url: str  # URL names: the sample's page, an item's page
    item_url: str
    missing: str  # the 404 message when the item went away during its verdict
    decide: Callable[..., Any]  # the service that records a verdict: (item_id=, user=, verdict=, note=, ...)
    next_pending: Callable[..., Any]  # the service that finds the next item to judge: (sample=, after_position=)
    said: Callable[[str, Any], str]  # the message after a verdict on an item ("" for none)


def get_sample(request: HttpRequest, flow: AuditFlow, sample_id: int) -> models.Model:
    """The access helper for a sample: 404 when it does not exist or is another team's."""
    return get_for(request, flow.sample_model.objects.select_related("batch", "created_by"), pk=sample_id)


def get_item(request: HttpRequest, flow: AuditFlow, sample_id: int, item_id: int) -> models.Model:
    """The access helper for an item: 404 unless it exists, belongs to that sample and to one's team."""
    return get_for(request, flow.item_model.objects.select_related("sample__batch", *flow.item_related),
                   pk=item_id, sample_id=sample_id)


def draw_sample(request: HttpRequest, flow: AuditFlow, batch: Batch, draw: Callable[[], Any], *, form: dict,
                drew: Callable[[Any], str]) -> HttpResponse:
    """Draw a sample and open it; a refused draw returns to the batch's audit with the error and the form as typed."""
    try:
        sample = draw()
    except AuditError as err:
        messages.error(request, str(err))
        return redirect(f"{reverse('audit_batch', args=[batch.id])}?{urlencode(form)}")
    messages.success(request, drew(sample))
    return redirect(flow.sample_url, sample_id=sample.id)


def sample_context(flow: AuditFlow, sample, *related: str) -> dict[str, Any]:
    """A sample's page: its items in order (with `related`), the next one to judge and how many are pending."""
    items = list(sample.items_in_order(*related))
    return {
        "sample": sample, "batch": sample.batch, "items": items, "next_item": flow.next_pending(sample=sample),
        "n_pending": sum(1 for i in items if i.is_pending),
    }


def item_context(request: HttpRequest, flow: AuditFlow, item, *, page: Page | None, can_decide: bool,
                 error: str) -> dict[str, Any]:
    """An item's page, what both audits show: its sample and document, the page's text layer, the verdict
    form's state (a refused verdict shows its error over what was posted), and the previous and next items."""
    return {
        "item": item, "sample": item.sample, "batch": item.sample.batch, "document": item.document,
        "ocr_layer": ocr_layer(page) if page else "", "can_edit": False,
        "desk_url": reverse("desk_document", args=[item.document_id]), "item_url": flow.item_url,
        "can_decide": can_decide, "error": error, "posted": request.POST if error else {}, **item.place(),
    }


def decide(request: HttpRequest, flow: AuditFlow, sample_id: int, item_id: int, *,
           show: Callable[..., HttpResponse], **given: Any) -> HttpResponse:
    """Record the posted verdict (and `given`) through the audit's service, then open the next item still to
    judge, or the sample when none is left; a refused verdict shows the item again (`show`) with the reason."""
    item = get_item(request, flow, sample_id, item_id)
    verdict = request.POST.get("verdict", "")
    try:
        flow.decide(item_id=item.id, user=request.user, verdict=verdict, note=request.POST.get("note", ""), **given)
    except AuditError as err:
        return show(request, sample_id, item_id, error=str(err), status=400)
    except flow.item_model.DoesNotExist:
        raise Http404(flow.missing) from None
    said = flow.said(verdict, item)
    if said:
        messages.success(request, said)
    following = flow.next_pending(sample=item.sample, after_position=item.position)
    if following is not None:
        return redirect(flow.item_url, sample_id=sample_id, item_id=following.id)
    return redirect(flow.sample_url, sample_id=sample_id)
