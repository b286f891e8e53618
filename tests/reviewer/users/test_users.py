"""Admins manage accounts on the app's pages: create, roles, deactivate, reset a password; nobody else may."""

from __future__ import annotations

import threading
import time

import pytest
from django.contrib.auth.models import Group, User
from django.db import connection
from django.test import Client
from django.urls import reverse

from tests.support.accounts import PASSWORD, give_roles, roles_of

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "another-horse-staple-7"


@pytest.mark.parametrize("role", ["anonymous", "outsider", "reviewer", "supervisor"])
def test_only_admins_reach_the_user_pages(client_as, users, role):
    client = client_as(role)
    target = users["reviewer"]
    for method, url in (("get", reverse("user_list")), ("get", reverse("user_new")),
                        ("post", reverse("user_new")), ("get", reverse("user_edit", args=[target.id])),
                        ("post", reverse("user_edit", args=[target.id])),
                        ("post", reverse("user_password", args=[target.id]))):
        response = getattr(client, method)(url, {})
        if role == "anonymous":
            assert response.status_code == 302 and "/login/" in response["Location"], url
        else:
            assert response.status_code == 403, (url, response.status_code)
    assert User.objects.get(pk=target.id).is_active


def test_an_admin_creates_a_reviewer_who_can_then_log_in(client_as):
    client = client_as("admin")
    response = client.post(reverse("user_new"), {"username": "maria", "email": "m@example.org",
                                                 "roles": ["reviewer"], "password": NEW_PASSWORD})
    assert response.status_code == 302
    maria = User.objects.get(username="maria")
    assert roles_of(maria) == ["reviewer"]
    fresh = Client()
    assert fresh.login(username="maria", password=NEW_PASSWORD)
    assert fresh.get(reverse("queue")).status_code == 200
    assert fresh.get(reverse("batch_list")).status_code == 403


def test_a_weak_password_or_a_taken_name_is_refused_with_the_reason(client_as):
    client = client_as("admin")
    response = client.post(reverse("user_new"), {"username": "x", "roles": ["reviewer"], "password": "password"})
    assert response.status_code == 400 and b"too common" in response.content
    response = client.post(reverse("user_new"), {"username": "Reviewer", "password": NEW_PASSWORD})
    assert response.status_code == 400 and b"already a user named" in response.content
    assert not User.objects.filter(username="x").exists()


def test_an_admin_sets_roles_and_deactivates_a_user_who_then_cannot_log_in(client_as, users):
    client = client_as("admin")
    reviewer = users["reviewer"]
    response = client.post(reverse("user_edit", args=[reviewer.id]), {"roles": ["supervisor"]})
    assert response.status_code == 302
    reviewer.refresh_from_db()
    assert not reviewer.is_active and roles_of(reviewer) == ["supervisor"]
    assert not Client().login(username="reviewer", password=PASSWORD)


