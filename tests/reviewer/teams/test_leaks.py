"""Teams are the boundary of what a person sees: every named URL and every API operation, walked as each member
of another team, shows no trace of the world's team. An object of another team is a 404, never a 403 that
would confirm it exists; a list shows none of its objects. New URLs and operations are walked as they come."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from extraction.models import Block, Team
from reviewer.api.services import token_create
from tests.support.accounts import PASSWORD, give_roles
from tests.support.api_matrix import ALLOWED as API_ALLOWED
from tests.support.api_matrix import operations
from tests.support.url_matrix import POST_ONLY, PUBLIC, A, R, S, url_for, url_names

ROLES = (A, R, S)
# URL parameters that name no team's object: a shipped type (url_for's "doctype" is the acta) is every team's,
# and its pages show each team its own figures; the walk still looks for the world's traces on them
SHARED_BY_ALL = {"doctype", "number"}


@pytest.fixture
def users(world_kept, db):
    return world_kept["users"]


@pytest.fixture
def world(world_kept, db):
    return {key: value for key, value in world_kept.items() if key != "users"}


@pytest.fixture
def south(db):
    """Another team, with a member in each role and in no other team."""
    from django.contrib.auth.models import User

    team = Team.objects.create(name="South", slug="south")
    members = {}
    for role in ROLES:
        members[role] = User.objects.create_user(username=f"south-{role}", password=PASSWORD)
        give_roles(members[role], role, team=team)
    return members


def traces(world) -> list[str]:
    """What would show the world's team on a page or in an answer: its objects' addresses and names."""
    batch, passed, flagged = world["batch"], world["passed"], world["flagged"]
    return [reverse("batch_detail", args=[batch.id]), reverse("desk_document", args=[flagged.id]),
            reverse("desk_document", args=[passed.id]), "acta-71.pdf", "acta-72.pdf", "hooks.example.com",
            reverse("webhook_detail", args=[world["endpoint"].id]), f'"batch_id": {batch.id}',
            f'"id": {flagged.id}', reverse("user_edit", args=[batch.created_by_id])]


class Nowhere(dict):
    """A world whose every object is one that does not exist."""

    def __init__(self, world) -> None:
        super().__init__({key: _Missing() for key in world})


class _Missing:
    id = pk = 10**9
    created_by_id = 10**9


def _answer(client: Client, name: str, params: list[str], world):
    url = url_for(name, params, world)
    if isinstance(world, Nowhere):
        url = url.replace("/acta/", "/no-such-type/").replace("/defined/", "/no-such-type/")
    return client.post(url, {}) if name in POST_ONLY else client.get(url)


def _text(response) -> str:
    """The answer, without the object's address it was asked at (a problem's `instance` says it back)."""
    body = b"".join(response.streaming_content) if response.streaming else response.content
    asked = response.wsgi_request.path
    text = body.decode(errors="replace")
    return text.replace(f'"{asked}"', "") if any(c.isdigit() for c in asked) else text


def page_leaks(client: Client, world) -> list[tuple[str, int, str]]:
    """Every named URL that shows the world's team to `client`: (name, status, what it showed). A URL of an
    object must answer as the same URL of an object that does not exist does (a 404, or the 403 of a role that
    may not use the page at all), and no answer may show the world's names or addresses."""
    found, marks, nowhere = [], traces(world), Nowhere(world)
    for name, params in url_names():
        if name in PUBLIC:
            continue
        response = _answer(client, name, params, world)
        if set(params) - SHARED_BY_ALL:
            missing = _answer(client, name, params, nowhere)
            if response.status_code != missing.status_code:
                found.append((name, response.status_code, f"answers otherwise than for no object ({missing.status_code})"))
                continue
        shown = [m for m in marks if m in _text(response)]
        if shown:
            found.append((name, response.status_code, ", ".join(shown)))
    return found


