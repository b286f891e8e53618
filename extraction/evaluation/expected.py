"""Expected values an admin uploads for an evaluation set (pure): a JSON or a CSV file naming, for each
document file, the values people confirmed.

- JSON: an object {"bill-0193.pdf": {"amount_due": 50, "items": [{"price": 4.5}]}, ...}, or a list of
  {"file": ..., "expected": {...}}. Values may be nested as the answer is, or flat by path ("items[0].price").
- CSV: a header `file` then one column per path (`amount_due`, `items[0].price`), a row per document; an empty
  cell means the document shows no such value.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from extraction.rules.answers import is_proved, iter_fields, loc_to_path

__all__ = ["ExpectedError", "answer_flat", "expected_parse"]

MAX_BYTES = 5 * 1024 * 1024  # a set's values are text: a file this large is not one


class ExpectedError(ValueError):
    """The file cannot be read as expected values; the message says why, in words."""


def answer_flat(answer: Any) -> dict[str, Any]:
    """{path: value} of every leaf of an answer (proved leaves {"value", "proof"} or plain values)."""
    if not isinstance(answer, dict | list):
        return {}
    proved = dict((path, node.get("value")) for path, node in iter_fields(answer))
    if proved:
        return proved
    out: dict[str, Any] = {}
    stack: list[tuple[tuple, Any]] = [((), answer)]
    while stack:
        loc, node = stack.pop()
        if isinstance(node, dict) and not is_proved(node):
            stack.extend(((*loc, k), v) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend(((*loc, i), v) for i, v in enumerate(node))
        elif loc:
            out[loc_to_path(loc)] = node.get("value") if is_proved(node) else node
    return dict(sorted(out.items()))


def expected_parse(*, name: str, data: bytes) -> dict[str, dict[str, Any]]:
    """{file name: {path: value}} from an uploaded .json or .csv; ExpectedError says what is wrong."""
    if len(data) > MAX_BYTES:
        raise ExpectedError(f"{name} is larger than {MAX_BYTES // (1024 * 1024)} MB: expected values are text.")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ExpectedError(f"{name} is not UTF-8 text.") from None
    if name.lower().endswith(".json"):
        return _from_json(name, text)
    if name.lower().endswith(".csv"):
        return _from_csv(name, text)
    raise ExpectedError(f"{name}: expected values come as a .json or a .csv file.")


def _from_json(name: str, text: str) -> dict[str, dict[str, Any]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise ExpectedError(f"{name} is not valid JSON: {err.msg} at line {err.lineno}.") from None
    if isinstance(data, list):
        pairs = []
        for index, entry in enumerate(data, 1):
            if not isinstance(entry, dict) or not isinstance(entry.get("file"), str):
                raise ExpectedError(f"{name}: entry {index} needs a \"file\" (the document's file name).")
            pairs.append((entry["file"], entry.get("expected", {})))
    elif isinstance(data, dict):
        pairs = list(data.items())
    else:
        raise ExpectedError(f"{name}: write an object of file names, or a list of {{\"file\", \"expected\"}}.")
    out: dict[str, dict[str, Any]] = {}
    for file, values in pairs:
        if not isinstance(values, dict):
            raise ExpectedError(f"{name}: the values of {file} are not an object of fields.")
        out[file.strip()] = answer_flat(values)
    return _checked(name, out)


def _from_csv(name: str, text: str) -> dict[str, dict[str, Any]]:
    rows = list(csv.reader(io.StringIO(text)))
    if not rows or not rows[0] or rows[0][0].strip().lower() not in ("file", "filename"):
        raise ExpectedError(f"{name}: the first column's header is \"file\", the document's file name.")
    paths = [h.strip() for h in rows[0][1:]]
    if not paths or not all(paths):
        raise ExpectedError(f"{name}: every column after \"file\" is headed by a field's path.")
    out: dict[str, dict[str, Any]] = {}
    for number, row in enumerate(rows[1:], 2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) > len(paths) + 1:
            raise ExpectedError(f"{name}: line {number} has more cells than the header has columns.")
        cells = row[1:] + [""] * (len(paths) + 1 - len(row))
        out[row[0].strip()] = {p: (c.strip() or None) for p, c in zip(paths, cells, strict=True)}
    return _checked(name, out)


def _checked(name: str, out: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    if not out:
        raise ExpectedError(f"{name} names no document.")
    if "" in out:
        raise ExpectedError(f"{name}: a document without a file name.")
    return out
