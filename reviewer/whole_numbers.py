"""Whole numbers read from query strings, forms and cursors."""

from __future__ import annotations

import re

# ASCII digits only: str.isdigit() also takes '①' and '²', which int() refuses (a 500 where a 400 or None was
# meant); at most 18 of them, so that any value fits the database's bigint ids.
_WHOLE = re.compile(r"[0-9]{1,18}")


def whole_number(value: object) -> int | None:
    """`value` as a non-negative int when it is a whole number written in ASCII digits, else None."""
    text = "" if value is None else str(value).strip()
    return int(text) if _WHOLE.fullmatch(text) else None
