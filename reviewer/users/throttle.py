"""Login throttling that a flood cannot slip past and a stranger cannot turn against other people.

Three counters, each with its own limit, all per LOGIN_LOCKOUT_SECONDS:
- per account (LOGIN_MAX_FAILURES): guessing one account's password stops after a few tries, from any
  number of addresses;
- per client address (LOGIN_MAX_FAILURES_PER_ADDRESS, higher): one address trying many accounts stops too.
  The address is the peer's, or the one a configured trusted proxy wrote (reviewer.client_address);
- per known device (LOGIN_MAX_FAILURES): a browser that logged into an account before carries a signed
  cookie naming that account. Its attempts for that account count on their own and skip the two counters
  above, so a stranger who exhausts an account's or an address's limit does not lock the account's owner
  out of her own browser (OWASP's "device cookies").

An attempt takes its slot before its password is checked, in one atomic row update in the database (on
PostgreSQL a row lock, on SQLite the write lock), so thirty parallel guesses get exactly the limit checked,
whatever cache the deployment has. A failed attempt keeps its slot; a successful one gives back the
address's and resets the account's and the device's.

An account is counted under its name as authentication will look it up (`account_name`), so "ｓｕｐ1", "ſup1"
and "𝐬up1", which the login form turns into "sup1", are one account with one limit.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.core import signing
from django.db import transaction
from django.db.models import Case, F, Value, When
from django.http import HttpResponse
from django.utils import timezone

from reviewer.models import LoginThrottle
from reviewer.users.usernames import username_key

DEVICE_COOKIE = "proofdesk_device"
_DEVICE_SALT = "proofdesk.login-device"


def _digest(text: str) -> str:
    return hashlib.sha256(text.strip().lower().encode()).hexdigest()[:32]  # no raw names or addresses stored


_NAME_MAX = User._meta.get_field(User.USERNAME_FIELD).max_length


def account_name(username: str) -> str:
    """The name the password is checked against: the login form strips it and NFKC-normalises it (Django's
    UsernameField), then the backend matches it exactly. Lower-cased besides, since no two accounts differ
    only in case (services.users), so an account's case variants share its limit too."""
    username = username.strip()
    if len(username) > _NAME_MAX:
        return username  # the form refuses it before any password check; normalising it only costs time
    return username_key(username)


def _account_digest(username: str) -> str:
    return _digest(account_name(username))


@dataclass(frozen=True)
class LoginAttempt:
    account_key: str
    address_key: str | None  # None for a known device
    device_key: str | None


def _take(key: str, *, now) -> int:
    """Count one attempt on `key` and return the count in the current window, atomically."""
    expires = now + timedelta(seconds=settings.LOGIN_LOCKOUT_SECONDS)
    with transaction.atomic():
        LoginThrottle.objects.get_or_create(key=key, defaults={"count": 0, "expires_at": expires})
        fresh = When(expires_at__lte=now, then=Value(1))
        LoginThrottle.objects.filter(key=key).update(
            count=Case(fresh, default=F("count") + 1),
            expires_at=Case(When(expires_at__lte=now, then=Value(expires)), default=F("expires_at")),
        )
        return LoginThrottle.objects.values_list("count", flat=True).get(key=key)


def _device_key(*, username: str, cookie: str | None) -> str | None:
    if not cookie:
        return None
    try:
        data = signing.loads(cookie, salt=_DEVICE_SALT, max_age=timedelta(days=settings.LOGIN_DEVICE_DAYS))
    except signing.BadSignature:
        return None
    if not isinstance(data, dict) or data.get("u") != _account_digest(username) or not isinstance(data.get("d"), str):
        return None
    return f"device:{_digest(data['d'])}"


def login_attempt_start(*, username: str, address: str, device_cookie: str | None = None) -> LoginAttempt | None:
    """Take this attempt's slots; None when a limit is reached (refuse without checking the password)."""
    now = timezone.now()
    LoginThrottle.objects.filter(expires_at__lt=now).delete()
    account_key = f"account:{_account_digest(username)}"
    device_key = _device_key(username=username, cookie=device_cookie)
    if device_key is not None:
        if _take(device_key, now=now) > settings.LOGIN_MAX_FAILURES:
            return None
        return LoginAttempt(account_key=account_key, address_key=None, device_key=device_key)
    address_key = f"address:{_digest(address)}"
    over_address = _take(address_key, now=now) > settings.LOGIN_MAX_FAILURES_PER_ADDRESS
    over_account = _take(account_key, now=now) > settings.LOGIN_MAX_FAILURES
    if over_address or over_account:
        return None
    return LoginAttempt(account_key=account_key, address_key=address_key, device_key=None)


def login_attempt_succeeded(*, attempt: LoginAttempt, username: str, response: HttpResponse) -> None:
    """The password was right: give back the address's slot, reset the account's, remember this browser."""
    if attempt.address_key:
        LoginThrottle.objects.filter(key=attempt.address_key, count__gt=0).update(count=F("count") - 1)
    LoginThrottle.objects.filter(key__in=[attempt.account_key, attempt.device_key or ""]).delete()
    token = signing.dumps({"u": _account_digest(username), "d": secrets.token_urlsafe(18)}, salt=_DEVICE_SALT)
    response.set_cookie(
        DEVICE_COOKIE, token, max_age=int(timedelta(days=settings.LOGIN_DEVICE_DAYS).total_seconds()),
        secure=settings.SESSION_COOKIE_SECURE, httponly=True, samesite="Lax",
    )
