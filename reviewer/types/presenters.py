"""The type editor's rows and a definition's data, both ways (pure: no ORM).

The page shows a definition as rows: one per field (a table's columns and a group's fields carry its key), one
per table or group, one per rule, each rule with every parameter of the vocabulary (a kind reads the ones it
needs; the check says which are missing), and one per rubric question. Blank rows let an admin add more
without script.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reviewer.whole_numbers import whole_number

__all__ = ["BLANK_FIELDS", "BLANK_RUBRIC", "BLANK_RULES", "BLANK_TABLES", "RULE_PARAMS", "data_from_post",
           "rows_from_data"]

BLANK_FIELDS, BLANK_TABLES, BLANK_RULES, BLANK_RUBRIC = 3, 1, 2, 1
FIELD_KEYS = ("key", "label", "kind", "table", "section", "purpose", "pattern", "pattern_source", "choices")
# every parameter a rule of the vocabulary may take, as text inputs (lists comma-separated, defaults as
# 'field=number' pairs)
RULE_PARAMS = ("field", "or_fields", "column", "value", "words", "table", "expression", "defaults", "tolerance",
               "pattern", "source", "choices", "fields", "after", "before", "count", "operator", "other", "offset")
_LISTS = frozenset({"choices", "fields", "or_fields"})
_FLAGS = ("not_future", "any")
_MAX_ROWS = 100  # a page never posts more; the definition's own bounds are checked after


def _split(text: str) -> list[str]:
    return [p.strip() for p in text.split(",") if p.strip()]


def _pairs(text: str) -> dict[str, str]:
    """'tax=0, items.discount=0' -> {'tax': '0', 'items.discount': '0'}; a part without '=' keeps an empty
    value, which the check then names."""
    return {k.strip(): v.strip() for k, _, v in (p.partition("=") for p in _split(text))}


def _rows(post: Mapping[str, Any], prefix: str) -> list[dict[str, str]]:
    """The posted rows `prefix-N-*` in order, blank ones left out."""
    out = []
    for n in range(_MAX_ROWS):
        row = {k[len(f"{prefix}-{n}-"):]: str(v).strip() for k, v in post.items() if k.startswith(f"{prefix}-{n}-")}
        if not row:
            continue
        if any(v for k, v in row.items() if k not in ("kind", "required", "group", "language", *_FLAGS)):
            out.append(row)
    return out


def _count_or_text(value: str) -> int | str:
    """A count as a number where it is written in digits; as typed otherwise, for the definition's check to
    refuse with its sentence."""
    count = whole_number(value)
    return value if count is None else count


def data_from_post(post: Mapping[str, Any]) -> dict[str, Any]:
    """The definition the editor's form describes, as data for `spec_parse` (which checks it)."""
    tables: dict[str, dict[str, Any]] = {}
    groups: dict[str, dict[str, Any]] = {}
    for row in _rows(post, "table"):
        key = row.get("key", "")
        own = {"key": key, "label": row.get("label", ""), **({"purpose": row["purpose"]} if row.get("purpose") else {})}
        if row.get("group") == "on":
            groups[key] = {**own, "fields": []}
        else:
            tables[key] = {**own, **({"row_label": row["row_label"]} if row.get("row_label") else {}), "columns": []}
    fields = []
    for row in _rows(post, "field"):
        spec: dict[str, Any] = {"key": row.get("key", ""), "label": row.get("label", ""),
                                "kind": row.get("kind") or "text", "required": row.get("required") == "on"}
        for name in ("section", "purpose", "pattern", "pattern_source"):
            if row.get(name):
                spec[name] = row[name]
        if row.get("choices"):
            spec["choices"] = _split(row["choices"])
        table = row.get("table", "")
        if table in groups:
            groups[table]["fields"].append(spec)
        elif table:
            tables.setdefault(table, {"key": table, "label": table.replace("_", " ").capitalize(), "columns": []})
            tables[table]["columns"].append(spec)
        else:
            fields.append(spec)
    rules = []
    for row in _rows(post, "rule"):
        rule: dict[str, Any] = {"code": row.get("code", ""), "label": row.get("label", ""),
                                "kind": row.get("kind", ""), "message": row.get("message", "")}
        if row.get("message_none_of"):
            rule["message_none_of"] = row["message_none_of"]
        for name in RULE_PARAMS:
            value = row.get(name, "")
            if value:
                rule[name] = (_split(value) if name in _LISTS else _pairs(value) if name == "defaults"
                              else _count_or_text(value) if name == "count" else value)
        rule.update({flag: True for flag in _FLAGS if row.get(flag) == "on"})
        rules.append(rule)
    rubric = [{"code": row.get("code", ""), "label": row.get("label", ""), "question": row.get("question", ""),
               "fields": _split(row.get("fields", ""))} for row in _rows(post, "rubric")]
    data: dict[str, Any] = {k: str(post.get(k, "")).strip() for k in ("name", "label", "description", "instructions")}
    data.update(fields=fields, groups=[g for g in groups.values() if g["key"]],
                tables=[t for t in tables.values() if t["key"]], rules=rules, rubric=rubric)
    return data


