"""Login throttling: after N failures for one username or one address, refuse for a while."""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.core.cache import cache


def _keys(*, username: str, address: str) -> list[str]:
    digest = lambda s: hashlib.sha256(s.lower().encode()).hexdigest()[:32]  # noqa: E731  (no raw names in keys)
    return [f"login-fail:user:{digest(username)}", f"login-fail:addr:{digest(address)}"]


def login_blocked(*, username: str, address: str) -> bool:
    return any((cache.get(k) or 0) >= settings.LOGIN_MAX_FAILURES for k in _keys(username=username, address=address))


def login_failed(*, username: str, address: str) -> None:
    for key in _keys(username=username, address=address):
        cache.add(key, 0, timeout=settings.LOGIN_LOCKOUT_SECONDS)
        try:
            cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.set(key, 1, timeout=settings.LOGIN_LOCKOUT_SECONDS)


def login_succeeded(*, username: str, address: str) -> None:
    cache.delete(_keys(username=username, address=address)[0])
