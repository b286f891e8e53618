"""The review desk: fields on the left, the page with its proof boxes on the right; corrections re-run the rules."""

from __future__ import annotations

import re
from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_POST

from extraction import selectors
from extraction.doctypes.registry import UnknownDocumentType, get_doctype
from extraction.models import Document, Extraction, Page
from extraction.services import review
from extraction.states import ReviewStatus, Status
from reviewer.access import has_role, role_required
from reviewer.roles import ADMIN, REVIEWER, SUPERVISOR

DESK_ROLES = (REVIEWER, SUPERVISOR, ADMIN)
WORK_ROLES = (REVIEWER, ADMIN)  # who corrects, verifies and rejects
SEND_BACK_ROLES = (SUPERVISOR, ADMIN)


def get_document(request: HttpRequest, document_id: int) -> Document:
    """The access helper for a document on the desk: 404 when it does not exist (roles are checked by the view)."""
    try:
        return selectors.document_for_desk(document_id=document_id)
    except Document.DoesNotExist:
        raise Http404("No such document.") from None


def _version(request: HttpRequest) -> int | None:
    raw = request.POST.get("version") or request.GET.get("version") or ""
    return int(raw) if raw.isdigit() else None


def fid(path: str) -> str:
    """An HTML id for a field path ('rows[3].votes' -> 'f-rows-3-votes')."""
    return "f-" + re.sub(r"[^A-Za-z0-9]+", "-", path).strip("-")


def _permissions(request: HttpRequest, document: Document) -> dict[str, Any]:
    user = request.user
    live = review.claim_is_live(document)
    held_by_other = live and document.claimed_by_id != user.pk
    open_ = review.is_open_for_review(document)
    works = has_role(user, *WORK_ROLES)
    decided = document.status == Status.FLAGGED.value and document.review_status != ReviewStatus.UNREVIEWED.value
    if not open_:
        if document.status == Status.PASSED.value:
            reason = "Passed its rules: read-only unless a supervisor sends it back."
        elif decided:
            reason = f"Already {document.review_status}: read-only."
        else:
            reason = f"This document is {document.status}."
    elif not works:
        reason = "Read-only for supervisors."
    elif held_by_other:
        reason = f"{document.claimed_by.get_username()} is working on this document."
    else:
        reason = ""
    return {
        "can_edit": open_ and works and not held_by_other,
        "can_claim": open_ and works and not (live and document.claimed_by_id == user.pk) and not held_by_other,
        "holds_claim": live and document.claimed_by_id == user.pk,
        "held_by_other": held_by_other,
        "claim_until": review.claim_expires_at(document) if live else None,
        "can_send_back": has_role(user, *SEND_BACK_ROLES) and (document.status == Status.PASSED.value or decided),
        "read_only_reason": reason,
        "works_queue": works,
    }


# --- building the panes ------------------------------------------------------------------------------


def _field_items(document: Document, extraction: Extraction | None, violations: list) -> list[dict[str, Any]]:
    """The schema's groups, each field joined with its FieldValue and the rules that involve it."""
    if extraction is None or not extraction.answer:
        return []
    try:
        doctype = get_doctype(extraction.doctype or document.batch.doctype)
    except UnknownDocumentType:
        return []
    fields = selectors.desk_fields(extraction=extraction)
    rules_of: dict[str, list] = {}
    for v in violations:
        for path in v.fields or []:
            rules_of.setdefault(path, []).append(v)
    # A rule naming a list ("rows") involves each of its fields.
    def rules_for(path: str) -> list:
        out = list(rules_of.get(path, []))
        head = path.split("[", 1)[0].split(".", 1)[0]
        if head != path:
            out += [v for v in rules_of.get(head, []) if v not in out]
        return out

    groups = []
    for group in doctype.field_groups(extraction.answer):
        def item(fi, group=group):
            fv = fields.get(fi.path)
            rules = rules_for(fi.path)
            codes = {v.code for v in rules}
            return {
                "path": fi.path, "id": fid(fi.path), "label": fi.label, "value": fi.value,
                "fv": fv, "rules": rules, "rule_labels": sorted({v.label for v in rules}),
                "confidence": round(fv.confidence * 100) if fv and fv.confidence is not None else None,
                "no_proof": fi.value is not None and (fv is None or not fv.proofs),
                "ungrounded": "value_grounded" in codes,
                "corrected": bool(fv and fv.corrected),
            }

        groups.append({
            "name": group.name, "is_table": group.is_table, "columns": group.columns,
            "fields": [item(fi) for fi in group.fields] if not group.is_table else [],
            "rows": [{"label": label, "cells": [item(fi) for fi in row]}
                     for label, row in zip(group.row_labels, group.rows, strict=False)],
        })
    return groups


