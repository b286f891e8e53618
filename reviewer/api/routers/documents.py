"""Documents: the list (filters, cursor pages), one document's result, its page images."""

from __future__ import annotations

import base64
import binascii
from datetime import datetime

from django.http import HttpRequest
from ninja import Query, Router, Schema
from pydantic import Field

from extraction.models import Document
from extraction.states import ReviewStatus, Status
from reviewer.access import DESK_ROLES
from reviewer.api.auth import Roles
from reviewer.api.errors import ApiProblem
from reviewer.api.presenters import document_out
from reviewer.api.routers.common import PROBLEMS
from reviewer.api.schemas import DocumentOut, DocumentPage
from reviewer.api.selectors import documents_listed
from reviewer.desk import pages, selectors
from reviewer.teams.scope import get_for, request_team_ids
from reviewer.whole_numbers import whole_number

router = Router(tags=["documents"])
PAGE_MAX = 200


class DocumentFilters(Schema):
    status: Status | None = Field(None, description="queued, processing, passed, flagged or failed.")
    review_status: ReviewStatus | None = None
    batch: int | None = Field(None, description="A batch's id.")
    doctype: str | None = Field(None, description="A document type's name.")
    updated_since: datetime | None = Field(None, description="Changed (state or review) at or after this time.")
    cursor: str | None = Field(None, description="`next_cursor` of the previous page.")
    limit: int = Field(50, ge=1, le=PAGE_MAX)


def cursor_encode(last_id: int) -> str:
    return base64.urlsafe_b64encode(f"d{last_id}".encode()).decode().rstrip("=")


def cursor_decode(cursor: str) -> int:
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        text = ""
    if not text.startswith("d") or whole_number(text[1:]) is None:
        raise ApiProblem(422, "This cursor is not one the API gave: pass `next_cursor` as it came.", field="cursor")
    return int(text[1:])


def get_document(request: HttpRequest, document_id: int) -> Document:
    """The access helper for a document: 404 when there is none in the token's team, 403 when its role there is
    not the operation's."""
    return get_for(request, selectors.documents_for_desk(), pk=document_id)


@router.get("", auth=Roles(*DESK_ROLES), url_name="document_list",
            summary="List documents", response={200: DocumentPage, **PROBLEMS})
def document_list(request: HttpRequest, filters: Query[DocumentFilters]):
    """Documents in a stable order, `limit` at a time; follow `next_cursor` until it is null."""
    after = cursor_decode(filters.cursor) if filters.cursor else None
    rows = list(documents_listed(teams=request_team_ids(request), status=filters.status,
                                 review_status=filters.review_status, batch_id=filters.batch,
                                 doctype=filters.doctype, updated_since=filters.updated_since,
                                 after_id=after)[:filters.limit + 1])
    more = len(rows) > filters.limit
    rows = rows[:filters.limit]
    items = [{"id": d.id, "batch_id": d.batch_id, "doctype": d.batch.doctype, "filename": d.filename,
              "status": d.status, "review_status": d.review_status, "version": d.version, "updated_at": d.updated_at}
             for d in rows]
    return {"items": items, "next_cursor": cursor_encode(rows[-1].id) if more else None}


@router.get("/{document_id}", auth=Roles(*DESK_ROLES), url_name="document_detail",
            summary="Get a document's result", response={200: DocumentOut, **PROBLEMS})
def document_detail(request: HttpRequest, document_id: int):
    """A document's result: its state and the run's stop reason, rounds and cost; every field with its value,
    label, confidence and proofs; the broken rules in people's words with the fields they involve; its pages."""
    return document_out(get_document(request, document_id))


@router.get("/{document_id}/pages/{number}/image", auth=Roles(*DESK_ROLES), url_name="page_image",
            summary="Get a page image", response={200: None, **PROBLEMS})
def page_image(request: HttpRequest, document_id: int, number: int, preview: bool = False):
    """The page image (image/png; a JPEG thumbnail with `preview`): the desk's own view."""
    return pages.page_image(request, document_id=document_id, number=number)


@router.get("/{document_id}/pages/{number}/annotated", auth=Roles(*DESK_ROLES), url_name="page_annotated",
            summary="Get a page with its proof boxes", response={200: None, **PROBLEMS})
def page_annotated(request: HttpRequest, document_id: int, number: int, field: str | None = None,
                   violation: int | None = None):
    """The page (image/png) with proof boxes drawn: a field's (`field`), a broken rule's (`violation`, its
    id), or every field's. The desk's own download."""
    return pages.page_annotated(request, document_id=document_id, number=number)
