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


def require_work_role(user) -> None:
    """Correcting a value is reviewers' work (supervisors read the desk)."""
    if not has_role(user, *WORK_ROLES):
        raise PermissionDenied("Only reviewers correct values.")
