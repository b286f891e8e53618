"""The API tokens page: each user makes and revokes their own tokens. A new token is shown once, on the
page that answers its creation; only its digest is stored."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse

from extraction.models import Team
from reviewer.access import role_required
from reviewer.api import selectors, services
from reviewer.roles import ROLES
from reviewer.teams.scope import scoped
from reviewer.whole_numbers import whole_number


@role_required(*ROLES)
def token_list(request: HttpRequest) -> HttpResponse:
    """GET: the user's tokens. POST `name`: a new token, shown on this answer only. POST `revoke`: revoke
    one of the user's own tokens."""
    context: dict = {"error": "", "new": None, "name": ""}
    status = 200
    if request.method == "POST":
        revoke = request.POST.get("revoke", "")
        if revoke:
            token_id = whole_number(revoke)
            if token_id is not None and services.token_revoke(user=request.user, token_id=token_id):
                messages.success(request, "The token is revoked: the API refuses it from now on.")
            else:
                messages.error(request, "No such live token of yours.")
            return redirect("token_list")
        team = scoped(Team, user=request.user).filter(pk=whole_number(request.POST.get("team", "")) or 0).first()
        team = team or scoped(Team, user=request.user).first()
        try:
            if team is None:
                raise services.TokenError("You belong to no team, so a token could do nothing.")
            context["new"] = services.token_create(user=request.user, name=request.POST.get("name", ""), team=team)
        except services.TokenError as err:
            context["error"], context["name"], status = str(err), request.POST.get("name", "")[:200], 400
    context["tokens"] = selectors.tokens_of(user=request.user)
    context["teams"] = list(scoped(Team, user=request.user))
    context["docs_url"] = reverse("api:openapi-view")
    response = render(request, "tokens/list.html", context, status=status)
    response["Cache-Control"] = "no-store"  # the page that shows a new token is never kept
    return response
