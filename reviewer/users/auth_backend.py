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
from django.db import connections

from reviewer.models import Membership
from reviewer.roles import ROLES

MEMBERSHIPS_COLUMN = "proofdesk_memberships"
# each membership as "team:role", joined by commas, in one row per user (a row per membership built a User each)
_AGGREGATE = {"postgresql": "STRING_AGG({team}::text || ':' || {role}, ',')",
              "sqlite": "GROUP_CONCAT({team} || ':' || {role}, ',')"}


@cache
def _user_with_roles_sql(vendor: str) -> str:
    """The user's row with its memberships (their team and role) in one text column, NULL for none. The names
    are the models' own; the roles and the user are parameters."""
    user_model = get_user_model()
    user, member = user_model._meta, Membership._meta
    roles = ", ".join(["%s"] * len(ROLES))
    team, role = (f"m.{member.get_field(name).column}" for name in ("team", "role"))
    return (f"SELECT u.*, {_AGGREGATE[vendor].format(team=team, role=role)} AS {MEMBERSHIPS_COLUMN} "  # noqa: S608
            f"FROM {user.db_table} u "
            f"LEFT JOIN {member.db_table} m ON m.{member.get_field('user').column} = u.{user.pk.column} "
            f"AND {role} IN ({roles}) "
            f"WHERE u.{user.pk.column} = %s GROUP BY u.{user.pk.column}")


def memberships_of(text: str | None) -> dict[int, frozenset[str]]:
    """{team id: roles} from the aggregated column."""
    teams: dict[int, set[str]] = {}
    for pair in (text or "").split(","):
        if pair:
            team, role = pair.split(":", 1)
            teams.setdefault(int(team), set()).add(role)
    return {team: frozenset(roles) for team, roles in teams.items()}


class UserWithRolesBackend(ModelBackend):
    def get_user(self, user_id):
        user_model = get_user_model()
        try:
            pk = user_model._meta.pk.to_python(user_id)
        except ValidationError:
            return None
        manager = user_model._default_manager
        rows = list(manager.raw(_user_with_roles_sql(connections[manager.db].vendor), [*ROLES, pk]))
        if not rows or not self.user_can_authenticate(rows[0]):
            return None
        user = rows[0]
        # reviewer.access.user_teams reads these instead of asking the database again
        user._proofdesk_teams = memberships_of(getattr(user, MEMBERSHIPS_COLUMN))
        return user
