"""Which fields a rule involves: those it names, and every field inside a list or object it names.

A rule naming "rows" involves "rows[3].votes"; one naming "rows[3]" involves "rows[3].votes" and
"rows[3].party". The desk, its page pane, the triage and the audit all ask this question; the desk hands
the answer to the browser as data, so there is one definition. Pure: no Django.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache


@lru_cache(maxsize=4096)
def field_and_holders(path: str) -> frozenset[str]:
    """`path` and every list or object holding it ('rows[3].votes' -> rows[3].votes, rows[3], rows): a rule
    involves the field exactly when it names one of these. Kept per path: the triage asks it of every field
    for every broken rule, on every edit, and a type's paths are few."""
    out = {path[:i] for i, ch in enumerate(path) if ch in "[." and i}
    if path:
        out.add(path)
    return frozenset(out)


def involves(named: Iterable[str], path: str) -> bool:
    """Whether a rule naming the fields `named` involves the field at `path`."""
    return not field_and_holders(path).isdisjoint(named)


def involved_paths(named: Iterable[str], paths: Iterable[str]) -> list[str]:
    """The paths (in their order) a rule naming `named` involves."""
    named = {str(n) for n in named or () if n}
    return [p for p in paths if not field_and_holders(p).isdisjoint(named)]
