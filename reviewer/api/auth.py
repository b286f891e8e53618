"""Who calls the API and what their roles allow: a bearer token from the tokens page acts as its owner, and
each operation names the roles it needs (`Roles(ADMIN)`), checked on the server before the request's body is
even read, as every page checks its role."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from ninja.security import HttpBearer

from reviewer.access import has_role
from reviewer.api.models import ApiToken
from reviewer.api.services import token_use


class Roles(HttpBearer):
    """`Authorization: Bearer pd_…` of a user holding one of `roles`: the request acts as the token's user
    (`request.user`; the token is `request.auth`). An unknown or revoked token, or a disabled user's, is
    refused (401); a user without the roles is refused (403)."""

    def __init__(self, *roles: str) -> None:
        if not roles:
            raise ValueError("An operation names the roles that may use it.")
        self.roles = roles
        super().__init__()

    def authenticate(self, request: HttpRequest, token: str) -> ApiToken | None:
        found = token_use(secret=token.strip())
        if found is None:
            return None
        request.user = found.user
        found.user._proofdesk_only_team = found.team_id  # the token acts with its owner's roles in its team only
        request.view_roles = self.roles  # as role_required does: what the operation's objects are scoped by
        if not has_role(found.user, *self.roles):
            raise PermissionDenied(f"Your role does not allow this: it needs {' or '.join(self.roles)}.")
        return found