def api_leaks(token: str, world) -> list[tuple[str, int, str]]:
    """Every API operation that shows the world's team to a caller with `token`."""
    client, found = Client(raise_request_exception=False), []
    headers = {"Authorization": f"Bearer {token}"}
    values = {"batch_id": world["batch"].id, "document_id": world["flagged"].id, "number": 1, "name": "defined",
              "run_id": world["evaluation"].id}
    nowhere = {"batch_id": 10**9, "document_id": 10**9, "number": 1, "name": "no-such-type", "run_id": 10**9}
    marks = traces(world)

    def call(method: str, path: str, params: dict):
        _, body = API_ALLOWED[(method, path)]
        url = path.format(**params)
        if method == "get":
            return client.get(url, headers=headers)
        if body is None:
            return client.post(url, headers=headers)
        return client.post(url, body, content_type="application/json", headers=headers)

    for method, path in sorted(operations()):
        response = call(method, path, values)
        if "{" in path and response.status_code != (missing := call(method, path, nowhere)).status_code:
            found.append((f"{method} {path}", response.status_code,
                          f"answers otherwise than for no object ({missing.status_code})"))
            continue
        text = _text(response)
        shown = [m for m in marks if m in text]
        if shown:
            found.append((f"{method} {path}", response.status_code, ", ".join(shown)))
    return found


@pytest.mark.parametrize("role", ROLES)
def test_no_page_shows_a_member_of_another_team_a_trace_of_the_world(world, south, role):
    client = Client(raise_request_exception=False)
    client.force_login(south[role])
    assert page_leaks(client, world) == []


@pytest.mark.parametrize("role", ROLES)
def test_no_api_operation_answers_a_token_of_another_team_with_a_trace_of_the_world(world, south, role):
    token = token_create(user=south[role], name="leak walk", team=Team.objects.get(slug="south")).secret
    assert api_leaks(token, world) == []


def test_the_walk_finds_a_leak_when_one_views_scoping_is_removed(world, south, monkeypatch):
    """The walk is what stands behind the tests above: with the desk's access helper reading unscoped, it
    names the desk's pages."""
    from django.shortcuts import get_object_or_404

    import reviewer.desk.views as desk_views

    monkeypatch.setattr(desk_views, "get_for", lambda request, source, **lookup: get_object_or_404(source, **lookup))
    client = Client(raise_request_exception=False)
    client.force_login(south[R])
    leaked = {name for name, _, _ in page_leaks(client, world)}
    assert {"desk_document", "desk_history", "desk_page_image"} <= leaked


def test_the_world_is_all_there_for_its_own_team(world, users):
    """The walk's traces are real: the world's own members see them where the walk looks."""
    client = Client()
    client.force_login(users[A])
    assert {"batch_detail", "desk_document", "batch_list", "webhook_list", "user_list"} <= {
        name for name, _, _ in page_leaks(client, world)}


def test_a_member_of_both_teams_sees_both(world, users, south):
    both = south[R]
    give_roles(both, R)  # now a reviewer of the world's team too
    client = Client()
    client.force_login(both)
    assert client.get(reverse("desk_document", args=[world["flagged"].id])).status_code == 200
    assert "acta-72.pdf" in client.get(reverse("queue")).content.decode()


@pytest.mark.parametrize("name", ["desk_edit", "desk_take"])
def test_a_real_edit_of_another_teams_document_is_a_404_and_changes_nothing(world, south, name):
    flagged = world["flagged"]
    flagged.refresh_from_db()
    client = Client()
    client.force_login(south[R])
    word = Block.objects.filter(document=flagged, type="WORD").values_list("id", flat=True).first()
    data = {"field": "acta_id", "value": "1", "version": flagged.version, "blocks": str(word)}
    response = client.post(reverse(name, args=[flagged.id]), data, HTTP_HX_REQUEST="true")
    after = type(flagged).objects.get(pk=flagged.pk)
    assert response.status_code == 404
    assert (after.version, after.claimed_by_id) == (flagged.version, flagged.claimed_by_id)
