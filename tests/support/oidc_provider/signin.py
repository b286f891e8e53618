"""The app configured for the test provider, and the authorization-code flow walked over HTTP as a browser
would (cookies, redirects, the provider's login and consent forms), one step at a time so that a test can stop,
change or replay one."""

from __future__ import annotations

from html.parser import HTMLParser
from importlib import import_module
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit, urlunsplit

import requests

from tests.support.oidc_provider.process import OidcProvider

CLIENT_ID = "proofdesk"
CLIENT_SECRET = "proofdesk-client-secret"
PROVIDER_NAME = "Test IdP"
PASSWORD = "provider-password-7"


def configure_app(settings, provider: OidcProvider, app_url: str, **overrides) -> None:
    """Register the app at the provider as a confidential client whose redirect URI is the app's callback, and
    configure the app (pytest-django's `settings`) as OIDC_ISSUER and the rest would at start-up."""
    # The app's URLs are built before the settings change, as in any process: reviewer/users/urls.py reads
    # OIDC_ISSUER once, when imported, and must not see a test's value then.
    import_module("tests.support.oidc_provider.app_urls")
    provider.client(CLIENT_ID, CLIENT_SECRET, [app_url + "/oidc/callback/"])
    values = {
        "OIDC_ISSUER": provider.issuer, "OIDC_CLIENT_ID": CLIENT_ID, "OIDC_CLIENT_SECRET": CLIENT_SECRET,
        "OIDC_PROVIDER_NAME": PROVIDER_NAME, "ROOT_URLCONF": "tests.support.oidc_provider.app_urls",
        "AUTHENTICATION_BACKENDS": ["reviewer.users.auth_backend.UserWithRolesBackend",
                                    "reviewer.users.oidc.OidcBackend"],
    }
    values.update(overrides)
    for name, value in values.items():
        setattr(settings, name, value)


class _Form(HTMLParser):
    """The first form of a page: its action and the values it would send."""

    def __init__(self) -> None:
        super().__init__()
        self.action: str | None = None
        self.fields: dict[str, str] = {}
        self._done = False

    def handle_starttag(self, tag, attrs) -> None:
        attrs = dict(attrs)
        if tag == "form" and self.action is None:
            self.action = attrs.get("action") or ""
        elif (tag == "input" and self.action is not None and not self._done and attrs.get("name")
              and attrs.get("type") != "submit"):
            self.fields[attrs["name"]] = attrs.get("value") or ""

    def handle_endtag(self, tag) -> None:
        if tag == "form":
            self._done = True


def with_query(url: str, **changes: str) -> str:
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))
    query.update(changes)
    return urlunsplit(parts._replace(query=urlencode(query)))


class Browserless:
    """One browser's cookies. start() asks the app to sign in and returns where it sends the browser (the
    provider's authorization URL); at_provider() signs in there, consents, and returns where the provider sends
    the browser back (the app's callback with a code and the state); finish() goes there."""

    def __init__(self, app_url: str) -> None:
        self.app_url = app_url
        self.http = requests.Session()
        self.http.trust_env = False

    def start(self, next_url: str = "") -> str:
        response = self.http.get(self.app_url + "/oidc/authenticate/", params={"next": next_url} if next_url else None,
                                 allow_redirects=False, timeout=30)
        assert response.status_code == 302, response.status_code
        return response.headers["Location"]

    def at_provider(self, authorize_url: str, username: str, password: str = PASSWORD, *, consent: bool = True) -> str:
        response = self.http.get(authorize_url, allow_redirects=False, timeout=30)
        for _ in range(12):
            if response.is_redirect:
                location = urljoin(response.url, response.headers["Location"])
                if location.startswith(self.app_url):
                    return location
                response = self.http.get(location, allow_redirects=False, timeout=30)
                continue
            form = _Form()
            form.feed(response.text)
            assert form.action is not None, f"no form on {response.url}: {response.status_code} {response.text[:300]}"
            fields = dict(form.fields)
            if "password" in fields:
                fields.update(username=username, password=password)
            elif consent:  # the consent page: Authorize (else Decline, a button without a name)
                fields["allow"] = "Authorize"
            response = self.http.post(urljoin(response.url, form.action), data=fields, allow_redirects=False,
                                      timeout=30)
        raise AssertionError(f"the provider never sent the browser back to the app; last at {response.url}")

    def finish(self, callback_url: str) -> requests.Response:
        return self.http.get(callback_url, allow_redirects=False, timeout=30)

    def sign_in(self, username: str, password: str = PASSWORD) -> requests.Response:
        return self.finish(self.at_provider(self.start(), username, password))

    def signed_in_user_id(self) -> int | None:
        """Whose the app's session cookie is, as the app's session store says (None: nobody's)."""
        from django.conf import settings
        from django.contrib.auth import SESSION_KEY

        key = self.http.cookies.get(settings.SESSION_COOKIE_NAME)
        if not key:
            return None
        user_id = import_module(settings.SESSION_ENGINE).SessionStore(session_key=key).get(SESSION_KEY)
        return int(user_id) if user_id is not None else None

    def get(self, path: str) -> requests.Response:
        return self.http.get(self.app_url + path, allow_redirects=False, timeout=30)

    def login_page(self) -> str:
        return self.http.get(self.app_url + "/login/", timeout=30).text
