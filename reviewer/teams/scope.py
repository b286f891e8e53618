"""The one place that scopes reads by the requesting person's teams.

Every view and API operation reads the objects a person may see through `scoped` (lists) or `scoped_get`
(one object by its URL): each model names the path from it to its team here, and a model with none cannot be
read through them at all (KeyError), so a new model cannot be forgotten. An object of a team the person is not
in is a 404, never a 403 that would confirm it exists; a 403 says only that one's role in the object's own team
does not allow the action. tests/reviewer/teams/test_leaks.py walks every URL and API operation as a member of
another team.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db.models import Model, QuerySet
from django.http import Http404

from reviewer.access import team_ids, user_teams

# model label -> the lookup from it to its extraction.Team
TEAM_OF = {
    "extraction.Team": "pk",
    "extraction.Batch": "team",
    "extraction.Upload": "batch__team",
    "extraction.Document": "batch__team",
    "extraction.Page": "document__batch__team",
    "extraction.Block": "document__batch__team",
    "extraction.Extraction": "document__batch__team",
    "extraction.Round": "extraction__document__batch__team",
    "extraction.FieldValue": "extraction__document__batch__team",
    "extraction.Violation": "extraction__document__batch__team",
    "extraction.ReviewEvent": "document__batch__team",
    "reviewer.AuditSample": "batch__team",
    "reviewer.AuditItem": "sample__batch__team",
    "reviewer.FieldAuditSample": "batch__team",
    "reviewer.FieldAuditItem": "sample__batch__team",
    "reviewer.DeskPresence": "document__batch__team",
    "reviewer.Membership": "team",
    "api.ApiToken": "team",
    "webhooks.Endpoint": "team",
    "webhooks.Delivery": "endpoint__team",
    "extraction.DocTypeVersion": "team",
    "extraction.EvaluationItem": "team",
    "extraction.EvaluationRun": "team",
    "extraction.ConfidenceModel": "team",
}


def team_path(model: type[Model]) -> str:
    return TEAM_OF[model._meta.label]


def scoped(source: type[Model] | QuerySet, *, user, roles: tuple[str, ...] = ()) -> QuerySet:
    """`source` (a model or a queryset) narrowed to the teams in which `user` holds one of `roles` (any role
    without them)."""
    queryset = source if isinstance(source, QuerySet) else source._default_manager.all()
    return queryset.filter(**{f"{team_path(queryset.model)}__in": team_ids(user, *roles)})


def team_of(obj: Model) -> int:
    """The team id of an object read through `scoped`."""
    *steps, last = team_path(type(obj)).split("__")
    for step in steps:
        obj = getattr(obj, step)
    return obj.pk if last == "pk" else getattr(obj, f"{last}_id")


def scoped_get(source: type[Model] | QuerySet, *, user, roles: tuple[str, ...] = (), **lookup) -> Model:
    """The object `lookup` names, if it belongs to one of the user's teams (else 404, as for none). With
    `roles`, the user must hold one of them in the object's own team (else 403: the user is in that team, so
    nothing is revealed). The object is read as it was before teams and its team compared after (`source`
    selects what leads to it): one filter fewer to build on the desk's every request."""
    queryset = source if isinstance(source, QuerySet) else source._default_manager.all()
    try:
        obj = queryset.get(**lookup)
    except queryset.model.DoesNotExist:
        obj = None
    held = user_teams(user).get(team_of(obj)) if obj is not None else None
    if held is None:
        raise Http404("No such page.")
    if roles and not held & set(roles):
        raise PermissionDenied("Your role in this team does not allow this page.")
    return obj


def get_for(request, source: type[Model] | QuerySet, **lookup) -> Model:
    """The access helper's read: `scoped_get` with the roles the view was decorated with (role_required)."""
    return scoped_get(source, user=request.user, roles=getattr(request, "view_roles", ()), **lookup)


def acting_team(request):
    """The team a page about a type acts in (its evaluation set, its confidence): the one `team` names (in the
    query or the form), else the first in which the user holds one of the view's roles; 404 for another."""
    from extraction.models import Team

    offered = scoped(Team, user=request.user, roles=getattr(request, "view_roles", ()))
    asked = str(request.POST.get("team") or request.GET.get("team") or "")
    team = offered.filter(pk=int(asked)).first() if asked.isdigit() and len(asked) < 12 else offered.first()
    if team is None:
        raise Http404("No such team.")
    return team


def defined_type_team(request, name: str, *, shared_too: bool = False) -> int | None:
    """The team of a type defined in the app, if the user may act on it with the view's roles (its own team's,
    or with `shared_too` one shared with every team); None for a coded or shipped type; 404 otherwise."""
    from extraction.doctypes.selectors import doctype_team

    owner = doctype_team(name=name)
    if owner is None:
        return None
    if owner[0] in request_team_ids(request) or (shared_too and owner[1]):
        return owner[0]
    raise Http404("No such document type.")


def request_team_ids(request) -> list[int]:
    """The teams whose objects a list view shows: those in which the user holds one of the view's roles."""
    return team_ids(request.user, *getattr(request, "view_roles", ()))
