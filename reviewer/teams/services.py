"""Teams and who belongs to them: the only writes of reviewer.Membership and extraction.Team."""

from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction
from django.utils.text import slugify

from extraction.models import Team
from reviewer.models import Membership
from reviewer.roles import ROLES


class TeamError(Exception):
    """A change to a team that cannot be made; the message is for the person who asked."""


def team_create(*, name: str, slug: str = "") -> Team:
    name = name.strip()
    slug = slugify(slug or name)[:50]
    if not name or not slug:
        raise TeamError("A team needs a name made of letters or digits.")
    if Team.objects.filter(name__iexact=name).exists() or Team.objects.filter(slug=slug).exists():
        raise TeamError(f"There is already a team named {name} or {slug}.")
    return Team.objects.create(name=name, slug=slug)


@transaction.atomic
def memberships_set(*, user, team: Team, roles: Iterable[str]) -> None:
    """The user's roles in `team` become `roles` (none: the user leaves the team)."""
    wanted = {r for r in roles if r in ROLES}
    Membership.objects.filter(user=user, team=team).exclude(role__in=wanted).delete()
    Membership.objects.bulk_create([Membership(user=user, team=team, role=r) for r in sorted(wanted)],
                                   ignore_conflicts=True)


@transaction.atomic
def memberships_replace(*, user, grants: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """The user's memberships become exactly `grants` ((team slug, role) pairs), as an identity provider's claim
    says at each sign-in: a group taken away there takes the access away here. Grants naming a team this
    instance does not have, or no role, are left out (teams are made here, by an instance admin); the grants
    kept are returned."""
    wanted = {(slug, role) for slug, role in grants if role in ROLES}
    teams = {t.slug: t for t in Team.objects.filter(slug__in={slug for slug, _ in wanted})}
    kept = sorted((slug, role) for slug, role in wanted if slug in teams)
    Membership.objects.filter(user=user).delete()
    Membership.objects.bulk_create([Membership(user=user, team=teams[slug], role=role) for slug, role in kept])
    return kept
