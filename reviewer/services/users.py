"""Accounts, managed by admins on the app's own pages: create, set roles, deactivate, reset a password.

An admin can never lock the app out: nobody removes the admin role from, or deactivates, the last active
admin, and an admin does neither to themselves.
"""

from __future__ import annotations

from django.contrib.auth.models import Group, User
from django.db import transaction

from reviewer.roles import ADMIN, ROLES


class UserError(Exception):
    """A change to an account that cannot be made; the message is for the admin."""


def _other_active_admins(user: User) -> int:
    return (User.objects.filter(is_active=True).exclude(pk=user.pk)
            .filter(groups__name=ADMIN).distinct().count() + User.objects.filter(is_active=True, is_superuser=True)
            .exclude(pk=user.pk).exclude(groups__name=ADMIN).count())


def _keep_an_admin(*, user: User, actor: User, losing_admin: bool) -> None:
    if not losing_admin:
        return
    if user.pk == actor.pk:
        raise UserError("You cannot take away your own admin role or deactivate yourself; ask another admin.")
    if _other_active_admins(user) == 0:
        raise UserError(f"{user.username} is the last active admin: make someone else admin first.")


@transaction.atomic
def user_create(*, username: str, email: str, password: str, roles: list[str]) -> User:
    if User.objects.filter(username__iexact=username).exists():
        raise UserError(f"There is already a user named {username}.")
    user = User.objects.create_user(username=username, email=email, password=password)
    user.groups.set(Group.objects.filter(name__in=[r for r in roles if r in ROLES]))
    return user


@transaction.atomic
def user_update(*, user: User, actor: User, roles: list[str], is_active: bool) -> User:
    wanted = {r for r in roles if r in ROLES}
    had_admin = user.is_active and (user.is_superuser or user.groups.filter(name=ADMIN).exists())
    keeps_admin = is_active and (ADMIN in wanted or user.is_superuser)
    _keep_an_admin(user=user, actor=actor, losing_admin=had_admin and not keeps_admin)
    user.groups.remove(*Group.objects.filter(name__in=ROLES))
    user.groups.add(*Group.objects.filter(name__in=wanted))
    if user.is_active != is_active:
        User.objects.filter(pk=user.pk).update(is_active=is_active)
        user.is_active = is_active
    return user


def user_set_password(*, user: User, password: str) -> None:
    user.set_password(password)
    user.save(update_fields=["password"])
