"""Sign-in with an OpenID Connect provider, beside the password form (on when OIDC_ISSUER is set).

mozilla-django-oidc runs the authorization-code flow: state, nonce and PKCE kept in the session, the code
exchanged for tokens, the ID token's RS256 signature checked against the provider's JWKS. Here, on top of it:

- its settings come from Proofdesk's own (reviewer/settings.py) when a sign-in happens, and the provider's
  endpoints from its discovery document, read at the first sign-in and kept an hour (the provider may start
  after the app). A backend is made for every authenticate() call, the password form's too: it reads nothing
  and asks nobody until the callback calls it.
- the ID token's issuer, audience (our client id; `azp` too when it names several) and lifetime are checked,
  which mozilla-django-oidc leaves out, and the userinfo answer must be about the ID token's subject.
- a person is known by the provider's `sub`, not by a name or an address: an account made here carries the mark
  of (issuer, sub) as its unusable password (identity_mark), so no schema change, and a name that is
  another account's (a password account, or another person of the provider) is never taken over.
- their memberships become the teams claim's grants at every sign-in (reviewer.teams.services
  .memberships_replace), so a group removed at the provider takes the access away at the next sign-in. A
  person whose claim names no team here is not signed in: with no membership there is nothing to see.

What a refusal says is for the person (a message on the login page); why is logged for the admin.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

import jwt
import requests
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import UNUSABLE_PASSWORD_PREFIX
from django.core.exceptions import SuspiciousOperation
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import NoReverseMatch, reverse
from django.views import View
from mozilla_django_oidc.auth import OIDCAuthenticationBackend
from mozilla_django_oidc.utils import import_from_settings
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

from reviewer.models import UsernameKey
from reviewer.roles import ROLES
from reviewer.teams.services import memberships_replace
from reviewer.users.auth_backend import UserWithRolesBackend
from reviewer.users.services import UsernameTaken
from reviewer.users.usernames import username_key

logger = logging.getLogger(__name__)

DISCOVERY_SECONDS = 3600  # how long the provider's discovery document is kept before it is read again
ALGORITHM = "RS256"
LEEWAY_SECONDS = 60  # clocks of the app and the provider may differ this much (exp, iat)
# What Proofdesk takes as a name (the account forms' own rule); a claim outside it falls back to `sub`.
USERNAME = re.compile(r"^[\w.@+-]{1,150}\Z")
OAUTH_ERROR = re.compile(r"^[a-z_]{1,40}\Z")
# mozilla-django-oidc's switches, fixed: the code flow with nonce and PKCE, RS256 signatures checked against the
# provider's keys (never an unsigned token), accounts made at a first sign-in, no token kept in the session.
FIXED = {
    "OIDC_RP_SIGN_ALGO": ALGORITHM, "OIDC_USE_NONCE": True, "OIDC_USE_PKCE": True, "OIDC_VERIFY_KID": True,
    "OIDC_ALLOW_UNSECURED_JWT": False, "OIDC_VERIFY_SSL": True, "OIDC_PROXY": None, "OIDC_CREATE_USER": True,
    "OIDC_STORE_ACCESS_TOKEN": False, "OIDC_STORE_ID_TOKEN": False, "OIDC_TOKEN_USE_BASIC_AUTH": False,
    "OIDC_AUTH_REQUEST_EXTRA_PARAMS": {}, "OIDC_RP_IDP_SIGN_KEY": None,
}


class SignInRefused(Exception):
    """The provider signed the person in, but Proofdesk will not; the message is for them."""


class ProviderUnavailable(Exception):
    """The provider's discovery document could not be read or is not the configured issuer's."""


def oidc_configured() -> bool:
    return bool(getattr(settings, "OIDC_ISSUER", ""))


def provider_name() -> str:
    return settings.OIDC_PROVIDER_NAME or urlsplit(settings.OIDC_ISSUER).hostname or settings.OIDC_ISSUER


def oidc_setting(name: str, *default):
    """What mozilla-django-oidc asks Django's settings for, answered from Proofdesk's settings of the moment."""
    if name in FIXED:
        return FIXED[name]
    if name == "OIDC_RP_SCOPES":
        return settings.OIDC_SCOPES
    if name == "OIDC_RP_CLIENT_ID":
        return settings.OIDC_CLIENT_ID
    if name == "OIDC_RP_CLIENT_SECRET":
        return settings.OIDC_CLIENT_SECRET
    if name == "OIDC_TIMEOUT":
        return settings.OIDC_TIMEOUT
    return import_from_settings(name, *default)


# ---- the provider's endpoints


@dataclass(frozen=True)
class Endpoints:
    authorization: str
    token: str
    jwks: str
    userinfo: str  # "" when the provider has none: the ID token's claims are all there is


_discovered: dict[str, tuple[float, dict]] = {}
_discovered_lock = threading.Lock()


def _discovery(issuer: str) -> dict:
    """The issuer's discovery document (OpenID Connect Discovery 1.0), read at first use and kept an hour."""
    with _discovered_lock:
        kept = _discovered.get(issuer)
    if kept and time.monotonic() - kept[0] < DISCOVERY_SECONDS:
        return kept[1]
    url = issuer.rstrip("/") + "/.well-known/openid-configuration"
    try:
        response = requests.get(url, timeout=settings.OIDC_TIMEOUT)
        response.raise_for_status()
        document = response.json()
    except (requests.RequestException, ValueError) as exc:
        raise ProviderUnavailable(f"could not read {url}: {exc}") from None
    if not isinstance(document, dict) or document.get("issuer") != issuer:
        found = document.get("issuer") if isinstance(document, dict) else None
        raise ProviderUnavailable(f"{url} names the issuer {found!r}, not OIDC_ISSUER={issuer!r}")
    with _discovered_lock:
        _discovered[issuer] = (time.monotonic(), document)
    return document


