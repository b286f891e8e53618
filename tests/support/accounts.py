"""The test users: one per role and an outsider, all with one password (conftest's `users`)."""

PASSWORD = "correct-horse-battery-9"


ROLE_USERS = ("admin", "reviewer", "supervisor", "outsider")


def make_users() -> dict:
    """One user per role (named after it, with that role in the default team) and an outsider in no team."""
    from django.contrib.auth.models import User

    from extraction.models import default_team_id
    from reviewer.models import Membership

    made = {}
    for role in ROLE_USERS:
        user = User.objects.create_user(username=role, password=PASSWORD)
        if role != "outsider":
            Membership.objects.create(user=user, team_id=default_team_id(), role=role)  # the team: made again after a flush
        made[role] = user
    return made


def give_roles(user, *roles: str, team=None) -> None:
    """`user`'s roles in `team` (the default team) become `roles`."""
    from extraction.models import Team, default_team_id
    from reviewer.teams.services import memberships_set

    memberships_set(user=user, team=team or Team.objects.get(pk=default_team_id()), roles=roles)


def roles_of(user, team=None) -> list[str]:
    """`user`'s roles in `team` (the default team), sorted."""
    from extraction.models import default_team_id
    from reviewer.models import Membership

    team_id = team.pk if team is not None else default_team_id()
    return sorted(Membership.objects.filter(user=user, team_id=team_id).values_list("role", flat=True))
