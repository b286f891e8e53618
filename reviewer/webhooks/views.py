"""Admins' webhook pages: endpoints, their deliveries and attempts, replays."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from reviewer.access import role_required
from reviewer.roles import ADMIN
from reviewer.teams.forms import TeamChoiceField, teams_offered
from reviewer.teams.scope import get_for, request_team_ids
from reviewer.webhooks import selectors, services
from reviewer.webhooks.events import DESCRIPTIONS, EVENT_TYPES
from reviewer.webhooks.models import Delivery, Endpoint


class EndpointForm(forms.Form):
    url = forms.CharField(max_length=2000, label="URL", widget=forms.URLInput(attrs={"placeholder": "https://"}))
    description = forms.CharField(max_length=200, required=False, label="Description (optional)")
    events = forms.MultipleChoiceField(choices=[(e, f"{e}: {DESCRIPTIONS[e]}") for e in EVENT_TYPES],
                                       widget=forms.CheckboxSelectMultiple)
    team = TeamChoiceField(label="Team (the endpoint hears only its events)")


def get_endpoint(request: HttpRequest, endpoint_id: int) -> Endpoint:
    """The access helper for an endpoint: 404 when it does not exist or is another team's."""
    return get_for(request, Endpoint, pk=endpoint_id)


@role_required(ADMIN)
def webhook_list(request: HttpRequest) -> HttpResponse:
    """GET: the endpoints and a form for a new one. POST: register it (its URL checked), then its page."""
    form = teams_offered(EndpointForm(request.POST if request.method == "POST" else None,
                                      initial={"events": list(EVENT_TYPES)}), user=request.user, roles=(ADMIN,))
    if request.method == "POST" and form.is_valid():
        try:
            endpoint = services.endpoint_create(url=form.cleaned_data["url"], events=form.cleaned_data["events"],
                                                description=form.cleaned_data["description"], user=request.user,
                                                team=form.cleaned_data["team"])
        except services.WebhookError as err:
            form.add_error("url", str(err))
        else:
            messages.success(request, "The endpoint is registered. Its secret is below: the receiver verifies "
                                      "each delivery's signature with it.")
            return redirect("webhook_detail", endpoint_id=endpoint.pk)
    endpoints = selectors.endpoints_with_counts(teams=request_team_ids(request))
    return render(request, "webhooks/list.html", {"form": form, "endpoints": endpoints},
                  status=400 if form.errors else 200)


@role_required(ADMIN)
def webhook_detail(request: HttpRequest, endpoint_id: int) -> HttpResponse:
    endpoint = get_endpoint(request, endpoint_id)
    context = {"endpoint": endpoint, "deliveries": selectors.recent_deliveries(endpoint=endpoint)}
    if request.htmx:
        return render(request, "webhooks/detail.html#deliveries", context)
    return render(request, "webhooks/detail.html", context)


@role_required(ADMIN)
@require_POST
def webhook_toggle(request: HttpRequest, endpoint_id: int) -> HttpResponse:
    endpoint = get_endpoint(request, endpoint_id)
    active = not endpoint.active
    if services.endpoint_set_active(endpoint_id=endpoint.pk, active=active):
        messages.success(request, "Enabled: due deliveries are sent again." if active
                         else "Disabled: nothing is sent to it until it is enabled.")
    return redirect("webhook_detail", endpoint_id=endpoint.pk)


@role_required(ADMIN)
@require_POST
def webhook_delete(request: HttpRequest, endpoint_id: int) -> HttpResponse:
    endpoint = get_endpoint(request, endpoint_id)
    services.endpoint_delete(endpoint_id=endpoint.pk)
    messages.success(request, f"The endpoint {endpoint.url} is deleted, with its deliveries.")
    return redirect("webhook_list")


@role_required(ADMIN)
@require_POST
def webhook_replay(request: HttpRequest, endpoint_id: int, delivery_id: int) -> HttpResponse:
    """One more attempt of a delivery, now (sent with the same webhook-id: a receiver that has it ignores it)."""
    delivery = get_for(request, Delivery, pk=delivery_id, endpoint_id=endpoint_id)
    replayed = services.delivery_replay(delivery_id=delivery.pk, endpoint_id=endpoint_id)
    note = "Replay queued." if replayed else "An attempt is in flight: replay it once it has ended."
    if request.htmx:
        context = {"endpoint": delivery.endpoint, "d": selectors.delivery_of(delivery_id=delivery.pk), "note": note}
        return render(request, "webhooks/detail.html#delivery", context)
    (messages.success if replayed else messages.error)(request, note)
    return redirect("webhook_detail", endpoint_id=endpoint_id)
