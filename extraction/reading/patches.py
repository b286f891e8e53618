"""Answers as patches (pure): from round 2 the model returns only the fields it changes.

A patch is `{"changes": [{"field": "rows[3].votes", "value": 56, "proof": [...]}, ...]}`. Its JSON schema is
built for the round from the fields the fed-back rules involve (`patch_schema`), so an endpoint with
structured output cannot name any other; an endpoint without it may, and a change to a field that was not
involved is itself a broken rule (`patch_violations`), never applied. `apply_patch` merges the patch into
the previous answer; the merged answer is validated like any other.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from extraction.rules.answers import get_field, is_proved, iter_fields, proved_paths
from extraction.rules.violations import Violation

__all__ = ["PROOF_ITEM_SCHEMA", "Patch", "PatchError", "apply_patch", "parse_patch", "patch_schema", "patch_from_answer",
           "patch_violations", "patchable"]

_VALUE_TYPES = ["string", "number", "integer", "null"]


@dataclass(frozen=True)
class Patch:
    """What the model changed: path -> the new {"value", "proof"}; `outside` names fields it was not asked
    about (dropped from `changes`), `unknown` paths the answer does not have."""

    changes: dict[str, dict[str, Any]] = field(default_factory=dict)
    outside: tuple[str, ...] = ()
    unknown: tuple[str, ...] = ()


def patchable(answer: Any, involved: Iterable[str]) -> bool:
    """Whether a round can be answered as a patch: there is a previous answer, and every involved field is
    one of its proved leaves (a rule about the whole answer, or about a list, needs the whole answer)."""
    paths = list(involved)
    if not isinstance(answer, dict) or not paths:
        return False
    leaves = set(proved_paths(answer))
    return all(p in leaves for p in paths)


# One proof item, as the document names what it cites (see extraction/reading/prompt.py); loose on purpose: the
# loop resolves and judges every proof anyway.
PROOF_ITEM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "type": {"type": "string", "enum": ["LINE", "WORD", "TABLE", "CELL"]},
        "id": {"type": "integer"},
        "line": {"type": "integer"},
        "table": {"type": "integer"},
        "row": {"type": "integer"},
        "column": {"type": "integer"},
        "value": {"type": "string"},
    },
    "required": ["type"],
}


def patch_schema(*, involved: list[str], proof_schema: dict[str, Any] = PROOF_ITEM_SCHEMA) -> dict[str, Any]:
    """The round's JSON schema: a list of changes, each naming one of the involved fields."""
    return {
        "type": "object",
        "properties": {
            "changes": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "field": {"type": "string", "enum": list(involved)},
                        "value": {"type": _VALUE_TYPES},
                        "proof": {"type": "array", "items": proof_schema},
                    },
                    "required": ["field", "value", "proof"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["changes"],
        "additionalProperties": False,
    }


class PatchError(ValueError):
    """The reply is not a patch; the message says what is wrong (fed back like a broken rule)."""


def parse_patch(data: Any, *, involved: Iterable[str], answer: dict[str, Any]) -> Patch:
    """Read a reply as a patch of `answer`. A bare list of changes, or a {path: {"value", "proof"}} mapping,
    is accepted too: models write both."""
    allowed = set(involved)
    leaves = set(proved_paths(answer))
    if isinstance(data, dict) and "changes" in data:
        data = data["changes"]
    if isinstance(data, dict):
        data = [{"field": k, **(v if is_proved(v) else {"value": v})} for k, v in data.items()]
    if not isinstance(data, list):
        raise PatchError('the answer is not {"changes": [...]}')
    changes: dict[str, dict[str, Any]] = {}
    outside: list[str] = []
    unknown: list[str] = []
    for item in data:
        if not isinstance(item, dict) or not isinstance(item.get("field"), str):
            raise PatchError('each change must be {"field": "<path>", "value": ..., "proof": [...]}')
        path = item["field"].strip()
        if path not in leaves:
            unknown.append(path)
        elif path not in allowed:
            outside.append(path)
        else:
            proof = item.get("proof")
            changes[path] = {"value": item.get("value"), "proof": proof if isinstance(proof, list) else []}
    return Patch(changes=changes, outside=tuple(outside), unknown=tuple(unknown))


def patch_from_answer(full: dict[str, Any], *, previous: dict[str, Any], involved: Iterable[str]) -> Patch:
    """A whole answer sent where a patch was asked for, read as the patch it amounts to: the fields it
    changes (value or proof), those outside `involved` marked as such."""
    allowed = set(involved)
    before = dict(iter_fields(previous))
    changes: dict[str, dict[str, Any]] = {}
    outside: list[str] = []
    for path, node in iter_fields(full):
        old = before.get(path)
        if old is None or (old.get("value"), old.get("proof")) == (node.get("value"), node.get("proof")):
            continue
        if path in allowed:
            changes[path] = {"value": node.get("value"), "proof": node.get("proof") or []}
        else:
            outside.append(path)
    return Patch(changes=changes, outside=tuple(outside))


def apply_patch(answer: dict[str, Any], patch: Patch) -> dict[str, Any]:
    """A copy of `answer` with the patch's changes (value and proof) in place."""
    merged = copy.deepcopy(answer)
    for path, node in patch.changes.items():
        target = get_field(merged, path)
        target["value"] = node["value"]
        target["proof"] = node["proof"]
    return merged


def patch_violations(patch: Patch) -> list[Violation]:
    """A change to a field nobody asked about, or to a field the answer does not have, breaks a rule."""
    out = []
    if patch.outside:
        out.append(Violation(
            code="patch_outside",
            fields=tuple(patch.outside),
            expected="changes to the fields named in the feedback only",
            found=", ".join(patch.outside),
            message=f"The changes name fields that no broken rule involves ({', '.join(patch.outside)}); they "
            "were not applied. Change only the fields listed with the broken rules.",
        ))
    if patch.unknown:
        out.append(Violation(
            code="patch_unknown_field",
            fields=(),
            expected="field paths of the answer",
            found=", ".join(patch.unknown),
            message=f"The changes name fields that the answer does not have ({', '.join(patch.unknown)}).",
        ))
    return out
