"""The API's writes: tokens made, revoked and used; batches made once per Idempotency-Key."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone

from reviewer.api.models import ApiToken, IdempotentUpload

TOKEN_PREFIX = "pd_"  # noqa: S105 - the mark every token starts with, not a secret
NAME_MAX = ApiToken._meta.get_field("name").max_length
# A token's last use is written at most this often: a client making many calls does not write on each one.
LAST_USED_EVERY = timedelta(minutes=1)


class TokenError(Exception):
    """A token that cannot be made or revoked; the message is for its owner."""


@dataclass(frozen=True)
class NewToken:
    token: ApiToken
    secret: str  # the whole token: shown once, never stored


def token_digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def token_create(*, user, name: str, team=None) -> NewToken:
    """A new token for `user` in `team` (the default team without one): it acts with the user's roles in that
    team only. The secret is in the result only."""
    name = (name or "").strip()
    if not name:
        raise TokenError("Name the token (say, what will use it).")
    if len(name) > NAME_MAX:
        raise TokenError(f"A token's name is at most {NAME_MAX} characters.")
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(user=user, name=name, prefix=secret[:10], digest=token_digest(secret),
                                    **({"team": team} if team is not None else {}))
    return NewToken(token=token, secret=secret)


def token_revoke(*, user, token_id: int) -> bool:
    """Revoke one of `user`'s own tokens; False when it is not theirs or was revoked already."""
    return ApiToken.objects.filter(pk=token_id, user=user, revoked_at__isnull=True).update(
        revoked_at=timezone.now()) == 1


def token_use(*, secret: str) -> ApiToken | None:
    """The live token this secret is, with its active user; None for an unknown, revoked or disabled one.
    Records when it was last used (at most once a minute)."""
    if not secret.startswith(TOKEN_PREFIX) or len(secret) > 200:
        return None
    token = (ApiToken.objects.select_related("user").filter(digest=token_digest(secret), revoked_at__isnull=True,
                                                            user__is_active=True).first())
    if token is None:
        return None
    now = timezone.now()
    if token.last_used_at is None or token.last_used_at < now - LAST_USED_EVERY:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token


# --- idempotent uploads --------------------------------------------------------------------------------


class IdempotencyConflict(Exception):
    """The key was used for another request (`reused`), or its first request has not finished (`busy`)."""

    def __init__(self, message: str, *, busy: bool) -> None:
        super().__init__(message)
        self.busy = busy


def upload_once(*, user, key: str, fingerprint: str, create):
    """(batch, created): the batch `create()` makes, once per user and key. Run in the caller's transaction
    with the batch's creation: a second request with the key waits for the first to commit (the unique
    key), then gets its batch. A key reused for a different request raises IdempotencyConflict."""
    try:
        with transaction.atomic():
            record = IdempotentUpload.objects.create(user=user, key=key, fingerprint=fingerprint)
    except IntegrityError:
        record = IdempotentUpload.objects.select_related("batch").get(user=user, key=key)
        if record.fingerprint != fingerprint:
            raise IdempotencyConflict("This Idempotency-Key was used for a different upload; use a new key for "
                                      "a new upload.", busy=False) from None
        if record.batch is None:
            raise IdempotencyConflict("The upload with this Idempotency-Key did not finish (or its batch was "
                                      "deleted); send it with a new key.", busy=True) from None
        return record.batch, False
    batch = create()
    IdempotentUpload.objects.filter(pk=record.pk, batch__isnull=True).update(batch=batch)
    return batch, True
