"""Django's model backend, reading the user and their roles in one query on every request.

Every view checks a role (reviewer/access.py), so every request read the user and then their groups: two
round trips to the database for what one join answers. Roles taken away or an account deactivated still
take effect on the user's next request: nothing is kept between requests.
"""

from __future__ import annotations

from functools import cache

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError

from reviewer.roles import ROLES

ROLE_COLUMN = "proofdesk_role"


@cache
def _user_with_roles_sql() -> str:
    """One row per group of the user (the role's name, or NULL for a group that is no role), at least one.
    The names are the models' own; the roles and the user are parameters."""
    user_model = get_user_model()
    user, group, through = user_model._meta, Group._meta, user_model.groups.through._meta
    to_user = next(f.column for f in through.fields if f.related_model is user_model)
    to_group = next(f.column for f in through.fields if f.related_model is Group)
    roles = ", ".join(["%s"] * len(ROLES))
    return (f"SELECT u.*, g.{group.get_field('name').column} AS {ROLE_COLUMN} "  # noqa: S608
            f"FROM {user.db_table} u "
            f"LEFT JOIN {through.db_table} ug ON ug.{to_user} = u.{user.pk.column} "
            f"LEFT JOIN {group.db_table} g ON g.{group.pk.column} = ug.{to_group} "
            f"AND g.{group.get_field('name').column} IN ({roles}) "
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
        # reviewer.access.user_roles reads these instead of asking the database again
        user._proofdesk_roles = frozenset(getattr(r, ROLE_COLUMN) for r in rows if getattr(r, ROLE_COLUMN))
        return user
