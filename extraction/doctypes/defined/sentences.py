"""The sentences a definition gives its rules, filled in (pure).

A sentence is data, never a format string: only `{name}` placeholders of the names given are replaced (no
attribute access, no conversions), and a part in [brackets] is left out when a value it names is missing
('[ less {discount}%]' says nothing on a line without a discount).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["fill", "placeholders"]

_PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)?)\}")
_OPTIONAL = re.compile(r"\[([^\[\]]*)\]")


def placeholders(template: str) -> set[str]:
    """The names a sentence's placeholders use."""
    return set(_PLACEHOLDER.findall(template))


def fill(template: str, values: Mapping[str, str | None]) -> str:
    """`template` with each `{name}` of `values` replaced; a name valued None drops the [part] holding it
    (and is empty elsewhere); other braces are left as written."""

    def optional(m: re.Match[str]) -> str:
        names = _PLACEHOLDER.findall(m.group(1))
        if not any(n in values for n in names):
            return m.group(0)  # brackets that name no value are the sentence's own
        return "" if any(values.get(n, "") is None for n in names) else m.group(1)

    text = _OPTIONAL.sub(optional, template)
    return _PLACEHOLDER.sub(lambda m: (values[m.group(1)] or "") if m.group(1) in values else m.group(0), text)