def rows_from_data(data: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The editor's rows for a definition's data (saved, or as posted), with blank rows to add to."""
    fields = [_field_row(f, "") for f in data.get("fields") or []]
    tables = []
    for g in data.get("groups") or []:
        tables.append({"key": g.get("key", ""), "label": g.get("label", ""), "purpose": g.get("purpose", ""),
                       "group": True, "row_label": ""})
        fields += [_field_row(f, g.get("key", "")) for f in g.get("fields") or []]
    for t in data.get("tables") or []:
        tables.append({"key": t.get("key", ""), "label": t.get("label", ""), "purpose": t.get("purpose", ""),
                       "group": False, "row_label": t.get("row_label", "")})
        fields += [_field_row(c, t.get("key", "")) for c in t.get("columns") or []]
    rules = []
    for r in data.get("rules") or []:
        row = {k: r.get(k, "") for k in ("code", "label", "kind", "message", "message_none_of")}
        for name in RULE_PARAMS:
            value = r.get(name, "")
            row[name] = (", ".join(value) if isinstance(value, list) else
                         ", ".join(f"{k}={v}" for k, v in value.items()) if isinstance(value, dict) else
                         "" if value is None else str(value))
        row.update({flag: bool(r.get(flag)) for flag in _FLAGS})
        row["params"] = [(name, row[name]) for name in RULE_PARAMS]
        rules.append(row)
    rubric = [{"code": r.get("code", ""), "label": r.get("label", ""), "question": r.get("question", ""),
               "fields": ", ".join(r.get("fields") or [])} for r in data.get("rubric") or []]
    fields += [_field_row({}, "") for _ in range(BLANK_FIELDS)]
    tables += [{"key": "", "label": "", "purpose": "", "group": False, "row_label": ""} for _ in range(BLANK_TABLES)]
    rules += [{**{k: "" for k in ("code", "label", "kind", "message", "message_none_of", *RULE_PARAMS)},
               **{flag: False for flag in _FLAGS}, "params": [(name, "") for name in RULE_PARAMS]}
              for _ in range(BLANK_RULES)]
    rubric += [{"code": "", "label": "", "question": "", "fields": ""} for _ in range(BLANK_RUBRIC)]
    return {"fields": fields, "tables": tables, "rules": rules, "rubric": rubric}


def _field_row(f: Mapping[str, Any], table: str) -> dict[str, Any]:
    row = {k: f.get(k, "") for k in FIELD_KEYS if k not in ("table", "choices")}
    row["kind"] = row["kind"] or "text"
    row.update(table=table, choices=", ".join(f.get("choices") or []), required=bool(f.get("required")))
    return row
