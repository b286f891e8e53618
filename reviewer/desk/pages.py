"""Page images, never public media: streamed from storage after the login and role checks."""

from __future__ import annotations

from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404

from extraction.models import Extraction, Page, Violation
from extraction.proofs.annotate import annotate_png
from extraction.rules.involved import involved_paths
from reviewer.access import DESK_ROLES, role_required
from reviewer.desk import selectors
from reviewer.desk.views import get_document
from reviewer.whole_numbers import whole_number


def get_page(request: HttpRequest, document_id: int, number: int) -> Page:
    """The access helper for a page: 404 when the document or the page does not exist."""
    document = get_document(request, document_id)
    return get_object_or_404(Page.objects.select_related("document"), document=document, number=number)


@role_required(*DESK_ROLES)
def page_image(request: HttpRequest, document_id: int, number: int) -> HttpResponse:
    page = get_page(request, document_id, number)
    if request.GET.get("preview") and page.preview:  # a thumbnail
        response = FileResponse(page.preview.open("rb"), content_type="image/jpeg")
        response["Cache-Control"] = "private, max-age=3600"
        return response
    if not page.image:
        raise Http404("This page has no image.")
    response = FileResponse(page.image.open("rb"), content_type="image/png")
    response["Cache-Control"] = "private, max-age=3600"  # the browser keeps it; shared caches never do
    return response


@role_required(*DESK_ROLES)
def page_annotated(request: HttpRequest, document_id: int, number: int) -> HttpResponse:
    """The page image with the selected proof boxes drawn on it, as a download (?field=path or ?violation=id)."""
    page = get_page(request, document_id, number)
    extraction = Extraction.objects.current_for(page.document)
    boxes = []
    if extraction is not None:
        path, violation_id = request.GET.get("field"), request.GET.get("violation", "")
        fields = selectors.desk_fields(extraction=extraction)
        if path:
            chosen = [fields[path]] if path in fields else []
        elif (wanted := whole_number(violation_id)) is not None:
            violation = Violation.objects.filter(extraction=extraction, pk=wanted).first()
            chosen = [fields[p] for p in involved_paths(violation.fields if violation else [], fields)]
        else:
            chosen = list(fields.values())
        boxes = [pr["bbox"] for fv in chosen for pr in fv.proofs or []
                 if int(pr.get("page") or 1) == page.number and pr.get("bbox")]
    with page.image.open("rb") as fh:
        png = annotate_png(fh.read(), boxes)
    response = HttpResponse(png, content_type="image/png")
    name = f"document-{page.document_id}-page-{page.number}-proofs.png"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    response["Cache-Control"] = "private, no-store"
    return response