def oidc_endpoints() -> Endpoints:
    """Each endpoint given in the settings, else the discovery document's; the document is read only when one of
    the three the flow needs (authorization, token, keys) is not given."""
    given = Endpoints(authorization=settings.OIDC_AUTHORIZATION_ENDPOINT, token=settings.OIDC_TOKEN_ENDPOINT,
                      jwks=settings.OIDC_JWKS_URI, userinfo=settings.OIDC_USERINFO_ENDPOINT)
    if given.authorization and given.token and given.jwks:
        return given
    document = _discovery(settings.OIDC_ISSUER)
    found = Endpoints(authorization=given.authorization or document.get("authorization_endpoint") or "",
                      token=given.token or document.get("token_endpoint") or "",
                      jwks=given.jwks or document.get("jwks_uri") or "",
                      userinfo=given.userinfo or document.get("userinfo_endpoint") or "")
    if not (found.authorization and found.token and found.jwks):
        raise ProviderUnavailable(f"the discovery document of {settings.OIDC_ISSUER} lacks an endpoint: {found}")
    return found


# ---- who the person is, and what they may do


def identity_mark(issuer: str, sub: str) -> str:
    """The password column of an account made by a sign-in with this provider's person: unusable (it starts with
    Django's mark of an unusable password, so no password ever matches it) and theirs alone."""
    digest = hashlib.sha256(f"{issuer}\n{sub}".encode()).hexdigest()
    return f"{UNUSABLE_PASSWORD_PREFIX}oidc-sha256${digest}"


def team_grants(claims: dict, claim: str) -> list[tuple[str, str]]:
    """The (team slug, role) pairs of the claim's `<team-slug>:<role>` values; other values are left out."""
    values = claims.get(claim)
    if isinstance(values, str):
        values = [values]
    if not isinstance(values, list | tuple):
        return []
    grants = []
    for value in values:
        if not isinstance(value, str) or value.count(":") != 1:
            continue
        slug, role = value.split(":")
        if slug and role in ROLES:
            grants.append((slug, role))
    return grants


def username_from(claims: dict) -> str:
    """preferred_username, else sub, as Proofdesk stores a name; "" when neither is a name here."""
    user_model = get_user_model()
    for candidate in (claims.get("preferred_username"), claims.get("sub")):
        if isinstance(candidate, str):
            name = user_model.normalize_username(candidate.strip())
            if USERNAME.match(name):
                return name
    return ""


def _no_team(name: str) -> SignInRefused:
    return SignInRefused(f"Your account at {name} gives you no team on this Proofdesk, so you were not signed "
                         f"in. Ask an administrator to add you to a team's group there.")


