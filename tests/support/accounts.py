"""The test users: one per role and an outsider, all with one password (conftest's `users`)."""

PASSWORD = "correct-horse-battery-9"


ROLE_USERS = ("admin", "reviewer", "supervisor", "outsider")


def make_users() -> dict:
    """One user per role (named after it, in its group) and an outsider in none."""
    from django.contrib.auth.models import Group, User

    made = {}
    for role in ROLE_USERS:
        user = User.objects.create_user(username=role, password=PASSWORD)
        if role != "outsider":
            user.groups.add(Group.objects.get_or_create(name=role)[0])  # flushed by transactional tests
        made[role] = user
    return made
