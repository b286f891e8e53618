"""The review desk: triage and fields on the left, the page with its proof boxes on the right.

A field click highlights its proof in the browser (the boxes are on the field's link); the server is asked
for another page, for an edit, for a value taken from the page, and for who else is here.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_POST

from extraction import selectors
from extraction.doctypes.base import label_of
from extraction.involved import involved_paths
from extraction.models import Document, Extraction, Page
from extraction.services import review
from reviewer.access import has_role, role_required
from reviewer.services import presence
from reviewer.views.desk_panes import (
    DESK_ROLES,
    SEND_BACK_ROLES,
    WORK_ROLES,
    boxes_attr,
    display_status,
    fid,
    field_items,
    labels_for,
    least_sure,
    ocr_layer,
    permissions,
    proof_rects,
    triage,
)

__all__ = ["DESK_ROLES", "SEND_BACK_ROLES", "WORK_ROLES", "fid", "get_document"]


def get_document(request: HttpRequest, document_id: int) -> Document:
    """The access helper for a document on the desk: 404 when it does not exist (roles are checked by the view)."""
    try:
        return selectors.document_for_desk(document_id=document_id)
    except Document.DoesNotExist:
        raise Http404("No such document.") from None


def _version(request: HttpRequest) -> int | None:
    raw = request.POST.get("version") or request.GET.get("version") or ""
    return int(raw) if raw.isdigit() else None


def _int(value: str | None) -> int | None:
    return int(value) if value and value.isdigit() else None


# --- building the panes ------------------------------------------------------------------------------


def _selection(extraction: Extraction | None, violations: list, items: dict[str, dict], *, path: str | None,
               violation_id: str | None) -> tuple[list[dict], Any, str | None]:
    """The fields whose proofs are highlighted: one field, or every field a rule involves."""
    if violation_id and violation_id.isdigit():
        violation = next((v for v in violations if v.id == int(violation_id)), None)
        if violation is not None:
            return [items[p] for p in involved_paths(violation.fields, items)], violation, None
    if path and path in items:
        return [items[path]], None, path
    return [], None, None


def _stage_context(document: Document, pages: dict[int, Page], chosen: list[dict], page_number: int | None
                   ) -> dict[str, Any]:
    """The page to show (the first page of the selection's proofs unless asked) and its layers."""
    proof_pages = sorted({n for it in chosen for n in it["proof_pages"]})
    if page_number not in pages:
        page_number = proof_pages[0] if proof_pages else (min(pages) if pages else None)
    page = pages.get(page_number) if page_number else None
    return {
        "page": page, "pages": pages, "page_number": page_number, "proof_pages": proof_pages,
        "ocr_layer": ocr_layer(page) if page else "", "proof_rects": proof_rects(page, chosen) if page else "",
    }


def _desk_context(request: HttpRequest, document: Document, *, field: str | None = None,
                  violation: str | None = None, page: int | None = None, with_page: bool = False,
                  **kwargs) -> dict[str, Any]:
    """Everything the desk shows; the page pane (its pages and blocks) only for the whole page."""
    extraction = Extraction.objects.current_for(document)
    violations = selectors.desk_violations(extraction=extraction) if extraction else []
    perms = permissions(request.user, document)
    groups, labels, items = field_items(document, extraction, violations, can_edit=perms["can_edit"])
    chosen, selected_violation, selected_path = _selection(extraction, violations, items, path=field,
                                                           violation_id=violation)
    pill_class, pill_text = display_status(document)
    selected = items.get(selected_path) if selected_path else None
    stage = _stage_context(document, selectors.document_pages(document=document), chosen, page) if with_page else {}
    return {
        "document": document, "extraction": extraction, "violations": violations, "groups": groups,
        "triage": triage(violations, labels, items), "least_sure": least_sure(items), "labels": labels,
        **perms, **stage,
        "selected_field": selected, "selected_path": selected_path, "selected_violation": selected_violation,
        "pill_class": pill_class, "pill_text": pill_text, "desk_url": reverse("desk_document", args=[document.id]),
        "poll_seconds": settings.DESK_POLL_SECONDS,
        "editing": kwargs.get("editing"), "edit_error": kwargs.get("edit_error"), "edit_raw": kwargs.get("edit_raw"),
        "focus_path": kwargs.get("focus") or field, "decision_error": kwargs.get("decision_error"),
        "note": kwargs.get("note", ""), "show_note": kwargs.get("show_note", False),
        "others": presence.presence_others(document_id=document.id, user=request.user) if with_page else [],
        "held": document.claimed_by_id if review.claim_is_live(document) else "",
    }


def _field_context(request: HttpRequest, document: Document, path: str) -> dict[str, Any]:
    """What one field's cell or edit form needs, without building the whole desk."""
    extraction = Extraction.objects.current_for(document)
    violations = selectors.desk_violations(extraction=extraction) if extraction else []
    perms = permissions(request.user, document)
    _, _, items = field_items(document, extraction, violations, can_edit=perms["can_edit"], only=path)
    return {"document": document, "item": items.get(path), **perms,
            "desk_url": reverse("desk_document", args=[document.id])}


def _find_item(groups: list[dict], path: str) -> dict | None:
    for g in groups:
        for f in g["fields"]:
            if f["path"] == path:
                return f
        for row in g["rows"]:
            for f in row["cells"]:
                if f["path"] == path:
                    return f
    return None


def _fields_response(request: HttpRequest, document: Document, *, notice: str = "", **kwargs) -> HttpResponse:
    """The fields pane, with the triage and the status bar swapped out of band (fresh data)."""
    ctx = _desk_context(request, document, **kwargs)
    oob = {**ctx, "oob": True, "notice": notice}
    parts = [render_to_string("desk/document.html#fields", ctx, request=request),
             render_to_string("desk/document.html#violations", oob, request=request),
             render_to_string("desk/document.html#status", oob, request=request)]
    response = HttpResponse("".join(parts))
    # Whatever element asked (a cell's pencil, the edit form, the page), the fields pane is what comes back.
    response["HX-Retarget"] = "#fields"
    response["HX-Reswap"] = "outerHTML"
    return response


# --- views -------------------------------------------------------------------------------------------


@role_required(*DESK_ROLES)
def document_desk(request: HttpRequest, document_id: int) -> HttpResponse:
    document = get_document(request, document_id)
    presence.presence_touch(document_id=document.id, user=request.user)
    ctx = _desk_context(request, document, field=request.GET.get("field"), violation=request.GET.get("violation"),
                        page=_int(request.GET.get("page")), editing=request.GET.get("edit"),
                        focus=request.GET.get("edit"), with_page=True)
    if ctx["editing"] and not ctx["can_edit"]:
        ctx["editing"] = None
    return render(request, "desk/document.html", ctx)


@role_required(*DESK_ROLES)
def document_proof(request: HttpRequest, document_id: int) -> HttpResponse:
    """Another page of the document, with the selection's proof boxes (the browser draws the rest)."""
    document = get_document(request, document_id)
    path, violation, page = request.GET.get("field"), request.GET.get("violation"), _int(request.GET.get("page"))
    if not request.htmx:
        query = {k: v for k, v in (("field", path), ("violation", violation), ("page", page)) if v}
        return redirect(f"{reverse('desk_document', args=[document.id])}?{urlencode(query)}")
    pages = selectors.document_pages(document=document)
    chosen = []
    if path:
        extraction = Extraction.objects.current_for(document)
        fv = selectors.field_value(extraction=extraction, path=path) if extraction else None
        if fv is not None:
            chosen = [{"path": path, "boxes": boxes_attr(fv.proofs),
                       "proof_pages": sorted({int(p.get("page") or 1) for p in fv.proofs or []})}]
    ctx = {"document": document, **_stage_context(document, pages, chosen, page)}
    return render(request, "desk/page_pane.html#stage", ctx)


@role_required(*DESK_ROLES)
def document_presence(request: HttpRequest, document_id: int) -> HttpResponse:
    """Polled by an open desk: who else is here, and whether someone changed the document meanwhile."""
    document = get_document(request, document_id)
    presence.presence_touch(document_id=document.id, user=request.user)
    seen = _version(request)
    stale = ""
    if seen is not None and seen != document.version:
        last = selectors.last_event(document=document)
        if last is None or last.user_id != request.user.pk:
            who = last.user.get_username() if last and last.user else "someone"
            stale = f"{who} changed this document after you opened it. Reload it to see their changes."
    if not stale and review.claim_is_live(document) and document.claimed_by_id != request.user.pk \
            and request.GET.get("held") != str(document.claimed_by_id):
        stale = f"{document.claimed_by.get_username()} is working on this document now: it is read-only for you."
    ctx = {"document": document, "others": presence.presence_others(document_id=document.id, user=request.user),
           "stale": stale, "poll_seconds": settings.DESK_POLL_SECONDS,
           "held": request.GET.get("held", "")}
    return render(request, "desk/document.html#presence", ctx)


@role_required(*DESK_ROLES)
def field_edit(request: HttpRequest, document_id: int) -> HttpResponse:
    document = get_document(request, document_id)
    path = request.POST.get("field") or request.GET.get("field") or ""
    desk_url = reverse("desk_document", args=[document.id])
    if request.method != "POST":
        if not request.htmx:
            return redirect(f"{desk_url}?{urlencode({'edit': path})}")
        ctx = _field_context(request, document, path)
        item = ctx["item"]
        if item is not None and request.GET.get("cancel"):
            return render(request, "desk/document.html#field", {**ctx, "f": item, "editing": None})
        if item is None or not ctx["can_edit"]:
            # The page was stale (someone claimed or decided the document): the whole pane, told why.
            return _fields_response(request, document, focus=path, notice=ctx["read_only_reason"])
        return render(request, "desk/document.html#edit_form",
                      {**ctx, "f": item, "version": _version(request) or document.version})
    if not has_role(request.user, *WORK_ROLES):
        raise PermissionDenied("Only reviewers correct values.")
    version = _version(request)
    raw = request.POST.get("value", "")
    try:
        if version is None:
            raise review.StaleVersion("The form did not say which version you edited; reload the document.")
        review.field_edit(document_id=document.id, user=request.user, path=path, raw_value=raw,
                          expected_version=version)
    except review.ReviewError as err:
        return _edit_failed(request, document_id, path, err, raw=raw, version=version)
    document = get_document(request, document_id)
    if not request.htmx:
        return redirect(f"{desk_url}?{urlencode({'field': path})}")
    return _fields_response(request, document, field=path, focus=path)


def _edit_failed(request: HttpRequest, document_id: int, path: str, err: review.ReviewError, *, raw: str = "",
                 version: int | None = None) -> HttpResponse:
    document = get_document(request, document_id)
    desk_url = reverse("desk_document", args=[document.id])
    if not request.htmx:
        messages.error(request, str(err))
        return redirect(f"{desk_url}?{urlencode({'edit': path})}")
    if isinstance(err, review.StaleVersion | review.ClaimedByOther | review.NotEditable):
        return _fields_response(request, document, focus=path, notice=str(err))
    ctx = _desk_context(request, document, editing=path)
    item = _find_item(ctx["groups"], path)
    if item is None:  # a field the form never offered: say so where the decisions are shown
        return _decision_failed(request, document_id, err)
    response = render(request, "desk/document.html#edit_form",
                      {**ctx, "f": item, "edit_error": str(err), "edit_raw": raw, "version": version or 0})
    response["HX-Retarget"] = f"#{fid(path)}"
    response["HX-Reswap"] = "outerHTML"
    return response


@require_POST
@role_required(*WORK_ROLES)
def field_take(request: HttpRequest, document_id: int) -> HttpResponse:
    """A value (and its proof) taken from blocks the reviewer picked on the page."""
    document = get_document(request, document_id)
    path = request.POST.get("field", "")
    ids = [part for part in request.POST.get("blocks", "").split(",") if part.strip().isdigit()]
    try:
        version = _version(request)
        if version is None:
            raise review.StaleVersion("The page did not say which version you saw; reload the document.")
        review.field_take_from_page(document_id=document.id, user=request.user, path=path, block_ids=ids,
                                    expected_version=version, proof_only=request.POST.get("mode") == "proof")
    except review.ReviewError as err:
        if not request.htmx:
            messages.error(request, str(err))
            return redirect(f"{reverse('desk_document', args=[document.id])}?{urlencode({'field': path})}")
        return _fields_response(request, get_document(request, document_id), field=path, focus=path,
                                notice=str(err))
    if not request.htmx:
        return redirect(f"{reverse('desk_document', args=[document.id])}?{urlencode({'field': path})}")
    return _fields_response(request, get_document(request, document_id), field=path, focus=path)


def _decision_failed(request: HttpRequest, document_id: int, err: review.ReviewError, *, note: str = ""
                     ) -> HttpResponse:
    document = get_document(request, document_id)
    if not request.htmx:
        messages.error(request, str(err))
        return redirect("desk_document", document_id=document_id)
    ctx = _desk_context(request, document, decision_error=str(err), note=note,
                        show_note=isinstance(err, review.NoteRequired))
    response = render(request, "desk/document.html#status", ctx)
    response["HX-Retarget"] = "#desk-status"
    response["HX-Reswap"] = "outerHTML"
    return response


def _done(request: HttpRequest, url: str) -> HttpResponse:
    if request.htmx:
        response = HttpResponse(status=204)
        response["HX-Redirect"] = url
        return response
    return redirect(url)


def _next_url(request: HttpRequest) -> str:
    """Claim the next document of the queue for this reviewer; the queue when none is left."""
    following = review.document_next(user=request.user)
    if following is None:
        messages.info(request, "Nothing left to review.")
        return reverse("queue")
    return reverse("desk_document", args=[following.id])


@require_POST
@role_required(*WORK_ROLES)
def document_verify(request: HttpRequest, document_id: int) -> HttpResponse:
    """Accept the values and open the next document of the queue (one key: v)."""
    document = get_document(request, document_id)
    note = request.POST.get("note", "")
    try:
        outcome = review.document_verify(document_id=document.id, user=request.user,
                                         expected_version=_version(request) or -1, note=note)
    except review.ReviewError as err:
        return _decision_failed(request, document.id, err, note=note)
    presence.presence_leave(document_id=document.id, user=request.user)
    messages.success(request, f"{document.filename}: {outcome}.")
    return _done(request, _next_url(request))


@require_POST
@role_required(*WORK_ROLES)
def document_reject(request: HttpRequest, document_id: int) -> HttpResponse:
    document = get_document(request, document_id)
    reason = request.POST.get("reason", "")
    try:
        review.document_reject(document_id=document.id, user=request.user,
                               expected_version=_version(request) or -1, reason=reason)
    except review.ReviewError as err:
        return _decision_failed(request, document.id, err)
    presence.presence_leave(document_id=document.id, user=request.user)
    messages.success(request, f"{document.filename}: rejected.")
    return _done(request, _next_url(request))


@require_POST
@role_required(*WORK_ROLES)
def document_claim(request: HttpRequest, document_id: int) -> HttpResponse:
    document = get_document(request, document_id)
    try:
        review.document_claim(document_id=document.id, user=request.user)
    except review.ReviewError as err:
        messages.error(request, str(err))
        return _done(request, request.POST.get("back") == "queue" and reverse("queue")
                     or reverse("desk_document", args=[document.id]))
    return _done(request, reverse("desk_document", args=[document.id]))


@require_POST
@role_required(*WORK_ROLES)
def document_release(request: HttpRequest, document_id: int) -> HttpResponse:
    document = get_document(request, document_id)
    if review.document_release(document_id=document.id, user=request.user):
        messages.info(request, f"You released {document.filename}.")
    return _done(request, reverse("queue"))


@require_POST
@role_required(*SEND_BACK_ROLES)
def document_send_back(request: HttpRequest, document_id: int) -> HttpResponse:
    document = get_document(request, document_id)
    try:
        review.document_send_back(document_id=document.id, user=request.user, reason=request.POST.get("reason", ""))
    except review.ReviewError as err:
        return _decision_failed(request, document.id, err)
    messages.success(request, f"{document.filename} is back in the reviewers' queue.")
    return _done(request, reverse("desk_document", args=[document.id]))


@role_required(*DESK_ROLES)
def document_history(request: HttpRequest, document_id: int) -> HttpResponse:
    document = get_document(request, document_id)
    history = selectors.document_history(document=document)
    labels = labels_for(history["extractions"][0] if history["extractions"] else None)
    for e in history["extractions"]:
        for r in e.round_list:
            r.changes = [(label_of(labels, path), path, before, after) for path, before, after in r.changes]
    for ev in history["events"]:
        ev.field_label = label_of(labels, ev.field) if ev.field else ""
    ctx = {"document": document, **history, "pill": display_status(document)}
    return render(request, "desk/history.html", ctx)