class OidcBackend(OIDCAuthenticationBackend):
    """mozilla-django-oidc's backend on Proofdesk's settings, accounts and memberships. Reads the signed-in user as
    the password backend does (UserWithRolesBackend), so request.user carries its memberships."""

    get_settings = staticmethod(oidc_setting)

    def __init__(self, *args, **kwargs) -> None:
        # Nothing read here: Django makes a backend for every authenticate() call, the password form's included.
        self.UserModel = get_user_model()

    def authenticate(self, request, **kwargs):
        if request is None or "nonce" not in kwargs or not oidc_configured():
            return None  # only the callback (below) calls with a nonce: a password sign-in passes by
        endpoints = oidc_endpoints()
        self.OIDC_OP_TOKEN_ENDPOINT = endpoints.token
        self.OIDC_OP_JWKS_ENDPOINT = endpoints.jwks
        self.OIDC_OP_USER_ENDPOINT = endpoints.userinfo
        self.OIDC_RP_CLIENT_ID = settings.OIDC_CLIENT_ID
        self.OIDC_RP_CLIENT_SECRET = settings.OIDC_CLIENT_SECRET
        self.OIDC_RP_SIGN_ALGO = ALGORITHM
        self.OIDC_RP_IDP_SIGN_KEY = None
        self.issuer = settings.OIDC_ISSUER
        return super().authenticate(request, **kwargs)

    def get_user(self, user_id):
        return UserWithRolesBackend().get_user(user_id)

    # -- the tokens

    def verify_token(self, token, **kwargs):
        try:
            return super().verify_token(token, **kwargs)
        except (KeyError, ValueError, jwt.PyJWTError) as exc:  # no kid, a token that is not a JWT, a bad key
            raise SuspiciousOperation(f"The ID token was refused: {exc!r}") from None

    def get_payload_data(self, token, key):
        return self._verify_jws(token, key)  # always the signature: never an unsigned token

    def _verify_jws(self, payload, key):
        """The signature with the provider's key, then the issuer, our client id as the audience, the lifetime."""
        header = jwt.get_unverified_header(payload)
        if header.get("alg") != ALGORITHM:
            raise SuspiciousOperation(f"The ID token is signed with {header.get('alg')!r}, not {ALGORITHM}.")
        try:
            claims = jwt.decode(payload, key, algorithms=[ALGORITHM], audience=self.OIDC_RP_CLIENT_ID,
                                issuer=self.issuer, leeway=LEEWAY_SECONDS,
                                options={"require": ["iss", "sub", "aud", "exp", "iat"]})
        except jwt.InvalidTokenError as exc:
            raise SuspiciousOperation(f"The ID token was refused: {type(exc).__name__}: {exc}") from None
        audiences = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
        if ("azp" in claims or len(audiences) > 1) and claims.get("azp") != self.OIDC_RP_CLIENT_ID:
            raise SuspiciousOperation(f"The ID token was refused: it was issued to {claims.get('azp')!r} (azp).")
        return claims

    def get_userinfo(self, access_token, id_token, payload):
        """The ID token's claims with the userinfo endpoint's over them; that answer must be about the same
        subject (OpenID Connect Core 5.3.2)."""
        claims = dict(payload)
        if self.OIDC_OP_USER_ENDPOINT:
            userinfo = super().get_userinfo(access_token, id_token, payload)
            if not isinstance(userinfo, dict) or userinfo.get("sub") != payload["sub"]:
                raise SuspiciousOperation("The userinfo endpoint answered about another subject.")
            claims.update(userinfo)
        return claims

    # -- the account

    def verify_claims(self, claims) -> bool:
        return isinstance(claims.get("sub"), str) and bool(claims["sub"])

    def filter_users_by_claims(self, claims):
        return self.UserModel.objects.filter(password=identity_mark(self.issuer, claims["sub"]))

    def get_or_create_user(self, access_token, id_token, payload):
        user = super().get_or_create_user(access_token, id_token, payload)
        logger.info("OIDC sign-in of %s (sub %s of %s)", user.username, payload.get("sub"), self.issuer)
        return user

    def create_user(self, claims):
        """A first sign-in: an account under the provider's name for the person, with the claim's memberships, or
        nothing at all (no team here, or the name is another account's)."""
        name = provider_name()
        username = username_from(claims)
        if not username:
            raise SignInRefused(f"{name} gave neither a user name nor a subject Proofdesk can take as a name.")
        taken = SignInRefused(f"The name {username} belongs to another account on this Proofdesk, so you were not "
                              f"signed in with {name}. Ask an administrator.")
        if UsernameKey.objects.filter(key=username_key(username)).exists():
            logger.warning("OIDC sign-in refused: %s (sub %s) names an existing account", username, claims["sub"])
            raise taken
        try:
            with transaction.atomic():
                user = self.UserModel(username=username, email=self._email(claims))
                user.password = identity_mark(self.issuer, claims["sub"])
                user.save()  # its name's key is kept by the save (reviewer.apps): UsernameTaken if another took it
                if not memberships_replace(user=user, grants=team_grants(claims, settings.OIDC_TEAMS_CLAIM)):
                    raise _no_team(name)  # and the account is not made
        except UsernameTaken:
            raise taken from None
        except SignInRefused:
            logger.warning("OIDC sign-in refused: %s (sub %s) has no team here", username, claims["sub"])
            raise
        return user

    def update_user(self, user, claims):
        """A later sign-in: the memberships become the claim's (none: every one is taken away, and no sign-in);
        the name follows the provider's when it is free, the address always."""
        if not user.is_active:
            logger.warning("OIDC sign-in refused: %s (sub %s) is deactivated", user.username, claims["sub"])
            raise SignInRefused("Your account on this Proofdesk is deactivated. Ask an administrator.")
        if not memberships_replace(user=user, grants=team_grants(claims, settings.OIDC_TEAMS_CLAIM)):
            logger.warning("OIDC sign-in refused: %s (sub %s) has no team here any more", user.username, claims["sub"])
            raise _no_team(provider_name())
        changed = []
        email = self._email(claims)
        if email != user.email:
            user.email = email
            changed.append("email")
        username = username_from(claims)
        if username and username != user.username:
            free = not UsernameKey.objects.filter(key=username_key(username)).exclude(user=user).exists()
            if free:
                user.username = username
                changed.append("username")
            else:
                logger.info("OIDC: %s keeps its name; %s is another account's", user.username, username)
        if changed:
            try:
                with transaction.atomic():
                    user.save(update_fields=changed)
            except UsernameTaken:  # taken since the check: keep the name
                user.refresh_from_db(fields=["username", "email"])
        return user

    @staticmethod
    def _email(claims: dict) -> str:
        email = claims.get("email")
        return email.strip()[:254] if isinstance(email, str) else ""


