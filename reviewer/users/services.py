"""Accounts, managed by admins on the app's own pages: create, set roles, deactivate, reset a password.

An admin can never lock the app out: nobody removes the admin role from, or deactivates, the last active
admin, and an admin does neither to themselves. No two names differ only in case or in Unicode form ("ｒｅｖ１",
"REV1" and "rev1"; "ß1" and "ẞ1"): the database keeps each name's key unique (reviewer.models.UsernameKey).
"""

from __future__ import annotations

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Q, QuerySet

from extraction.models import Team, default_team_id
from reviewer.models import Membership, UsernameKey
from reviewer.roles import ADMIN, ROLES
from reviewer.teams.services import memberships_set
from reviewer.users.usernames import username_key


class UserError(Exception):
    """A change to an account that cannot be made; the message is for the admin."""


class UsernameTaken(IntegrityError, ValidationError):
    """The name's key belongs to another account. An IntegrityError, as the index raised it, for code that
    guards an insert; a ValidationError too, so that Django's own createsuperuser says it in one line instead
    of a traceback."""

    def __init__(self, username: str) -> None:
        ValidationError.__init__(self, f"There is already a user named {username}.")

    def __str__(self) -> str:
        return self.message


def _active_admins() -> QuerySet[User]:
    in_admin = Membership.objects.filter(role=ADMIN).values("user_id")
    return User.objects.filter(Q(is_superuser=True) | Q(pk__in=in_admin), is_active=True)


def _lock_active_admins() -> None:
    """Two admins demoting each other at once would each count the other and both succeed. Every change of
    roles locks all active admins first (in one order, so two cannot deadlock): the second waits for the
    first to commit, and its count, a new statement, sees what the first did."""
    list(_active_admins().order_by("pk").select_for_update().values_list("pk", flat=True))


def _keep_an_admin(*, user: User, actor: User, losing_admin: bool) -> None:
    if not losing_admin:
        return
    if user.pk == actor.pk:
        raise UserError("You cannot take away your own admin role or deactivate yourself; ask another admin.")
    if not _active_admins().exclude(pk=user.pk).exists():
        raise UserError(f"{user.username} is the last active admin: make someone else admin first.")


def username_key_keep(*, user: User, created: bool) -> None:
    """The account's name under its key (reviewer.models.UsernameKey), in the account's own save: every way an
    account is made (this module, createsuperuser, the demo, the admin shell) goes through it. A key already
    taken is UsernameTaken; an account just created outside a transaction is then taken back with it."""
    key = username_key(user.username)
    try:
        with transaction.atomic():
            UsernameKey.objects.update_or_create(user=user, defaults={"key": key})
    except IntegrityError:
        if created:
            User.objects.filter(pk=user.pk).delete()
        raise UsernameTaken(user.username) from None


@transaction.atomic
def user_create(*, username: str, email: str, password: str, roles: list[str], team: Team | None = None) -> User:
    """A password account with `roles` in `team` (the default team when none is named)."""
    username = User.normalize_username(username)  # checked as it will be stored
    taken = str(UsernameTaken(username))
    if UsernameKey.objects.filter(key=username_key(username)).exists():
        raise UserError(taken)
    try:
        with transaction.atomic():
            user = User.objects.create_user(username=username, email=email, password=password)
    except IntegrityError:
        raise UserError(taken) from None  # another request stored the name since the check: the index says so
    memberships_set(user=user, team=team or Team.objects.get(pk=default_team_id()), roles=roles)
    return user


@transaction.atomic
def user_update(*, user: User, actor: User, roles: list[str], is_active: bool, team: Team | None = None) -> User:
    """The user's roles in `team` (the default team when none is named) become `roles`."""
    team = team or Team.objects.get(pk=default_team_id())
    wanted = {r for r in roles if r in ROLES}
    admin_elsewhere = Membership.objects.filter(user=user, role=ADMIN).exclude(team=team).exists()
    _lock_active_admins()
    user.refresh_from_db(fields=["is_active", "is_superuser"])  # as of the lock, not of the request's start
    had_admin = user.is_active and (user.is_superuser or Membership.objects.filter(user=user, role=ADMIN).exists())
    keeps_admin = is_active and (ADMIN in wanted or user.is_superuser or admin_elsewhere)
    _keep_an_admin(user=user, actor=actor, losing_admin=had_admin and not keeps_admin)
    memberships_set(user=user, team=team, roles=wanted)
    if user.is_active != is_active:
        User.objects.filter(pk=user.pk).update(is_active=is_active)
        user.is_active = is_active
    return user


def user_set_password(*, user: User, password: str) -> None:
    user.set_password(password)
    user.save(update_fields=["password"])
