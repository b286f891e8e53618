"""What the test provider says about a person, and how it signs."""

from __future__ import annotations

import os

# Set through the control endpoint (views.py): the provider is one process, its threads share this.
BEHAVIOUR: dict[str, str | None] = {"id_token_audience": None}


def userinfo(claims: dict, user) -> dict:
    """django-oidc-provider's OIDC_USERINFO: the standard claims of the scopes asked for."""
    claims["preferred_username"] = user.username
    claims["name"] = user.get_full_name() or user.username
    claims["email"] = user.email
    claims["email_verified"] = bool(user.email)
    return claims


def id_token_hook(id_token: dict, user, token, request, **kwargs) -> dict:
    """OIDC_IDTOKEN_PROCESSING_HOOK: the person's groups, as they are at the moment the code is exchanged."""
    id_token["groups"] = sorted(user.groups.values_list("name", flat=True))
    if BEHAVIOUR["id_token_audience"]:  # a token minted for another client, signed as any other
        id_token["aud"] = BEHAVIOUR["id_token_audience"]
    return id_token


def forge_key_id() -> None:
    """With IDP_FORGED_KID, every key of this provider is published and used under that id: a forger that signs
    with its own key and names the real provider's."""
    forged = os.environ.get("IDP_FORGED_KID")
    if forged:
        from oidc_provider.models import RSAKey

        RSAKey.kid = property(lambda self: forged)
