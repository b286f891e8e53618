"""Sign-in with OpenID Connect against a real provider (tests/support/oidc_provider), a process of its own, walked
over HTTP as a browser would: every sign-in goes through mozilla-django-oidc's code and the provider's; only
endpoints and keys differ. A refusal leaves nobody signed in and no account or membership made."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest
from django.contrib.auth.models import User
from django.urls import NoReverseMatch, reverse

from reviewer.models import Membership
from reviewer.teams.services import memberships_replace, team_create
from reviewer.users.oidc import identity_mark
from tests.support.accounts import PASSWORD as APP_PASSWORD
from tests.support.oidc_provider.process import OidcProvider
from tests.support.oidc_provider.signin import (
    CLIENT_ID,
    CLIENT_SECRET,
    PASSWORD,
    PROVIDER_NAME,
    Browserless,
    configure_app,
    with_query,
)
from tests.support.paths import ROOT

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(scope="module")
def provider(tmp_path_factory):
    with OidcProvider(tmp_path_factory.mktemp("provider")) as running:
        running.client("other-app", "other-app-secret", ["https://other.example.org/callback"])
        yield running


@pytest.fixture
def app(provider, live_server, settings):
    """The app, configured for the provider; its URL."""
    configure_app(settings, provider, live_server.url)
    provider.issue_id_tokens_for(None)
    yield live_server.url
    provider.issue_id_tokens_for(None)


@pytest.fixture
def teams(db):
    return {slug: team_create(name=slug.title(), slug=slug) for slug in ("north", "south")}


def memberships(username: str) -> set[tuple[str, str]]:
    return set(Membership.objects.filter(user__username=username).values_list("team__slug", "role"))


def refused_logs(caplog) -> str:
    return "\n".join(r.getMessage() for r in caplog.records if r.name.startswith(("reviewer.users.oidc",
                                                                                  "mozilla_django_oidc")))


def assert_refused(browser: Browserless, response, *, accounts: int = 0, members: int = 0) -> None:
    """Sent back to the login page, nobody signed in, no account or membership made."""
    assert response.status_code == 302 and response.headers["Location"] == "/login/", response.status_code
    assert browser.signed_in_user_id() is None
    assert browser.get("/").headers["Location"].startswith("/login/")
    assert (User.objects.count(), Membership.objects.count()) == (accounts, members)


# ---- signing in


def test_a_new_person_signs_in_with_the_teams_and_roles_of_the_claims(app, provider, teams):
    provider.person("nadia", password=PASSWORD, email="nadia@example.org",
                    groups=["north:reviewer", "south:supervisor", "east:admin", "north:owner", "staff", "a:b:c"])
    browser = Browserless(app)
    response = browser.sign_in("nadia")
    assert response.status_code == 302 and response.headers["Location"] == "/"
    user = User.objects.get(pk=browser.signed_in_user_id())
    assert (user.username, user.email, user.has_usable_password()) == ("nadia", "nadia@example.org", False)
    # a team this instance lacks, a role that is none, and values of another form are left out
    assert memberships("nadia") == {("north", "reviewer"), ("south", "supervisor")}
    assert browser.get("/").headers["Location"] == "/queue/"  # the reviewer's start page
    assert browser.get("/audit/").status_code == 200  # a supervisor's page
    assert browser.get("/users/").status_code == 403  # an admin's


def test_a_removed_group_takes_the_access_away_at_the_next_sign_in(app, provider, teams):
    provider.person("ravi", password=PASSWORD, groups=["north:reviewer", "south:supervisor"])
    browser = Browserless(app)
    browser.sign_in("ravi")
    assert memberships("ravi") == {("north", "reviewer"), ("south", "supervisor")}
    assert browser.get("/audit/").status_code == 200

    provider.person("ravi", groups=["north:reviewer"])
    again = Browserless(app)
    assert again.sign_in("ravi").headers["Location"] == "/"
    assert again.signed_in_user_id() == browser.signed_in_user_id()  # the same account
    assert memberships("ravi") == {("north", "reviewer")}
    assert again.get("/audit/").status_code == 403
    assert browser.get("/audit/").status_code == 403  # the session signed in before too: roles are read per request


def test_the_sign_in_lands_on_the_page_asked_for(app, provider, teams):
    provider.person("paul", password=PASSWORD, groups=["south:supervisor"])
    browser = Browserless(app)
    response = browser.finish(browser.at_provider(browser.start(next_url="/audit/"), "paul"))
    assert response.headers["Location"] == "/audit/"
    assert browser.get("/audit/").status_code == 200


def test_a_person_who_declines_at_the_provider_is_not_signed_in(app, provider, teams, caplog):
    provider.person("dina", password=PASSWORD, groups=["north:reviewer"])
    browser = Browserless(app)
    callback = browser.at_provider(browser.start(), "dina", consent=False)
    assert "error=access_denied" in callback
    assert_refused(browser, browser.finish(callback))
    assert "did not succeed (access_denied)" in browser.login_page()


def test_a_person_whose_claims_name_no_team_here_is_not_signed_in_and_no_account_is_made(app, provider, teams):
    provider.person("wendy", password=PASSWORD, groups=["west:reviewer", "staff"])
    browser = Browserless(app)
    assert_refused(browser, browser.sign_in("wendy"))
    assert "gives you no team on this Proofdesk" in browser.login_page()


def test_a_person_whose_last_group_is_removed_loses_every_membership_and_is_not_signed_in(app, provider, teams):
    provider.person("lena", password=PASSWORD, groups=["north:reviewer"])
    before = Browserless(app)
    before.sign_in("lena")
    provider.person("lena", groups=[])
    browser = Browserless(app)
    response = browser.sign_in("lena")
    assert response.headers["Location"] == "/login/" and browser.signed_in_user_id() is None
    assert memberships("lena") == set()
    assert before.get("/queue/").status_code == 403  # the earlier session has nothing left to see


def test_a_deactivated_account_is_not_signed_in_by_the_provider(app, provider, teams):
    provider.person("dora", password=PASSWORD, groups=["north:reviewer"])
    Browserless(app).sign_in("dora")
    User.objects.filter(username="dora").update(is_active=False)
    browser = Browserless(app)
    browser.sign_in("dora")
    assert browser.signed_in_user_id() is None
    assert "deactivated" in browser.login_page()


# ---- names and who is who


def test_a_name_that_belongs_to_a_password_account_is_never_taken_over(app, provider, teams):
    alice = User.objects.create_user(username="alice", password=APP_PASSWORD)
    memberships_replace(user=alice, grants=[("south", "admin")])
    for name in ("alice", "ALICE"):  # one name to Proofdesk (reviewer.users.usernames)
        provider.person(name, password=PASSWORD, groups=["north:admin"])
        browser = Browserless(app)
        response = browser.sign_in(name)
        assert response.headers["Location"] == "/login/" and browser.signed_in_user_id() is None
        assert "belongs to another account" in browser.login_page()
    assert User.objects.count() == 1
    assert memberships("alice") == {("south", "admin")}
    alice.refresh_from_db()
    assert alice.check_password(APP_PASSWORD)


def test_a_person_is_known_by_their_subject_when_their_name_changes_at_the_provider(app, provider, teams):
    provider.person("omar", password=PASSWORD, groups=["north:reviewer"])
    browser = Browserless(app)
    browser.sign_in("omar")
    first = browser.signed_in_user_id()
    provider.person("omar", new_username="omar.k", email="omar@example.org")
    again = Browserless(app)
    again.sign_in("omar.k")
    assert again.signed_in_user_id() == first
    assert User.objects.filter(pk=first).values_list("username", "email").get() == ("omar.k", "omar@example.org")


def test_someone_who_takes_a_name_at_the_provider_does_not_get_the_account_of_that_name(app, provider, teams):
    sub = provider.person("kim", password=PASSWORD, groups=["north:admin"])
    Browserless(app).sign_in("kim")
    provider.person("kim", new_username="kim.old")
    provider.person("kim", password=PASSWORD, groups=["north:admin"])  # a new person of the provider, named kim
    browser = Browserless(app)
    browser.sign_in("kim")
    assert browser.signed_in_user_id() is None
    assert "belongs to another account" in browser.login_page()
    assert User.objects.get(username="kim").password == identity_mark(provider.issuer, sub)


# ---- refusals of the tokens


def test_an_id_token_signed_with_a_key_the_app_does_not_trust_is_refused(app, provider, teams, settings,
                                                                         tmp_path, caplog):
    """A forger answering at the provider's endpoints (the authorization, token and userinfo ones the app is given)
    issues a token perfect but for its signature: its own key, under the real provider's key id and issuer. The
    app checks it with the keys of the real provider's discovery document."""
    with OidcProvider(tmp_path / "forger", site_url=provider.url, forged_kid=provider.key_ids()[0]) as forger:
        forger.client(CLIENT_ID, CLIENT_SECRET, [app + "/oidc/callback/"])
        configure_app(settings, provider, app, OIDC_AUTHORIZATION_ENDPOINT=forger.issuer + "/authorize",
                      OIDC_TOKEN_ENDPOINT=forger.issuer + "/token", OIDC_USERINFO_ENDPOINT=forger.issuer + "/userinfo")
        forger.person("mallory", password=PASSWORD, groups=["north:admin"])
        browser = Browserless(app)
        callback = browser.at_provider(browser.start(), "mallory")
        assert callback.startswith(app + "/oidc/callback/?")
        assert_refused(browser, browser.finish(callback))
    assert "InvalidSignatureError" in refused_logs(caplog)