def _proofs_for(extraction: Extraction | None, *, path: str | None, violation) -> tuple[list[dict], dict | None]:
    """The proofs to highlight: one field's, or every proof of every field a rule involves."""
    if extraction is None:
        return [], None
    if violation is not None:
        paths = list(violation.fields or [])
        fvs = selectors.desk_fields(extraction=extraction)
        heads = [p for p in paths if p not in fvs]  # a rule naming a list involves each of its fields
        chosen = [fv for p, fv in fvs.items() if p in paths or any(p.startswith(h + "[") for h in heads)]
        proofs = [{**pr, "path": fv.path} for fv in sorted(chosen, key=lambda f: f.position) for pr in fv.proofs or []]
        return proofs, None
    fv = selectors.field_value(extraction=extraction, path=path) if path else None
    if fv is None:
        return [], None
    return [{**pr, "path": fv.path} for pr in fv.proofs or []], {"fv": fv}


def _page_context(document: Document, extraction: Extraction | None, *, path: str | None, violation_id: str | None,
                  page_number: int | None, pages: dict[int, Page] | None = None) -> dict[str, Any]:
    violation = None
    if violation_id and violation_id.isdigit() and extraction is not None:
        violation = next((v for v in selectors.desk_violations(extraction=extraction) if v.id == int(violation_id)),
                         None)
    proofs, single = _proofs_for(extraction, path=path, violation=violation)
    pages = pages if pages is not None else selectors.document_pages(document=document)
    proof_pages = sorted({int(p.get("page") or 1) for p in proofs})
    if page_number not in pages:
        page_number = proof_pages[0] if proof_pages else (min(pages) if pages else None)
    page = pages.get(page_number) if page_number else None
    boxes = []
    for p in proofs:
        if int(p.get("page") or 1) != page_number or not p.get("bbox"):
            continue
        b = p["bbox"]
        boxes.append({
            "left": b["left"] * 100, "top": b["top"] * 100, "width": b["width"] * 100, "height": b["height"] * 100,
            "bbox": b, "text": p.get("text", ""), "path": p["path"], "method": p.get("method", ""),
            "block_id": p.get("block_id", ""),
        })
    position = proof_pages.index(page_number) if page_number in proof_pages else None
    step_prev = proof_pages[position - 1] if position is not None and position > 0 else None
    step_next = proof_pages[position + 1] if position is not None and position + 1 < len(proof_pages) else None
    notes = []
    fv = single["fv"] if single else None
    if fv is not None:
        if fv.value is not None and not fv.proofs:
            notes.append(("bad", "No proof: this value was not found anywhere on the page."))
        if fv.corrected:
            notes.append(("info", f"Corrected by a reviewer; the model said {fv.model_value!r}."))
        ungrounded = [v for v in selectors.desk_violations(extraction=extraction)
                      if v.code == "value_grounded" and fv.path in (v.fields or [])]
        for v in ungrounded:
            notes.append(("bad", f"Ungrounded: the cited text reads {v.found!r}, which does not show {fv.value!r}."))
    elif violation is not None and not proofs:
        notes.append(("bad", "None of the fields this rule involves has a proof on the page."))
    selection = {}
    if path:
        selection["field"] = path
    if violation is not None:
        selection["violation"] = violation.id
    return {
        "document": document, "page": page, "pages": pages, "page_number": page_number, "boxes": boxes,
        "proof_pages": proof_pages, "step_prev": step_prev, "step_next": step_next, "selected_field": fv,
        "selected_path": path if fv is not None else None, "selected_violation": violation, "notes": notes,
        "selection_query": urlencode(selection), "has_selection": bool(selection),
        "desk_url": reverse("desk_document", args=[document.id]),
    }


def _desk_context(request: HttpRequest, document: Document, **kwargs) -> dict[str, Any]:
    extraction = selectors.desk_extraction(document=document)
    violations = selectors.desk_violations(extraction=extraction) if extraction else []
    pages = selectors.document_pages(document=document)
    ctx = {
        "document": document, "extraction": extraction, "violations": violations,
        "groups": _field_items(document, extraction, violations),
        **_permissions(request, document),
        **_page_context(document, extraction, path=kwargs.get("field"), violation_id=kwargs.get("violation"),
                        page_number=kwargs.get("page"), pages=pages),
        "editing": kwargs.get("editing"), "edit_error": kwargs.get("edit_error"), "edit_raw": kwargs.get("edit_raw"),
        "focus_path": kwargs.get("focus"), "decision_error": kwargs.get("decision_error"),
        "note": kwargs.get("note", ""), "show_note": kwargs.get("show_note", False),
    }
    return ctx