def test_an_admin_resets_a_password(client_as, users):
    response = client_as("admin").post(reverse("user_password", args=[users["supervisor"].id]),
                                       {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    assert response.status_code == 302
    assert Client().login(username="supervisor", password=NEW_PASSWORD)
    assert not Client().login(username="supervisor", password=PASSWORD)


def test_nobody_locks_the_app_out_of_its_last_admin(client_as, users):
    admin = users["admin"]
    response = client_as("admin").post(reverse("user_edit", args=[admin.id]), {"roles": ["reviewer"],
                                                                              "is_active": "on"})
    assert response.status_code == 400 and b"your own admin role" in response.content
    second = User.objects.create_user(username="second", password=PASSWORD)
    give_roles(second, *roles_of(admin))
    client = Client()
    client.force_login(second)
    assert client.post(reverse("user_edit", args=[admin.id]), {"roles": []}).status_code == 302  # another admin is left
    admin.refresh_from_db()
    assert not admin.is_active
    response = client.post(reverse("user_edit", args=[second.id]), {"roles": []})
    assert response.status_code == 400  # never themselves, never the last one
    assert User.objects.get(pk=second.id).is_active


def test_roles_taken_away_and_a_deactivation_hold_from_the_users_next_request(client_as, users):
    client = client_as("reviewer")
    assert client.get(reverse("queue")).status_code == 200
    give_roles(users["reviewer"], "supervisor")
    assert client.get(reverse("queue")).status_code == 403
    User.objects.filter(pk=users["reviewer"].pk).update(is_active=False)
    response = client.get(reverse("audit_home"))
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_a_user_in_groups_that_are_no_roles_has_exactly_their_roles_and_one_query_reads_both(users):
    # The backend reads the user and their memberships in one join: a group that is no role adds nothing.
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from extraction.models import Team, default_team_id
    from reviewer.access import user_roles, user_teams
    from reviewer.users.auth_backend import UserWithRolesBackend

    reviewer = users["reviewer"]
    reviewer.groups.add(Group.objects.create(name="night-shift"), Group.objects.get(name="supervisor"))
    north = Team.objects.create(name="North", slug="north")
    give_roles(reviewer, "supervisor", team=north)
    backend = UserWithRolesBackend()
    with CaptureQueriesContext(connection) as queries:
        loaded = backend.get_user(str(reviewer.pk))
        roles, teams = user_roles(loaded), user_teams(loaded)
    assert loaded == reviewer and roles == {"reviewer", "supervisor"} and len(queries.captured_queries) == 1
    assert teams == {default_team_id(): {"reviewer"}, north.pk: {"supervisor"}}
    nobody = User.objects.create_user(username="no-roles", password=PASSWORD)
    assert user_roles(backend.get_user(nobody.pk)) == frozenset()
    assert backend.get_user("not-a-number") is None and backend.get_user(10**9) is None


def test_a_look_alike_of_a_taken_name_is_refused_with_the_reason_not_a_500(client_as):
    # The model stores names NFKC-normalised: stored, each of these would clash with the account "reviewer".
    client = client_as("admin")
    for name in ("ｒｅｖｉｅｗｅｒ", "ＲＥＶＩＥＷＥＲ", "ʳeviewer", "reviewer"):
        response = client.post(reverse("user_new"), {"username": name, "password": NEW_PASSWORD})
        assert response.status_code == 400 and b"already a user named" in response.content, name
    assert User.objects.filter(username__iexact="reviewer").count() == 1


def test_a_new_name_is_stored_normalised_and_checked_as_stored(client_as):
    client = client_as("admin")
    response = client.post(reverse("user_new"), {"username": "ｍａｒｉａ", "roles": ["reviewer"],
                                                 "password": NEW_PASSWORD})
    assert response.status_code == 302 and User.objects.filter(username="maria").exists()
    # Ten characters that normalise to 180, and a fraction whose normal form holds a slash: refused, not stored.
    for name in ("ﷺ" * 10, "¼"):
        response = client.post(reverse("user_new"), {"username": name, "password": NEW_PASSWORD})
        assert response.status_code == 400, name
    assert not User.objects.exclude(username__in=["admin", "reviewer", "supervisor", "outsider", "maria"]).exists()


def test_a_name_taken_between_the_check_and_the_insert_is_a_form_error_not_a_500(client_as):
    from django.db import connection

    client = client_as("admin")
    raced = []

    def another_request_first(execute, sql, params, many, context):
        # Just before the new account's INSERT, another request stores the same name.
        if sql.startswith('INSERT INTO "auth_user" ') and not raced:
            raced.append(True)
            User.objects.create_user(username="maria", password=PASSWORD)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(another_request_first):
        response = client.post(reverse("user_new"), {"username": "maria", "password": NEW_PASSWORD})
    assert raced and response.status_code == 400 and b"already a user named maria" in response.content


def _slow_role_reads(execute, sql, params, many, context):
    """Widens the window between the last-admin check, which reads who has which role, and the writes."""
    result = execute(sql, params, many, context)
    if sql.startswith("SELECT") and "reviewer_membership" in sql:
        time.sleep(0.05)
    return result


def _at_once(changes: dict[User, tuple[User, dict]]) -> list[tuple[int, bytes]]:
    """Each actor posts their change to their target's page, all starting together, each thread on its own
    connection; the answers, status and page."""
    start = threading.Barrier(len(changes))
    answers: list[tuple[int, bytes]] = []

    def change(actor: User, target: User, data: dict) -> None:
        try:
            client = Client()
            client.force_login(actor)
            start.wait()
            with connection.execute_wrapper(_slow_role_reads):
                response = client.post(reverse("user_edit", args=[target.id]), data)
            answers.append((response.status_code, response.content))
        finally:
            connection.close()

    threads = [threading.Thread(target=change, args=(actor, *what)) for actor, what in changes.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return answers


@pytest.mark.django_db(transaction=True)
def test_two_admins_taking_each_others_admin_role_at_once_leave_one_admin(users):
    first, second = users["admin"], User.objects.create_user(username="second", password=PASSWORD)
    changes = {first: (second, {"roles": ["reviewer"], "is_active": "on"}),  # takes away second's role
               second: (first, {"roles": ["admin"]})}  # deactivates first
    for trial in range(5):
        User.objects.filter(pk__in=[first.pk, second.pk]).update(is_active=True)
        give_roles(second, "admin")
        answers = _at_once(changes)
        assert User.objects.filter(is_active=True, memberships__role="admin").count() == 1, trial
        # the one that lost is refused by the guard, or, when the other's change landed before its request was
        # even checked, no longer an admin
        (lost,) = [(code, page) for code, page in answers if code != 302]
        assert lost[0] == 403 or (lost[0] == 400 and b"is the last active admin" in lost[1]), (trial, lost[0])


# --- issue 40, finding 3: names that differ only in case are one name, in the database itself --------------


def _create_at_once(names: list[str]) -> list[str]:
    """Each name created by user_create in its own thread and connection, all starting together: what each got."""
    from reviewer.users.services import UserError, user_create

    start = threading.Barrier(len(names))
    outcomes: list[str] = []

    def create(name: str) -> None:
        try:
            start.wait()
            user_create(username=name, email="", password=NEW_PASSWORD, roles=["reviewer"])
            outcomes.append("created")
        except UserError as err:
            outcomes.append(str(err))
        finally:
            connection.close()

    threads = [threading.Thread(target=create, args=(n,)) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return outcomes


@pytest.mark.django_db(transaction=True)
def test_ten_parallel_creations_of_one_name_in_different_cases_make_exactly_one_account(users):
    for trial in range(3):
        outcomes = _create_at_once([f"dup{trial}", f"DUP{trial}", f"Dup{trial}", f"dUp{trial}", f"duP{trial}"] * 2)
        assert outcomes.count("created") == 1, (trial, outcomes)
        assert all(o == "created" or o.startswith("There is already a user named") for o in outcomes), outcomes
        assert User.objects.filter(username__iexact=f"dup{trial}").count() == 1, trial


def test_a_name_differing_from_a_taken_one_by_a_capital_sharp_s_is_refused(client_as):
    client = client_as("admin")
    assert client.post(reverse("user_new"), {"username": "ß1", "password": NEW_PASSWORD}).status_code == 302
    response = client.post(reverse("user_new"), {"username": "ẞ1", "password": NEW_PASSWORD})
    assert response.status_code == 400 and "already a user named ẞ1" in response.content.decode()
    assert list(User.objects.filter(username__in=["ß1", "ẞ1"]).values_list("username", flat=True)) == ["ß1"]


@pytest.mark.django_db(transaction=True)
def test_an_account_made_outside_the_app_in_another_case_is_refused_by_the_database_and_not_left_half_made(users):
    from django.db import IntegrityError

    with pytest.raises(IntegrityError):
        User.objects.create_user(username="REVIEWER", password=PASSWORD)  # as createsuperuser or a shell would
    assert list(User.objects.filter(username__iexact="reviewer").values_list("username", flat=True)) == ["reviewer"]


def test_the_migration_gives_every_account_its_key_and_keeps_older_look_alikes_apart(users):
    import importlib

    from django.apps import apps

    from reviewer.models import UsernameKey

    migration = importlib.import_module("reviewer.migrations.0007_username_key")
    UsernameKey.objects.all().delete()
    older, newer = User.objects.bulk_create([User(username="Maria"), User(username="MARIA")])  # no signals
    migration.fill_keys(apps, None)
    keys = dict(UsernameKey.objects.values_list("user_id", "key"))
    assert keys[older.pk] == "maria" and keys[newer.pk] == f"maria#{newer.pk}"
    assert keys[users["reviewer"].pk] == "reviewer" and len(keys) == User.objects.count()


@pytest.mark.django_db(transaction=True)
def test_migrating_a_database_whose_accounts_predate_the_keys_gives_each_one_its_key():
    from django.db.migrations.executor import MigrationExecutor

    before, after = [("reviewer", "0006_field_audit")], [("reviewer", "0007_username_key")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    try:
        old_user = executor.loader.project_state(before).apps.get_model("auth", "User")
        ana, ana_again = old_user.objects.create(username="Ana"), old_user.objects.create(username="ANA")
        executor.loader.build_graph()  # the executor's graph still says 0006 is the last applied
        executor.migrate(after)
        from reviewer.models import UsernameKey

        keys = dict(UsernameKey.objects.values_list("user_id", "key"))
    finally:  # the schema as the other tests of this database need it, whatever happened
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())
    assert keys == {ana.pk: "ana", ana_again.pk: f"ana#{ana_again.pk}"}


def test_createsuperuser_refuses_a_name_taken_in_another_case_in_one_line(users, monkeypatch):
    from django.core.management import CommandError, call_command

    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", NEW_PASSWORD)
    with pytest.raises(CommandError, match=r"^There is already a user named ADMIN\.$"):
        call_command("createsuperuser", interactive=False, username="ADMIN", email="a@example.org", verbosity=0)
    assert list(User.objects.filter(username__iexact="admin").values_list("username", flat=True)) == ["admin"]


def test_demo_setup_takes_an_account_named_in_another_case_as_its_roles_demo_login(db):
    from io import StringIO

    from django.core.management import call_command

    from extraction.models import Batch
    from reviewer.management.commands.demo_setup import DEMO_BATCH, DEMO_RECEIPTS

    Batch.objects.bulk_create([Batch(name=DEMO_BATCH, doctype="acta"), Batch(name=DEMO_RECEIPTS, doctype="receipt")])
    existing = User.objects.create_user(username="Reviewer", password=PASSWORD)
    out = StringIO()
    call_command("demo_setup", stdout=out)
    assert "reviewer    username: Reviewer" in out.getvalue()
    assert list(User.objects.filter(username__iexact="reviewer").values_list("pk", flat=True)) == [existing.pk]
    assert roles_of(existing) == ["reviewer"]


def test_a_renamed_account_takes_its_key_along_and_cannot_take_a_look_alike_of_another(users):
    from django.db import IntegrityError, transaction

    from reviewer.models import UsernameKey

    reviewer = users["reviewer"]
    reviewer.username = "Rita"
    reviewer.save()  # as a shell would: no page renames an account
    assert UsernameKey.objects.get(user=reviewer).key == "rita"
    assert User.objects.create_user(username="REVIEWER").username == "REVIEWER"  # the old name is free again
    reviewer.username = "ADMIN"
    with pytest.raises(IntegrityError, match="There is already a user named ADMIN"), transaction.atomic():
        reviewer.save()
    reviewer.refresh_from_db()
    assert reviewer.username == "Rita" and UsernameKey.objects.get(user=reviewer).key == "rita"
