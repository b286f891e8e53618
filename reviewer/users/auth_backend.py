"""Django's model backend, reading the user and their memberships (team and role) in one query on every request.

Every view checks a role in a team (reviewer/access.py), so every request read the user and then their
memberships: two round trips to the database for what one join answers. Roles taken away or an account
deactivated still take effect on the user's next request: nothing is kept between requests.
"""

from __future__ import annotations

from functools import cache

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import ValidationError

from reviewer.models import Membership
from reviewer.roles import ROLES

ROLE_COLUMN, TEAM_COLUMN = "proofdesk_role", "proofdesk_team"


@cache
def _user_with_roles_sql() -> str:
    """One row per membership of the user (its role and team, or NULLs), at least one. The names are the
    models' own; the roles and the user are parameters."""
    user_model = get_user_model()
    user, member = user_model._meta, Membership._meta
    roles = ", ".join(["%s"] * len(ROLES))
    return (f"SELECT u.*, m.{member.get_field('role').column} AS {ROLE_COLUMN}, "  # noqa: S608
            f"m.{member.get_field('team').column} AS {TEAM_COLUMN} "
            f"FROM {user.db_table} u "
            f"LEFT JOIN {member.db_table} m ON m.{member.get_field('user').column} = u.{user.pk.column} "
            f"AND m.{member.get_field('role').column} IN ({roles}) "
            f"WHERE u.{user.pk.column} = %s")


class UserWithRolesBackend(ModelBackend):
    def get_user(self, user_id):
        user_model = get_user_model()
        try:
            pk = user_model._meta.pk.to_python(user_id)
        except ValidationError:
            return None
        rows = list(user_model._default_manager.raw(_user_with_roles_sql(), [*ROLES, pk]))
        if not rows or not self.user_can_authenticate(rows[0]):
            return None
        user = rows[0]
        teams: dict[int, set[str]] = {}
        for r in rows:
            if getattr(r, ROLE_COLUMN):
                teams.setdefault(getattr(r, TEAM_COLUMN), set()).add(getattr(r, ROLE_COLUMN))
        # reviewer.access.user_teams reads these instead of asking the database again
        user._proofdesk_teams = {team: frozenset(roles) for team, roles in teams.items()}
        return user
