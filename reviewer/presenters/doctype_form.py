"""The type editor's rows and a definition's data, both ways (pure: no ORM).

The page shows a definition as rows: one per field (a table's columns carry the table's key), one per table
and one per rule, each rule with every parameter of the vocabulary (a kind reads the ones it needs; the check
says which are missing). Blank rows let an admin add more without script.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["BLANK_FIELDS", "BLANK_RULES", "BLANK_TABLES", "RULE_PARAMS", "data_from_post", "rows_from_data"]

BLANK_FIELDS, BLANK_TABLES, BLANK_RULES = 3, 1, 2
FIELD_KEYS = ("key", "label", "kind", "table", "purpose", "pattern", "pattern_source", "choices")
# every parameter a rule of the vocabulary may take, as text inputs (lists comma-separated)
RULE_PARAMS = ("field", "column", "words", "table", "expression", "tolerance", "pattern", "source", "choices",
               "fields", "after", "before", "count")
_LISTS = frozenset({"choices", "fields"})
_MAX_ROWS = 100  # a page never posts more; the definition's own bounds are checked after


def _split(text: str) -> list[str]:
    return [p.strip() for p in text.split(",") if p.strip()]


def _rows(post: Mapping[str, Any], prefix: str) -> list[dict[str, str]]:
    """The posted rows `prefix-N-*` in order, blank ones left out."""
    out = []
    for n in range(_MAX_ROWS):
        row = {k[len(f"{prefix}-{n}-"):]: str(v).strip() for k, v in post.items() if k.startswith(f"{prefix}-{n}-")}
        if not row:
            continue
        if any(v for k, v in row.items() if k not in ("kind", "required", "not_future", "language")):
            out.append(row)
    return out


def data_from_post(post: Mapping[str, Any]) -> dict[str, Any]:
    """The definition the editor's form describes, as data for `spec_parse` (which checks it)."""
    tables: dict[str, dict[str, Any]] = {}
    for row in _rows(post, "table"):
        tables[row.get("key", "")] = {"key": row.get("key", ""), "label": row.get("label", ""), "columns": []}
    fields = []
    for row in _rows(post, "field"):
        spec: dict[str, Any] = {"key": row.get("key", ""), "label": row.get("label", ""),
                                "kind": row.get("kind") or "text", "required": row.get("required") == "on"}
        for name in ("purpose", "pattern", "pattern_source"):
            if row.get(name):
                spec[name] = row[name]
        if row.get("choices"):
            spec["choices"] = _split(row["choices"])
        table = row.get("table", "")
        if table:
            tables.setdefault(table, {"key": table, "label": table.replace("_", " ").capitalize(), "columns": []})
            tables[table]["columns"].append(spec)
        else:
            fields.append(spec)
    rules = []
    for row in _rows(post, "rule"):
        rule: dict[str, Any] = {"code": row.get("code", ""), "label": row.get("label", ""),
                                "kind": row.get("kind", ""), "message": row.get("message", "")}
        for name in RULE_PARAMS:
            value = row.get(name, "")
            if value:
                rule[name] = _split(value) if name in _LISTS else int(value) if name == "count" and value.isdigit() \
                    else value
        if row.get("not_future") == "on":
            rule["not_future"] = True
        rules.append(rule)
    data: dict[str, Any] = {k: str(post.get(k, "")).strip() for k in ("name", "label", "description", "instructions")}
    data.update(fields=fields, tables=[t for t in tables.values() if t["key"]], rules=rules)
    return data


def rows_from_data(data: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The editor's rows for a definition's data (saved, or as posted), with blank rows to add to."""
    fields = [_field_row(f, "") for f in data.get("fields") or []]
    tables = []
    for t in data.get("tables") or []:
        tables.append({"key": t.get("key", ""), "label": t.get("label", "")})
        fields += [_field_row(c, t.get("key", "")) for c in t.get("columns") or []]
    rules = []
    for r in data.get("rules") or []:
        row = {k: r.get(k, "") for k in ("code", "label", "kind", "message")}
        for name in RULE_PARAMS:
            value = r.get(name, "")
            row[name] = ", ".join(value) if isinstance(value, list) else "" if value is None else str(value)
        row["not_future"] = bool(r.get("not_future"))
        row["params"] = [(name, row[name]) for name in RULE_PARAMS]
        rules.append(row)
    fields += [_field_row({}, "") for _ in range(BLANK_FIELDS)]
    tables += [{"key": "", "label": ""} for _ in range(BLANK_TABLES)]
    rules += [{**{k: "" for k in ("code", "label", "kind", "message", *RULE_PARAMS)}, "not_future": False,
               "params": [(name, "") for name in RULE_PARAMS]} for _ in range(BLANK_RULES)]
    return {"fields": fields, "tables": tables, "rules": rules}


def _field_row(f: Mapping[str, Any], table: str) -> dict[str, Any]:
    row = {k: f.get(k, "") for k in FIELD_KEYS if k not in ("table", "choices")}
    row["kind"] = row["kind"] or "text"
    row.update(table=table, choices=", ".join(f.get("choices") or []), required=bool(f.get("required")))
    return row
