"""Document types: the list, and one type with its fields, labels, rules and versions (admins, as the
Types page)."""

from __future__ import annotations

from django.http import Http404, HttpRequest
from ninja import Router

from extraction.doctypes.registry import UnknownDocumentType, all_doctypes, get_doctype
from extraction.doctypes.selectors import doctype_live_versions, doctype_versions
from reviewer.api.auth import Roles
from reviewer.api.errors import ApiProblem
from reviewer.api.presenters import doctype_detail, doctype_summary
from reviewer.api.routers.common import PROBLEMS
from reviewer.api.schemas import DocTypeOut, DocTypeSummary
from reviewer.roles import ADMIN
from reviewer.teams.scope import defined_type_team, request_team_ids

router = Router(tags=["document types"])


@router.get("", auth=Roles(ADMIN), url_name="doctype_list",
            summary="List document types", response={200: list[DocTypeSummary], **PROBLEMS})
def doctype_list(request: HttpRequest):
    defined = [{"name": v.name, "label": v.label, "source": "defined", "version": v.version}
               for v in doctype_live_versions(teams=request_team_ids(request))]
    return [*(doctype_summary(d) for d in all_doctypes()), *defined]


@router.get("/{name}", auth=Roles(ADMIN), url_name="doctype_detail",
            summary="Get a document type", response={200: DocTypeOut, **PROBLEMS})
def doctype_detail_get(request: HttpRequest, name: str, version: int | None = None):
    """A type (a defined one at `version`, the live one by default) with its fields and their labels."""
    try:
        defined_type_team(request, name, shared_too=True)  # another team's type (not shared) is none of the caller's
        doctype = get_doctype(name, version)
    except (UnknownDocumentType, Http404):
        raise ApiProblem(404, f"There is no document type {name!r}" + (f" at version {version}." if version else "."),
                         field="version" if version else None) from None
    return doctype_detail(doctype, doctype_versions(name=name) if doctype.version is not None else [])
