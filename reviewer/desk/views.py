"""The review desk: triage and fields on the left, the page with its proof boxes on the right.

A field click highlights its proof in the browser (the boxes are on the field's link); the server is asked
for another page, for an edit, for a value taken from the page, and for who else is here.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseClientRedirect, reswap, retarget

from extraction.models import Document
from reviewer.access import (
    DESK_ROLES,
    SEND_BACK_ROLES,
    WORK_ROLES,
    require_work_role,
    role_required,
)
from reviewer.desk import presence, selectors
from reviewer.desk import services as review
from reviewer.desk.permissions import desk_stale_notice
from reviewer.desk.presenters import (
    chosen_field,
    desk_context,
    edit_context,
    fid,
    field_context,
    find_item,
    history_context,
    stage_context,
)
from reviewer.teams.scope import get_for
from reviewer.whole_numbers import whole_number


def get_document(request: HttpRequest, document_id: int) -> Document:
    """The access helper for a document on the desk: 404 when it does not exist or is another team's, 403 when
    one's role in its team is not the view's."""
    return get_for(request, selectors.documents_for_desk(), pk=document_id)


def _version(request: HttpRequest) -> int | None:
    raw = request.POST.get("version") or request.GET.get("version") or ""
    return whole_number(raw)


def _fields_response(request: HttpRequest, document: Document, *, field: str | None = None,
                     focus: str | None = None, notice: str = "", edited: review.EditResult | None = None
                     ) -> HttpResponse:
    """The fields pane, with the triage and the status bar swapped out of band (fresh data; after an edit,
    the document and extraction as the edit left them)."""
    if edited is not None and edited.document is not None:
        document = edited.document
    ctx = desk_context(user=request.user, document=document, field=field, focus=focus,
                       current=edited.extraction if edited is not None else None,
                       fields=edited.fields if edited is not None else None,
                       stored=edited.stored if edited is not None else None)
    oob = {**ctx, "oob": True, "notice": notice}
    parts = [render_to_string("desk/document.html#fields", ctx, request=request),
             render_to_string("desk/document.html#violations", oob, request=request),
             render_to_string("desk/document.html#status", oob, request=request)]
    response = HttpResponse("".join(parts))
    # Whatever element asked (a cell's pencil, the edit form, the page), the fields pane is what comes back.
    return reswap(retarget(response, "#fields"), "outerHTML")


def _edited_response(request: HttpRequest, edited: review.EditResult, *, path: str) -> HttpResponse:
    """After an edit: the edited cell, out of band every other cell whose value, rules or notes changed, the
    triage and the status bar; the whole fields pane when the pane changed shape. A desk of a hundred fields
    re-renders the few an edit touched, not all of them."""
    ctx = edit_context(user=request.user, edited=edited, path=path)
    if ctx is None:
        return _fields_response(request, edited.document, field=path, focus=path, edited=edited)
    response = render(request, "desk/document.html#edited", ctx)
    return reswap(retarget(response, f"#{fid(path)}"), "outerHTML")


# --- views -------------------------------------------------------------------------------------------


@role_required(*DESK_ROLES)
def document_desk(request: HttpRequest, document_id: int) -> HttpResponse:
    document = get_document(request, document_id)
    presence.presence_touch(document_id=document.id, user=request.user)
    ctx = desk_context(user=request.user, document=document, field=request.GET.get("field"),
                       violation=request.GET.get("violation"), page=whole_number(request.GET.get("page")),
                       editing=request.GET.get("edit"), focus=request.GET.get("edit"), with_page=True)
    if ctx["editing"] and not ctx["can_edit"]:
        ctx["editing"] = None
    return render(request, "desk/document.html", ctx)


@role_required(*DESK_ROLES)
def document_proof(request: HttpRequest, document_id: int) -> HttpResponse:
    """Another page of the document, with the selection's proof boxes (the browser draws the rest)."""
    document = get_document(request, document_id)
    path, violation, page = request.GET.get("field"), request.GET.get("violation"), whole_number(request.GET.get("page"))
    if not request.htmx:
        query = {k: v for k, v in (("field", path), ("violation", violation), ("page", page)) if v}
        return redirect(f"{reverse('desk_document', args=[document.id])}?{urlencode(query)}")
    ctx = {"document": document, **stage_context(pages=selectors.document_pages(document=document),
                                                 chosen=chosen_field(document=document, path=path), page_number=page)}
    return render(request, "desk/page_pane.html#stage", ctx)


@role_required(*DESK_ROLES)
def document_presence(request: HttpRequest, document_id: int) -> HttpResponse:
    """Polled by an open desk: who else is here, and whether someone changed the document meanwhile."""
    document = get_document(request, document_id)
    presence.presence_touch(document_id=document.id, user=request.user)
    stale = desk_stale_notice(user=request.user, document=document, seen_version=_version(request),
                              held=request.GET.get("held") or "")
    ctx = {"document": document, "others": presence.presence_others(document_id=document.id, user=request.user),
           "stale": stale, "poll_seconds": settings.DESK_POLL_SECONDS,
           "held": request.GET.get("held", "")}
    return render(request, "desk/document.html#presence", ctx)


