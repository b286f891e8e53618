"""What a person may do with a document on the desk, and why an open desk page is out of date."""

from __future__ import annotations

from typing import Any

from extraction.models import Document
from extraction.states import ReviewStatus, Status
from reviewer.access import SEND_BACK_ROLES, WORK_ROLES, has_role
from reviewer.desk import selectors
from reviewer.desk import services as review


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
