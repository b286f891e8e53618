"""Who has a document open on the desk. Each open desk page touches its row while it polls; a row not
touched for a few polls has gone (the tab was closed)."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from reviewer.models import DeskPresence


def presence_window() -> timedelta:
    return timedelta(seconds=settings.DESK_POLL_SECONDS * 3)


def presence_touch(*, document_id: int, user) -> None:
    """This user has the document open now."""
    now = timezone.now()
    if not DeskPresence.objects.filter(document_id=document_id, user=user).update(seen_at=now):
        DeskPresence.objects.get_or_create(document_id=document_id, user=user, defaults={"seen_at": now})


def presence_leave(*, document_id: int, user) -> None:
    DeskPresence.objects.filter(document_id=document_id, user=user).delete()


def presence_others(*, document_id: int, user) -> list[str]:
    """The usernames of the others who have the document open, by name."""
    since = timezone.now() - presence_window()
    return list(DeskPresence.objects.filter(document_id=document_id, seen_at__gte=since).exclude(user=user)
                .order_by("user__username").values_list("user__username", flat=True))
