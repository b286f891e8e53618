"""The API's reads that the desk and the batch pages have no equivalent of."""

from __future__ import annotations

from django.db.models import DateTimeField, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce, Greatest

from extraction.models import Document, ReviewEvent
from reviewer.api.models import ApiToken


def tokens_of(*, user) -> list[ApiToken]:
    return list(ApiToken.objects.filter(user=user).select_related("team").order_by("revoked_at", "-created_at", "-id"))


def documents_listed(*, teams: list[int], status: str | None = None, review_status: str | None = None,
                     batch_id: int | None = None, doctype: str | None = None, updated_since=None, after_id: int | None = None
                     ) -> QuerySet[Document]:
    """Documents in id order (the cursor is the last id seen), with `updated_at`: the later of the last state
    change and the last review event (an edit changes no state)."""
    last_event = (ReviewEvent.objects.filter(document=OuterRef("pk")).order_by("-created_at")
                  .values("created_at")[:1])
    qs = Document.objects.filter(batch__trial=False, batch__team__in=teams).select_related("batch").annotate(
        updated_at=Greatest("status_changed_at", Coalesce(Subquery(last_event, output_field=DateTimeField()),
                                                          "status_changed_at")))
    if status:
        qs = qs.filter(status=status)
    if review_status:
        qs = qs.filter(review_status=review_status)
    if batch_id is not None:
        qs = qs.filter(batch_id=batch_id)
    if doctype:
        qs = qs.filter(batch__doctype=doctype)
    if updated_since is not None:
        qs = qs.filter(updated_at__gte=updated_since)
    if after_id is not None:
        qs = qs.filter(pk__gt=after_id)
    return qs.order_by("pk")
