"""Where a value holds a NUL character (pure): no text in Proofdesk may hold one. PostgreSQL's text and JSON
refuse \\x00, and no person types it, so text that enters with one is refused where it enters."""

from __future__ import annotations

from typing import Any

__all__ = ["nul_at"]


def nul_at(data: Any, *, where: str = "") -> str | None:
    """The place of the first string (a key included) in `data` that holds a NUL, as a dotted path
    ('fields.0.label'; '' for `data` itself); None when none does. Walks dicts, lists and tuples."""
    if isinstance(data, str):
        return where if "\x00" in data else None
    if isinstance(data, dict):
        for key, value in data.items():
            place = f"{where}.{key}" if where else str(key)
            if isinstance(key, str) and "\x00" in key:
                return place.replace("\x00", "")
            found = nul_at(value, where=place)
            if found is not None:
                return found
    elif isinstance(data, list | tuple):
        for i, value in enumerate(data):
            found = nul_at(value, where=f"{where}.{i}" if where else str(i))
            if found is not None:
                return found
    return None