@role_required(*DESK_ROLES)
def field_edit(request: HttpRequest, document_id: int) -> HttpResponse:
    path = request.POST.get("field") or request.GET.get("field") or ""
    desk_url = reverse("desk_document", args=[document_id])
    if request.method != "POST":
        document = get_document(request, document_id)
        if not request.htmx:
            return redirect(f"{desk_url}?{urlencode({'edit': path})}")
        ctx = field_context(user=request.user, document=document, path=path)
        item = ctx["item"]
        if item is not None and request.GET.get("cancel"):
            return render(request, "desk/document.html#field", {**ctx, "f": item, "editing": None})
        if item is None or not ctx["can_edit"]:
            # The page was stale (someone claimed or decided the document): the whole pane, told why.
            return _fields_response(request, document, focus=path, notice=ctx["read_only_reason"])
        return render(request, "desk/document.html#edit_form",
                      {**ctx, "f": item, "version": _version(request) or document.version})
    require_work_role(request.user)
    version = _version(request)
    raw = request.POST.get("value", "")
    try:
        if version is None:
            raise review.StaleVersion("The form did not say which version you edited; reload the document.")
        # No read of the document first: the edit's guarded update finds it, or says why not (404 if none).
        edited = _or_404(review.field_edit, document_id=document_id, user=request.user, path=path, raw_value=raw,
                         expected_version=version, only_if_changed=True)
    except review.Unchanged:
        return _unchanged_response(request, document_id, path)
    except review.ReviewError as err:
        return _edit_failed(request, document_id, path, err, raw=raw, version=version)
    if not request.htmx:
        return redirect(f"{desk_url}?{urlencode({'field': path})}")
    return _edited_response(request, edited, path=path)


def _unchanged_response(request: HttpRequest, document_id: int, path: str) -> HttpResponse:
    """An edit or take that would change nothing wrote nothing: the field's cell as it is (an open edit box
    closes), focus back on it."""
    desk_url = reverse("desk_document", args=[document_id])
    if not request.htmx:
        return redirect(f"{desk_url}?{urlencode({'field': path})}")
    document = get_document(request, document_id)
    ctx = field_context(user=request.user, document=document, path=path)
    if ctx["item"] is None:
        return _fields_response(request, document, focus=path)
    response = render(request, "desk/document.html#field", {**ctx, "f": ctx["item"], "editing": None})
    return reswap(retarget(response, f"#{fid(path)}"), "outerHTML")


def _or_404(service, **kwargs):
    """A desk write by document id: a document that does not exist, or is another team's (the service's guarded
    update holds only one's own), is a 404, as `get_document` says."""
    try:
        return service(**kwargs)
    except Document.DoesNotExist:
        raise Http404("No such document.") from None


def _edit_failed(request: HttpRequest, document_id: int, path: str, err: review.ReviewError, *, raw: str = "",
                 version: int | None = None) -> HttpResponse:
    document = get_document(request, document_id)
    desk_url = reverse("desk_document", args=[document.id])
    if not request.htmx:
        messages.error(request, str(err))
        return redirect(f"{desk_url}?{urlencode({'edit': path})}")
    if isinstance(err, review.StaleVersion | review.ClaimedByOther | review.NotEditable):
        return _fields_response(request, document, focus=path, notice=str(err))
    ctx = desk_context(user=request.user, document=document, editing=path)
    item = find_item(ctx["groups"], path)
    if item is None:  # a field the form never offered: say so where the decisions are shown
        return _decision_failed(request, document_id, err)
    response = render(request, "desk/document.html#edit_form",
                      {**ctx, "f": item, "edit_error": str(err), "edit_raw": raw, "version": version or 0})
    return reswap(retarget(response, f"#{fid(path)}"), "outerHTML")


@require_POST
@role_required(*WORK_ROLES)
def field_take(request: HttpRequest, document_id: int) -> HttpResponse:
    """A value (and its proof) taken from blocks the reviewer picked on the page."""
    path = request.POST.get("field", "")
    ids = [part for part in request.POST.get("blocks", "").split(",") if whole_number(part) is not None]
    desk_url = reverse("desk_document", args=[document_id])
    try:
        version = _version(request)
        if version is None:
            raise review.StaleVersion("The page did not say which version you saw; reload the document.")
        edited = _or_404(review.field_take_from_page, document_id=document_id, user=request.user, path=path,
                         block_ids=ids, expected_version=version, proof_only=request.POST.get("mode") == "proof",
                         only_if_changed=True)
    except review.Unchanged:
        return _unchanged_response(request, document_id, path)
    except review.ReviewError as err:
        if not request.htmx:
            messages.error(request, str(err))
            return redirect(f"{desk_url}?{urlencode({'field': path})}")
        return _fields_response(request, get_document(request, document_id), field=path, focus=path,
                                notice=str(err))
    if not request.htmx:
        return redirect(f"{desk_url}?{urlencode({'field': path})}")
    return _edited_response(request, edited, path=path)


def _decision_failed(request: HttpRequest, document_id: int, err: review.ReviewError, *, note: str = ""
                     ) -> HttpResponse:
    document = get_document(request, document_id)
    if not request.htmx:
        messages.error(request, str(err))
        return redirect("desk_document", document_id=document_id)
    ctx = desk_context(user=request.user, document=document, decision_error=str(err), note=note,
                       show_note=isinstance(err, review.NoteRequired))
    response = render(request, "desk/document.html#status", ctx)
    return reswap(retarget(response, "#desk-status"), "outerHTML")


def _done(request: HttpRequest, url: str) -> HttpResponse:
    if request.htmx:
        return HttpResponseClientRedirect(url)
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
    return render(request, "desk/history.html", history_context(document=document))
