"""Review, for reviewers (and admins, as on the desk): claim, correct a field, verify, reject.

The desk's own services (reviewer/desk/services.py) do the writes, with the desk's guards: the version the
client read (a stale one is refused), the claim (another's is refused; through the API a write needs the
caller's own claim first), the fields the type lets a reviewer correct, and the value checks."""

from __future__ import annotations

from django.http import Http404, HttpRequest
from ninja import Router

from extraction.models import Document
from reviewer.access import WORK_ROLES
from reviewer.api.auth import Roles
from reviewer.api.errors import ApiProblem
from reviewer.api.presenters import document_out
from reviewer.api.routers.common import PROBLEMS
from reviewer.api.routers.documents import get_document
from reviewer.api.schemas import DecisionOut, DocumentOut, EditIn, Problem, RejectIn, VerifyIn
from reviewer.desk import services as review

router = Router(tags=["review"])
RESPONSES = {409: Problem, **PROBLEMS}


def _decision(document: Document) -> dict:
    return {"id": document.id, "status": document.status, "review_status": document.review_status,
            "version": document.version}


def _problem(err: review.ReviewError, *, path: str = "", note_field: str = "note") -> ApiProblem:
    """A refusal of the desk's services as a problem, with the request's field at fault."""
    if isinstance(err, review.StaleVersion):
        return ApiProblem(409, str(err), field="version")
    if isinstance(err, review.InvalidValue):
        # the type refuses the field itself (not a value read from the page), or the value for it
        return ApiProblem(422, str(err), field="field" if str(err).startswith(repr(path)) else "value")
    if isinstance(err, review.NoteRequired):
        return ApiProblem(422, str(err), field=note_field)
    return ApiProblem(409, str(err))  # claimed by another, not open for review, changed meanwhile


def _hold_required(*, request: HttpRequest, document_id: int) -> None:
    """A write through the API needs the caller's own live claim (POST .../claim first)."""
    document = get_document(request, document_id)
    if not (review.claim_is_live(document) and document.claimed_by_id == request.user.pk):
        if review.claim_is_live(document):
            raise ApiProblem(409, f"{document.claimed_by.get_username()} is working on this document.")
        raise ApiProblem(409, "Claim the document first (POST /api/v1/documents/{id}/claim).")


def _call(service, **kwargs):
    """A write by document id: the service's guarded update holds only a document of the token's team (else
    DoesNotExist: a 404)."""
    try:
        return service(**kwargs)
    except Document.DoesNotExist:
        raise Http404("No such document.") from None


@router.post("/{document_id}/claim", auth=Roles(*WORK_ROLES), url_name="document_claim",
             summary="Claim a document for review", response={200: DecisionOut, **RESPONSES})
def document_claim(request: HttpRequest, document_id: int):
    """Take the document for yourself (or renew your claim) for CLAIM_TTL_MINUTES."""
    try:
        document = _call(review.document_claim, document_id=document_id, user=request.user)
    except review.ReviewError as err:
        raise _problem(err) from None
    return _decision(document)


@router.post("/{document_id}/release", auth=Roles(*WORK_ROLES), url_name="document_release",
             summary="Release a claimed document", response={200: DecisionOut, **RESPONSES})
def document_release(request: HttpRequest, document_id: int):
    _call(review.document_release, document_id=document_id, user=request.user)
    return _decision(get_document(request, document_id))


@router.post("/{document_id}/fields", auth=Roles(*WORK_ROLES), url_name="field_edit",
             summary="Correct a field", response={200: DocumentOut, **RESPONSES})
def field_edit(request: HttpRequest, document_id: int, data: EditIn):
    """Correct one field; every rule runs again at once. The answer is the document's result after it (a value
    a reviewer already set, sent again, changes nothing)."""
    _hold_required(request=request, document_id=document_id)
    try:
        _call(review.field_edit, document_id=document_id, user=request.user, path=data.field, raw_value=data.value,
              expected_version=data.version, only_if_changed=True)
    except review.Unchanged:
        pass  # the value a reviewer set, typed again: nothing written, as on the desk
    except review.ReviewError as err:
        raise _problem(err, path=data.field) from None
    return document_out(get_document(request, document_id))


def _decide(request: HttpRequest, document_id: int, service, *, note_field: str, **given) -> dict:
    """A decision (verify, reject) on the caller's own claim, refused as a problem naming `note_field`."""
    _hold_required(request=request, document_id=document_id)
    try:
        _call(service, document_id=document_id, user=request.user, **given)
    except review.ReviewError as err:
        raise _problem(err, note_field=note_field) from None
    return _decision(get_document(request, document_id))


@router.post("/{document_id}/verify", auth=Roles(*WORK_ROLES), url_name="document_verify",
             summary="Verify a document", response={200: DecisionOut, **RESPONSES})
def document_verify(request: HttpRequest, document_id: int, data: VerifyIn):
    """Accept the values (corrected when a field was changed); `note` is required while rules fail."""
    return _decide(request, document_id, review.document_verify, note_field="note", expected_version=data.version,
                   note=data.note)


@router.post("/{document_id}/reject", auth=Roles(*WORK_ROLES), url_name="document_reject",
             summary="Reject a document", response={200: DecisionOut, **RESPONSES})
def document_reject(request: HttpRequest, document_id: int, data: RejectIn):
    """The document cannot be trusted: rejected, with the reason."""
    return _decide(request, document_id, review.document_reject, note_field="reason", expected_version=data.version,
                   reason=data.reason)
