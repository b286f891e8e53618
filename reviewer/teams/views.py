"""The instance admin's page of teams: every team with its people, and a new team."""

from __future__ import annotations

from functools import wraps

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from extraction.models import Team
from reviewer.teams.services import TeamError, team_create


def instance_admin_required(view):
    """Login first (redirect), then an instance admin (a superuser), else 403: teams are above any one team."""

    @login_required
    @wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not (request.user.is_active and request.user.is_superuser):
            raise PermissionDenied("Only an instance admin manages teams.")
        return view(request, *args, **kwargs)

    return wrapped


@instance_admin_required
def team_list(request: HttpRequest) -> HttpResponse:
    """GET: the teams and how many people and batches each has. POST name (and slug): a new team."""
    error, name, slug = "", "", ""
    if request.method == "POST":
        name, slug = request.POST.get("name", "")[:100], request.POST.get("slug", "")[:50]
        try:
            team = team_create(name=name, slug=slug)
        except TeamError as err:
            error = str(err)
        else:
            messages.success(request, f"Team {team.name} made. Give people roles in it on their pages "
                                      f"(Users), or name it in the identity provider's groups as {team.slug}:<role>.")
            return redirect("team_list")
    teams = Team.objects.annotate(people=Count("memberships__user", distinct=True),
                                  n_batches=Count("batches", distinct=True)).order_by("name")
    return render(request, "teams/list.html", {"teams": teams, "error": error, "name": name, "slug": slug},
                  status=400 if error else 200)
