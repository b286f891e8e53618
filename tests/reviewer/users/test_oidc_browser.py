"""In a real browser: signing in with the OpenID Connect provider from the login page (the provider is a process of
its own, tests/support/oidc_provider), as a person new to Proofdesk, and as one it has no team for."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from reviewer.models import Membership
from reviewer.teams.services import team_create
from tests.support.browser import screenshot
from tests.support.oidc_provider.process import OidcProvider
from tests.support.oidc_provider.signin import PASSWORD, PROVIDER_NAME, configure_app

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def provider(tmp_path_factory):
    with OidcProvider(tmp_path_factory.mktemp("provider")) as running:
        yield running


@pytest.fixture
def app(provider, live_server, settings):
    configure_app(settings, provider, live_server.url)
    for slug in ("north", "south"):
        team_create(name=slug.title(), slug=slug)
    return live_server.url


def sign_in_at_the_provider(page, provider: OidcProvider, app: str, username: str) -> None:
    page.goto(app + "/login/")
    expect(page.locator("input[name=password]")).to_be_visible()  # the password form stays
    page.get_by_role("link", name=f"Sign in with {PROVIDER_NAME}").click()
    page.wait_for_url(re.compile(re.escape(provider.url) + "/accounts/login/"))
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.get_by_role("button", name="Sign in to the provider").click()
    page.wait_for_url(re.compile(re.escape(provider.url) + "/openid/authorize"))  # the provider asks for consent
    page.get_by_role("button", name="Authorize").click()


def test_a_new_person_signs_in_with_the_provider_and_works_with_the_roles_of_the_claims(app, provider, page):
    provider.person("nadia", password=PASSWORD, email="nadia@example.org",
                    groups=["north:reviewer", "south:supervisor", "west:admin"])
    sign_in_at_the_provider(page, provider, app, "nadia")

    page.wait_for_url(app + "/queue/")  # a reviewer's start page
    expect(page.locator("h1").first).to_have_text("Review queue")
    expect(page.locator(".who")).to_contain_text("nadia")
    nav = page.locator("header nav")
    expect(nav.get_by_role("link", name="Queue")).to_be_visible()
    expect(nav.get_by_role("link", name="Audit")).to_be_visible()  # a supervisor's, from the south team
    expect(nav.get_by_role("link", name="Users")).to_have_count(0)  # admin of a team this instance lacks: nothing
    screenshot(page, "oidc-signed-in")
    assert set(Membership.objects.filter(user__username="nadia").values_list("team__slug", "role")) == {
        ("north", "reviewer"), ("south", "supervisor")}


def test_a_person_the_provider_gives_no_team_here_is_told_so_on_the_login_page(app, provider, page):
    provider.person("wendy", password=PASSWORD, groups=["west:reviewer"])
    sign_in_at_the_provider(page, provider, app, "wendy")

    page.wait_for_url(app + "/login/")
    expect(page.locator(".messages")).to_contain_text("gives you no team on this Proofdesk")
    expect(page.locator("header nav")).to_have_count(0)  # nobody signed in
    screenshot(page, "oidc-refused")
    assert not User.objects.filter(username="wendy").exists()
    assert not Membership.objects.exists()