def test_an_id_token_issued_to_another_client_is_refused(app, provider, teams, caplog):
    provider.person("otto", password=PASSWORD, groups=["north:admin"])
    provider.issue_id_tokens_for("other-app")  # signed by the provider's own key, for its other client
    browser = Browserless(app)
    assert_refused(browser, browser.sign_in("otto"))
    assert "InvalidAudienceError" in refused_logs(caplog)


def test_an_id_token_whose_nonce_is_not_the_one_this_session_asked_for_is_refused(app, provider, teams, caplog):
    """The authorization request is changed on its way (another nonce): state and PKCE still match, the
    provider issues a valid token with the nonce it was given, and the app refuses it."""
    provider.person("nina", password=PASSWORD, groups=["north:reviewer"])
    browser = Browserless(app)
    asked = browser.start()
    callback = browser.at_provider(with_query(asked, nonce="chosen-by-an-attacker"), "nina")
    assert_refused(browser, browser.finish(callback))
    assert "JWT Nonce verification failed" in refused_logs(caplog)


def test_a_replayed_callback_signs_nobody_in(app, provider, teams, caplog):
    provider.person("vera", password=PASSWORD, groups=["north:reviewer"])
    victim = Browserless(app)
    callback = victim.at_provider(victim.start(), "vera")
    assert victim.finish(callback).headers["Location"] == "/"
    accounts = User.objects.count()

    members = Membership.objects.count()
    thief = Browserless(app)  # the callback URL seen elsewhere (a log, a referrer): no state of this session
    assert_refused(thief, thief.finish(callback), accounts=accounts, members=members)
    # in the session that started it, its state (and so its nonce) was used up by the first use
    again = victim.finish(callback)
    assert again.headers["Location"] == "/login/"
    assert "state not found" in refused_logs(caplog)
    assert memberships("vera") == {("north", "reviewer")}


