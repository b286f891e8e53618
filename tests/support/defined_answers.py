"""A scripted model for types defined as data: it answers what the page prints and cites the line it read it
from, as a careful model would. Pure: no Django, no pytest (the receipts bench uses it too)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from rapidfuzz import fuzz

from tests.support.acta_answers import data_section

_LINE = re.compile(r"^L(\d+) (.*)$", re.MULTILINE)


def _squash(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.casefold())


def prompt_lines(body: dict[str, Any]) -> list[tuple[int, str]]:
    """The prompt's lines (id, text) of a chat request body."""
    return [(int(m.group(1)), m.group(2)) for m in _LINE.finditer(data_section(body))]


def cite(lines: list[tuple[int, str]], printed: str) -> list[dict[str, Any]]:
    """The lines that print `printed`: the first line holding it whole, else the line that holds it but for
    an OCR slip or two (as a reader sees 'WorId' is 'World'), else every line that is a part of it (a value
    printed over several lines, such as an address); [] where the page does not show it."""
    want = _squash(printed)
    if not want:
        return []
    whole = next((n for n, text in lines if want in _squash(text)), None)
    if whole is None and len(want) >= 8:
        slips = [(fuzz.partial_ratio(want, _squash(text)), n) for n, text in lines if len(_squash(text)) >= len(want)]
        best = max(slips, default=(0, None))
        whole = best[1] if best[0] >= 92 else None
    if whole is not None:
        return [{"type": "LINE", "id": whole}]
    parts = [n for n, text in lines if len(_squash(text)) >= 4
             and (_squash(text) in want or len(_squash(text)) >= 8 and fuzz.partial_ratio(_squash(text), want) >= 85)]
    # a short piece the OCR set on a line of its own ('FY' before 'EAGLE ENTERPRISE') belongs with its neighbour
    ids = set(parts)
    parts += [n for n, text in lines if n not in ids and 0 < len(_squash(text)) < 4
              and want.startswith(_squash(text)) and n + 1 in ids]
    return [{"type": "LINE", "id": n} for n in parts]


def printed_answer(body: dict[str, Any], printed: Mapping[str, Any], shown: Mapping[str, str] | None = None
                   ) -> dict[str, Any]:
    """Each field's value as `printed` gives it, cited where the page shows `shown[key]` (the value's printed
    form, when it differs from the value: a date answered as YYYY-MM-DD, a total without its currency)."""
    lines = prompt_lines(body)
    shown = shown or {}
    out = {}
    for key, value in printed.items():
        proof = cite(lines, str(shown.get(key, value))) if value is not None else []
        out[key] = {"value": value if proof else None, "proof": proof}
    return out
