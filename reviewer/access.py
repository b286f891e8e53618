"""Server-side role checks: every view goes through one of these, never only a template."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse

from extraction import selectors
from extraction.models import Document
from extraction.states import ReviewStatus, Status
from reviewer.roles import ADMIN, REVIEWER, ROLES, SUPERVISOR
from reviewer.services import review

DESK_ROLES = (REVIEWER, SUPERVISOR, ADMIN)
WORK_ROLES = (REVIEWER, ADMIN)  # who corrects, verifies and rejects
SEND_BACK_ROLES = (SUPERVISOR, ADMIN)


def user_roles(user) -> frozenset[str]:
    if not user.is_authenticated or not user.is_active:
        return frozenset()
    if user.is_superuser:
        return frozenset(ROLES)
    cached = getattr(user, "_proofdesk_roles", None)  # set by the backend that read the user (auth_backend)
    if cached is None:
        cached = frozenset(user.groups.filter(name__in=ROLES).values_list("name", flat=True))
        user._proofdesk_roles = cached
    return cached


def has_role(user, *roles: str) -> bool:
    return bool(user_roles(user) & set(roles))


def require_role(user, *roles: str) -> None:
    if not has_role(user, *roles):
        raise PermissionDenied("Your role does not allow this page.")


def role_required(*roles: str) -> Callable:
    """Login first (redirect), then the role (403)."""

    def decorator(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @login_required
        @wraps(view)
        def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            require_role(request.user, *roles)
            return view(request, *args, **kwargs)

        return wrapped

    return decorator


def roles_context(request: HttpRequest) -> dict:
    roles = user_roles(request.user) if hasattr(request, "user") else frozenset()
    return {
        "roles": roles,
        "is_admin": ADMIN in roles,
        "is_reviewer": REVIEWER in roles,
        "is_supervisor": SUPERVISOR in roles,
    }


def desk_permissions(*, user, document: Document) -> dict[str, Any]:
    """What this user may do with the document on the desk, and in words why not (`read_only_reason`)."""
    live = review.claim_is_live(document)
    held_by_other = live and document.claimed_by_id != user.pk
    open_ = review.is_open_for_review(document)
    works = has_role(user, *WORK_ROLES)
    decided = document.status == Status.FLAGGED.value and document.review_status != ReviewStatus.UNREVIEWED.value
    last_decision = selectors.last_decision(document=document) if decided else None
    if not open_:
        if document.status == Status.PASSED.value:
            reason = "Passed its rules: read-only unless a supervisor sends it back."
        elif decided:
            who = last_decision.user.get_username() if last_decision and last_decision.user else "a reviewer"
            reason = f"{document.review_status.capitalize()} by {who}: read-only unless a supervisor sends it back."
        else:
            reason = f"This document is {document.status}."
    elif not works:
        reason = "Read-only for supervisors."
    elif held_by_other:
        reason = f"{document.claimed_by.get_username()} is working on this document: read-only for you."
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
        "decision": last_decision,
    }


def require_work_role(user) -> None:
    """Correcting a value is reviewers' work (supervisors read the desk)."""
    if not has_role(user, *WORK_ROLES):
        raise PermissionDenied("Only reviewers correct values.")


def desk_stale_notice(*, user, document: Document, seen_version: int | None, held: str) -> str:
    """Why an open desk page is out of date, in words ("" when it is not): someone else changed the
    document since the page's `seen_version`, or someone else claimed it since the page saw the claim `held`."""
    if seen_version is not None and seen_version != document.version:
        last = selectors.last_event(document=document)
        if last is None or last.user_id != user.pk:
            who = last.user.get_username() if last and last.user else "someone"
            return f"{who} changed this document after you opened it. Reload it to see their changes."
    if review.claim_is_live(document) and document.claimed_by_id != user.pk and held != str(document.claimed_by_id):
        return f"{document.claimed_by.get_username()} is working on this document now: it is read-only for you."
    return ""