# ---- the password form, a provider away, no provider at all


def test_the_password_form_stays_beside_the_provider(app, users, client):
    page = client.get("/login/").content.decode()
    assert f"Sign in with {PROVIDER_NAME}" in page and 'name="password"' in page
    response = client.post("/login/", {"username": "reviewer", "password": APP_PASSWORD})
    assert response.status_code == 302
    assert client.session["_auth_user_backend"] == "reviewer.users.auth_backend.UserWithRolesBackend"


def test_a_provider_that_cannot_be_reached_is_said_so_and_the_login_page_still_works(app, settings, client):
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    settings.OIDC_ISSUER = f"http://127.0.0.1:{port}/openid"  # nothing listens there: read at the first sign-in
    assert f"Sign in with {PROVIDER_NAME}" in client.get("/login/").content.decode()
    response = client.get("/oidc/authenticate/", follow=True)
    assert response.redirect_chain == [("/login/", 302)]
    assert "cannot be reached just now" in response.content.decode()


def test_a_discovery_document_of_another_issuer_is_not_trusted(app, provider, settings, client, caplog):
    settings.OIDC_ISSUER = provider.issuer + "/"  # the document says provider.issuer: not this one to the letter
    response = client.get("/oidc/authenticate/", follow=True)
    assert "cannot be reached just now" in response.content.decode()
    assert "names the issuer" in refused_logs(caplog)


