"""Reads for the webhook pages, each in a bounded number of queries."""

from __future__ import annotations

from django.db.models import Count, Prefetch, Q

from reviewer.webhooks.models import Attempt, Delivery, Endpoint

RECENT = 50  # deliveries shown on an endpoint's page


def endpoints_with_counts(*, teams: list[int]) -> list[Endpoint]:
    return list(Endpoint.objects.filter(team__in=teams).annotate(
        pending=Count("deliveries", filter=Q(deliveries__status=Delivery.Status.PENDING)),
        failed=Count("deliveries", filter=Q(deliveries__status=Delivery.Status.FAILED)),
    ).select_related("created_by"))


def recent_deliveries(*, endpoint: Endpoint, limit: int = RECENT) -> list[Delivery]:
    """The newest deliveries with their event and attempts (newest first): three queries."""
    return list(endpoint.deliveries.select_related("event").prefetch_related(
        Prefetch("attempt_rows", queryset=Attempt.objects.order_by("-number")))[:limit])


def delivery_of(*, delivery_id: int) -> Delivery:
    return Delivery.objects.select_related("event", "endpoint").prefetch_related(
        Prefetch("attempt_rows", queryset=Attempt.objects.order_by("-number"))).get(pk=delivery_id)
