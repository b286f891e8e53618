"""The one key an account's name is known by (pure): NFKC-normalised, as Django's login form and the model
store a name, and lower-cased, so that names differing only in case or Unicode form ("Dup1", "DUP1", "ｄｕｐ1";
"ß1", "ẞ1") are one name. The login throttle counts attempts under it and the database keeps it unique."""

from __future__ import annotations

import unicodedata

__all__ = ["username_key"]


def username_key(username: str) -> str:
    return unicodedata.normalize("NFKC", username.strip()).lower()
