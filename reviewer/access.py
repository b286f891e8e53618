"""Server-side role checks: every view goes through one of these, never only a template."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse

from reviewer.roles import ADMIN, REVIEWER, ROLES, SUPERVISOR

DESK_ROLES = (REVIEWER, SUPERVISOR, ADMIN)
WORK_ROLES = (REVIEWER, ADMIN)  # who corrects, verifies and rejects
SEND_BACK_ROLES = (SUPERVISOR, ADMIN)


def user_teams(user) -> dict[int, frozenset[str]]:
    """The user's roles in each of their teams ({team id: roles}). An instance admin (a superuser) holds every
    role in every team."""
    if not user.is_authenticated or not user.is_active:
        return {}
    cached = getattr(user, "_proofdesk_teams", None)  # set by the backend that read the user (auth_backend)
    if cached is None or (user.is_superuser and not getattr(user, "_proofdesk_all_teams", False)):
        from extraction.models import Team
        from reviewer.models import Membership

        if user.is_superuser:
            cached = {pk: frozenset(ROLES) for pk in Team.objects.values_list("pk", flat=True)}
            user._proofdesk_all_teams = True
        else:
            teams: dict[int, set[str]] = {}
            for team, role in Membership.objects.filter(user=user, role__in=ROLES).values_list("team_id", "role"):
                teams.setdefault(team, set()).add(role)
            cached = {team: frozenset(roles) for team, roles in teams.items()}
        user._proofdesk_teams = cached
    only = getattr(user, "_proofdesk_only_team", None)  # an API token acts in its own team alone
    if only is not None:
        return {only: cached[only]} if only in cached else {}
    return cached


def user_roles(user) -> frozenset[str]:
    """Every role the user holds in some team: what the menus offer. Each object is checked against the
    roles in its own team (team_ids)."""
    return frozenset().union(*user_teams(user).values())


def team_ids(user, *roles: str) -> list[int]:
    """The teams in which the user holds one of `roles` (any role, without them), in a stable order."""
    wanted = set(roles or ROLES)
    return sorted(team for team, held in user_teams(user).items() if held & wanted)


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
            request.view_roles = roles  # what the view's object must be of a team the user holds one of in
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


def require_work_role(user) -> None:
    """Correcting a value is reviewers' work (supervisors read the desk)."""
    if not has_role(user, *WORK_ROLES):
        raise PermissionDenied("Only reviewers correct values.")