def test_without_an_issuer_there_is_no_provider_to_sign_in_with(db, client, settings):
    assert not settings.OIDC_ISSUER
    assert "Sign in with" not in client.get("/login/").content.decode()
    with pytest.raises(NoReverseMatch):
        reverse("oidc_authentication_init")
    assert client.get("/oidc/authenticate/").status_code == 404
    settings.ROOT_URLCONF = "tests.support.oidc_provider.app_urls"  # URLs built with it, the setting gone since
    assert client.get("/oidc/authenticate/").status_code == 404
    assert client.get("/oidc/callback/?code=x&state=y").status_code == 404


# ---- the settings, read from the environment at start-up


SHOW = ("import json, django; django.setup(); from django.conf import settings; from django.urls import reverse\n"
        "try: url = reverse('oidc_authentication_callback')\nexcept Exception: url = None\n"
        "print(json.dumps({'backends': settings.AUTHENTICATION_BACKENDS, 'callback': url,"
        " 'claim': settings.OIDC_TEAMS_CLAIM}))")


def start_app(tmp_path, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OIDC_", "PROOFDESK_ENV"))}
    base.update(DJANGO_SETTINGS_MODULE="reviewer.settings", PROOFDESK_VAR_DIR=str(tmp_path), **env)
    return subprocess.run([sys.executable, "-c", SHOW], cwd=ROOT, env=base, capture_output=True, text=True,
                          timeout=120)


def test_the_settings_come_from_the_environment_and_a_bad_value_stops_the_start(tmp_path):
    off = start_app(tmp_path)
    assert off.returncode == 0, off.stderr
    assert json.loads(off.stdout) == {"backends": ["reviewer.users.auth_backend.UserWithRolesBackend"],
                                      "callback": None, "claim": "groups"}

    on = start_app(tmp_path, OIDC_ISSUER="https://login.example.org/realms/proofdesk", OIDC_CLIENT_ID="proofdesk",
                   OIDC_CLIENT_SECRET="s3cret", OIDC_TEAMS_CLAIM="roles")
    assert on.returncode == 0, on.stderr
    assert json.loads(on.stdout) == {"backends": ["reviewer.users.auth_backend.UserWithRolesBackend",
                                                  "reviewer.users.oidc.OidcBackend"],
                                     "callback": "/oidc/callback/", "claim": "roles"}

    no_secret = start_app(tmp_path, OIDC_ISSUER="https://login.example.org", OIDC_CLIENT_ID="proofdesk")
    assert no_secret.returncode != 0 and "OIDC_CLIENT_SECRET must be set" in no_secret.stderr
    plain = start_app(tmp_path, OIDC_ISSUER="http://login.example.org", OIDC_CLIENT_ID="p", OIDC_CLIENT_SECRET="s",
                      PROOFDESK_ENV="production", SECRET_KEY="k" * 50, ALLOWED_HOSTS="proofdesk.example.org")
    assert plain.returncode != 0 and "OIDC_ISSUER='http://login.example.org' is not an https:// URL" in plain.stderr
