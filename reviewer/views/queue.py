from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from extraction import selectors
from extraction.models import Batch
from reviewer.access import role_required
from reviewer.roles import ADMIN, REVIEWER


@role_required(REVIEWER, ADMIN)
def queue(request: HttpRequest) -> HttpResponse:
    batch_id = request.GET.get("batch") or None
    rule = request.GET.get("rule") or None
    documents = selectors.queue_documents(batch_id=int(batch_id) if batch_id and batch_id.isdigit() else None, rule=rule)
    page = Paginator(documents, 50).get_page(request.GET.get("page"))
    context = {"page": page, "batches": Batch.objects.order_by("-created_at")[:100], "batch_id": batch_id, "rule": rule}
    return render(request, "queue/list.html", context)