def _int(value: str | None) -> int | None:
    return int(value) if value and value.isdigit() else None


# --- views -------------------------------------------------------------------------------------------


@role_required(*DESK_ROLES)
def document_desk(request: HttpRequest, document_id: int) -> HttpResponse:
    document = get_document(request, document_id)
    ctx = _desk_context(request, document, field=request.GET.get("field"), violation=request.GET.get("violation"),
                        page=_int(request.GET.get("page")), editing=request.GET.get("edit"),
                        focus=request.GET.get("field") or request.GET.get("edit"))
    if ctx["editing"] and not ctx["can_edit"]:
        ctx["editing"] = None
    return render(request, "desk/document.html", ctx)


@role_required(*DESK_ROLES)
def document_proof(request: HttpRequest, document_id: int) -> HttpResponse:
    """The field-click response: the page of the proof with every proof box highlighted."""
    document = get_document(request, document_id)
    path, violation, page = request.GET.get("field"), request.GET.get("violation"), _int(request.GET.get("page"))
    if not request.htmx:
        query = {k: v for k, v in (("field", path), ("violation", violation), ("page", page)) if v}
        return redirect(f"{reverse('desk_document', args=[document.id])}?{urlencode(query)}")
    extraction = selectors.desk_extraction(document=document)
    ctx = _page_context(document, extraction, path=path, violation_id=violation, page_number=page)
    return render(request, "desk/document.html#page", ctx)


def _fields_response(request: HttpRequest, document: Document, **kwargs) -> HttpResponse:
    """The fields pane, with the violation list and the status bar swapped out of band (fresh data)."""
    ctx = _desk_context(request, document, **kwargs)
    parts = [render_to_string("desk/document.html#fields", ctx, request=request)]
    oob = {**ctx, "oob": True}
    parts.append(render_to_string("desk/document.html#violations", oob, request=request))
    parts.append(render_to_string("desk/document.html#status", oob, request=request))
    return HttpResponse("".join(parts))


@role_required(*DESK_ROLES)
def field_edit(request: HttpRequest, document_id: int) -> HttpResponse:
    document = get_document(request, document_id)
    path = request.POST.get("field") or request.GET.get("field") or ""
    desk_url = reverse("desk_document", args=[document.id])
    if request.method != "POST":
        if not request.htmx:
            return redirect(f"{desk_url}?{urlencode({'edit': path})}")
        ctx = _desk_context(request, document, editing=path)
        item = _find_item(ctx["groups"], path)
        if item is None or not ctx["can_edit"]:
            return _fields_response(request, document, focus=path)
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
        document = get_document(request, document_id)
        if not request.htmx:
            messages.error(request, str(err))
            return redirect(f"{desk_url}?{urlencode({'edit': path})}")
        ctx = _desk_context(request, document, editing=path)
        item = _find_item(ctx["groups"], path)
        if item is None:  # a field the form never offered: say so where the decisions are shown
            return _decision_failed(request, document_id, err)
        response = render(request, "desk/document.html#edit_form",
                          {**ctx, "f": item, "edit_error": str(err), "edit_raw": raw, "version": version or 0,
                           "stale": isinstance(err, review.StaleVersion | review.ClaimedByOther)})
        response["HX-Retarget"] = f"#{fid(path)}"
        response["HX-Reswap"] = "outerHTML"
        return response
    document = get_document(request, document_id)
    if not request.htmx:
        return redirect(f"{desk_url}?{urlencode({'field': path})}")
    return _fields_response(request, document, focus=path)


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


def _decision_failed(
    request: HttpRequest, document_id: int, err: review.ReviewError, *, note: str = ""
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


@require_POST
@role_required(*WORK_ROLES)
def document_verify(request: HttpRequest, document_id: int) -> HttpResponse:
    document = get_document(request, document_id)
    note = request.POST.get("note", "")
    try:
        outcome = review.document_verify(document_id=document.id, user=request.user,
                                         expected_version=_version(request) or -1, note=note)
    except review.ReviewError as err:
        return _decision_failed(request, document.id, err, note=note)
    messages.success(request, f"{document.filename}: {outcome}. Press n for the next document.")
    return _done(request, reverse("desk_document", args=[document.id]))


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
    messages.success(request, f"{document.filename}: rejected. Press n for the next document.")
    return _done(request, reverse("desk_document", args=[document.id]))


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
    ctx = {"document": document, **selectors.document_history(document=document)}
    return render(request, "desk/history.html", ctx)
