"""Answer paths (pure): every leaf of an answer is a "proved" dict `{"value": ..., "proof": [...]}`, named by a
path such as `rows[3].votes` or `line_items[0].line_total`."""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Iterable, Iterator
from typing import Any

_TOKEN = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


@functools.lru_cache(maxsize=4096)
def parse_path(path: str) -> tuple[str | int, ...]:
    """'line_items[0].line_total' -> ('line_items', 0, 'line_total'). Kept per path: the rules and the desk
    ask for the same few hundred paths on every check."""
    parts = tuple(int(index) if index else name for name, index in _TOKEN.findall(path))
    if not parts:
        raise KeyError(f"empty field path {path!r}")
    return parts


def loc_to_path(loc: Iterable[str | int]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def is_proved(node: Any) -> bool:
    return isinstance(node, dict) and "value" in node and set(node) <= {"value", "proof"}


def iter_fields(answer: Any, prefix: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every proved leaf of the answer as (path, {"value", "proof"}), in document order. A loop over a stack,
    not recursion: every rule walks the whole answer on every check."""
    stack = [(prefix, answer)]
    while stack:
        path, node = stack.pop()
        if is_proved(node):
            yield path, node
        elif isinstance(node, dict):
            stack.extend(reversed([(f"{path}.{key}" if path else str(key), child) for key, child in node.items()]))
        elif isinstance(node, list):
            stack.extend(reversed([(f"{path}[{i}]", child) for i, child in enumerate(node)]))


def get_field(answer: Any, path: str) -> Any:
    """The node at `path` (a proved dict for a leaf); KeyError when the path does not exist."""
    node = answer
    for part in parse_path(path):
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            raise KeyError(f"no field {path!r} in the answer") from None
    return node


def get_value(answer: Any, path: str, default: Any = None) -> Any:
    """The value of the proved leaf at `path`, or `default` when it is missing."""
    try:
        node = get_field(answer, path)
    except KeyError:
        return default
    return node.get("value", default) if isinstance(node, dict) else node


def set_field(answer: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A copy of the answer with the value at `path` replaced (a proved leaf keeps its proof). The containers
    on the path and the field itself are copied, so changing them leaves `answer` as it was; the rest is
    shared with `answer` (an edit of one field need not copy the other hundred)."""
    parts = parse_path(path)

    def replaced(node: Any, depth: int) -> Any:
        part = parts[depth]
        if not isinstance(node, dict | list):
            raise KeyError(f"no field {path!r} in the answer")
        try:
            child = node[part]
        except (KeyError, IndexError, TypeError):
            raise KeyError(f"no field {path!r} in the answer") from None
        out = dict(node) if isinstance(node, dict) else list(node)
        if depth + 1 < len(parts):
            out[part] = replaced(child, depth + 1)
        else:
            out[part] = {**copy.deepcopy(child), "value": value} if is_proved(child) else value
        return out

    return replaced(answer, 0)


def proved_paths(answer: Any) -> list[str]:
    return [path for path, _ in iter_fields(answer)]


def is_proved_path(answer: Any, path: str) -> bool:
    """Whether `path` is one of `proved_paths(answer)`, found by walking that path alone (an edit asks it of
    one field of a hundred): spelled as `iter_fields` spells it, through no proved field, to a proved leaf."""
    if not path:
        return is_proved(answer)
    try:
        parts = parse_path(path)
    except KeyError:
        return False
    if loc_to_path(parts) != path:
        return False
    node = answer
    for part in parts:
        if is_proved(node):
            return False
        if isinstance(part, int):
            if not isinstance(node, list) or part >= len(node):
                return False
        elif not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return is_proved(node)

class AnswerParseError(Exception):
    """The model's answer was malformed or off-schema: the round fails with one `parse_error` violation,
    fed back like a broken rule."""

    def __init__(self, message: str, raw: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.raw = raw
