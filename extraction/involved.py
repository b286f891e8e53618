"""Which fields a rule involves: those it names, and every field inside a list or object it names.

A rule naming "rows" involves "rows[3].votes"; one naming "rows[3]" involves "rows[3].votes" and
"rows[3].party". The desk, its page pane, the triage and the audit all ask this question; the desk hands
the answer to the browser as data, so there is one definition. Pure: no Django.
"""

from __future__ import annotations

from collections.abc import Iterable


def involves(named: Iterable[str], path: str) -> bool:
    """Whether a rule naming the fields `named` involves the field at `path`."""
    return any(path == n or path.startswith(n + "[") or path.startswith(n + ".") for n in named if n)


def involved_paths(named: Iterable[str], paths: Iterable[str]) -> list[str]:
    """The paths (in their order) a rule naming `named` involves."""
    named = [str(n) for n in named or () if n]
    return [p for p in paths if involves(named, p)]