# ---- the two views: to the provider, and back


class _ConfiguredOnly:
    def dispatch(self, request, *args, **kwargs):
        if not oidc_configured():
            raise Http404("Sign-in with OpenID Connect is not configured.")
        return super().dispatch(request, *args, **kwargs)


def _unavailable(request: HttpRequest, exc: Exception) -> HttpResponse:
    logger.warning("OIDC provider unavailable: %s", exc)
    messages.error(request, f"{provider_name()} cannot be reached just now. Try again later, or log in with "
                            f"your password if you have one.")
    return redirect("login")


class SignInView(_ConfiguredOnly, OIDCAuthenticationRequestView):
    """To the provider's sign-in page, with a new state, nonce and PKCE verifier kept in the session."""

    get_settings = staticmethod(oidc_setting)

    def __init__(self, **kwargs) -> None:
        View.__init__(self, **kwargs)  # the endpoint is read in get(), when someone asks

    def get(self, request: HttpRequest) -> HttpResponse:
        try:
            self.OIDC_OP_AUTH_ENDPOINT = oidc_endpoints().authorization
        except ProviderUnavailable as exc:
            return _unavailable(request, exc)
        self.OIDC_RP_CLIENT_ID = settings.OIDC_CLIENT_ID
        return super().get(request)


class CallbackView(_ConfiguredOnly, OIDCAuthenticationCallbackView):
    """Back from the provider: the code is exchanged and checked (OidcBackend), the person signed in or told why
    not. A state this session did not start (a replayed or forged callback) is refused as any other failure."""

    get_settings = staticmethod(oidc_setting)

    def get(self, request: HttpRequest) -> HttpResponse:
        try:
            return super().get(request)
        except SignInRefused as exc:
            messages.error(request, str(exc))
        except ProviderUnavailable as exc:
            return _unavailable(request, exc)
        except (SuspiciousOperation, requests.RequestException, jwt.PyJWTError) as exc:
            logger.warning("OIDC sign-in refused: %s", exc)
            messages.error(request, f"Signing in with {provider_name()} did not succeed. Try again.")
        return redirect("login")

    def login_failure(self) -> HttpResponse:
        error = self.request.GET.get("error", "")
        logger.warning("OIDC sign-in did not complete: %r", error or "the provider's answer was refused")
        error = error if OAUTH_ERROR.match(error) else ""  # an error code (access_denied), never a sentence
        messages.error(self.request, f"Signing in with {provider_name()} did not succeed"
                                     f"{f' ({error})' if error else ''}. Try again.")
        return redirect("login")


sign_in = SignInView.as_view()
callback = CallbackView.as_view()


def oidc_sign_in_offer() -> dict | None:
    """What the login page offers beside the password form (a callable, so each request asks anew): the
    provider's name and the sign-in URL, or None when OpenID Connect is off."""
    if not oidc_configured():
        return None
    try:
        return {"name": provider_name(), "url": reverse("oidc_authentication_init")}
    except NoReverseMatch:  # configured after this process built its URLs: no way in yet
        return None
