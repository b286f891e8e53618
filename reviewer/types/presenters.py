"""The type editor's rows and a definition's data, both ways (pure: no ORM).

The page shows a definition as rows: one per field (a table's columns and a group's fields carry its key), one
per table or group, one per rule, and one per rubric question. A rule row carries every parameter of the
vocabulary, those of its kind shown (extraction/doctypes/defined/vocabulary.py), fields picked from the type's
own. Rows are added, removed and moved by the form's own buttons (`post_edited`), with script or without.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from extraction.doctypes.defined.spec import LANGUAGES, OPERATORS
from extraction.doctypes.defined.vocabulary import FIELD_PARAMS, KINDS, LIST_PARAMS, PARAMS, key_of
from reviewer.whole_numbers import whole_number

__all__ = ["BLANK_FIELDS", "BLANK_RUBRIC", "BLANK_RULES", "BLANK_TABLES", "RULE_PARAMS", "data_from_post",
           "post_edited", "rows_from_data"]

BLANK_FIELDS, BLANK_TABLES, BLANK_RULES, BLANK_RUBRIC = 1, 1, 1, 1
FIELD_KEYS = ("key", "label", "kind", "table", "section", "purpose", "pattern", "pattern_source", "choices")
# every parameter a rule of the vocabulary may take, as text inputs (lists comma-separated, defaults as
# 'field=number' pairs)
RULE_PARAMS = ("field", "or_fields", "column", "value", "words", "table", "expression", "defaults", "tolerance",
               "pattern", "source", "choices", "fields", "after", "before", "count", "operator", "other", "offset",
               "language")
_LISTS = frozenset({"choices", "fields", "or_fields"})
_FLAGS = ("not_future", "any")
_MAX_ROWS = 100  # a page never posts more; the definition's own bounds are checked after


def _split(text: str) -> list[str]:
    return [p.strip() for p in text.split(",") if p.strip()]


def _pairs(text: str) -> dict[str, str]:
    """'tax=0, items.discount=0' -> {'tax': '0', 'items.discount': '0'}; a part without '=' keeps an empty
    value, which the check then names."""
    return {k.strip(): v.strip() for k, _, v in (p.partition("=") for p in _split(text))}


def _value(post: Mapping[str, Any], key: str) -> str:
    """A posted value; several (a picker of many fields) joined by commas."""
    values = post.getlist(key) if hasattr(post, "getlist") else post.get(key)
    if isinstance(values, list | tuple):
        return ", ".join(str(v).strip() for v in values if str(v).strip())
    return str(values if values is not None else "").strip()


def _numbered(post: Mapping[str, Any], prefix: str) -> list[tuple[int, dict[str, str]]]:
    """Every posted row `prefix-N-*` with its N, blank ones included."""
    out = []
    for n in range(_MAX_ROWS):
        head = f"{prefix}-{n}-"
        row = {k[len(head):]: _value(post, k) for k in post if k.startswith(head)}
        if row:
            out.append((n, row))
    return out


def _blank(row: Mapping[str, str]) -> bool:
    return not any(v for k, v in row.items() if k not in ("kind", "required", "group", "language", "operator", *_FLAGS))


def _rows(post: Mapping[str, Any], prefix: str) -> list[dict[str, str]]:
    """The posted rows `prefix-N-*` in order, blank ones left out."""
    return [row for _, row in _numbered(post, prefix) if not _blank(row)]


_EDIT = re.compile(r"^(add|remove|up|down)-(field|table|rule|rubric)(?:-(\d+))?$")


def post_edited(post: Mapping[str, Any], action: str) -> tuple[dict[str, Any], dict[str, int]] | None:
    """The form as posted with one edit of its rows made (`add-rule`, `remove-field-3`, `up-rule-2`,
    `down-table-0`; N is the row's number in the form), rows numbered again; and how many blank rows to add.
    None when `action` is no such edit."""
    found = _EDIT.match(action or "")
    if found is None:
        return None
    verb, prefix, n = found.group(1), found.group(2), found.group(3)
    out = {k: _value(post, k) for k in post if not re.match(rf"^{prefix}-\d+-", k)}
    numbered = _numbered(post, prefix)
    rows = [(m, row) for m, row in numbered if not _blank(row) or str(m) == n]
    at = next((i for i, (m, _) in enumerate(rows) if str(m) == n), None)
    if verb == "remove" and at is not None:
        rows.pop(at)
    elif verb in ("up", "down") and at is not None:
        to = at - 1 if verb == "up" else at + 1
        if 0 <= to < len(rows):
            rows[at], rows[to] = rows[to], rows[at]
    rows = [(m, row) for m, row in rows if not _blank(row)]
    for i, (_, row) in enumerate(rows):
        out.update({f"{prefix}-{i}-{k}": v for k, v in row.items()})
    plural = {"field": "fields", "table": "tables", "rule": "rules", "rubric": "rubric"}[prefix]
    # the data keeps no blank row: an added one comes back with those the admin had not filled in yet
    return out, ({plural: sum(1 for _, row in numbered if _blank(row)) + 1} if verb == "add" else {})


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
        spec: dict[str, Any] = {"key": row.get("key") or key_of(row.get("label", "")), "label": row.get("label", ""),
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
        if not rule["code"] and rule["label"]:  # the code names the rule in data: made from its label
            rule["code"] = key_of(rule["label"])
        for name in RULE_PARAMS:
            value = row.get(name, "")
            if value and (name in KINDS[rule["kind"]].params if rule["kind"] in KINDS else True):
                rule[name] = (_split(value) if name in _LISTS else _pairs(value) if name == "defaults"
                              else _count_or_text(value) if name == "count" else value)
        rule.update({flag: True for flag in _FLAGS if row.get(flag) == "on"})
        rules.append(rule)
    rubric = [{"code": row.get("code", ""), "label": row.get("label", ""), "question": row.get("question", ""),
               "fields": _split(row.get("fields", ""))} for row in _rows(post, "rubric")]
    data: dict[str, Any] = {k: str(post.get(k, "")).strip() for k in ("name", "label", "description", "instructions")}
    data["name"] = data["name"] or key_of(data["label"])
    data.update(fields=fields, groups=[g for g in groups.values() if g["key"]],
                tables=[t for t in tables.values() if t["key"]], rules=rules, rubric=rubric)
    return data


def field_options(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Every field a rule may name, as (reference, label): single fields, a group's ('property.id') and a
    table's columns ('lines.amount', labelled with the table's label)."""
    out = [(f.get("key", ""), f.get("label", "")) for f in data.get("fields") or []]
    for g in data.get("groups") or []:
        out += [(f"{g.get('key')}.{f.get('key')}", f"{g.get('label')}: {f.get('label')}") for f in g.get("fields") or []]
    for t in data.get("tables") or []:
        out += [(f"{t.get('key')}.{c.get('key')}", f"{t.get('label')}: {c.get('label')}") for c in t.get("columns") or []]
    return [(ref, label or ref) for ref, label in out if ref and not ref.startswith(".") and not ref.endswith(".")]


def _params(rule: Mapping[str, Any], fields: list[tuple[str, str]], tables: list[tuple[str, str]]) -> list[dict]:
    """A rule row's parameters, each with how the page asks for it and whether its kind reads it."""
    kind = KINDS.get(rule.get("kind", ""))
    out = []
    for name in RULE_PARAMS:
        value = rule.get(name, "")
        chosen = [v.strip() for v in value.split(",")] if name in LIST_PARAMS else [value]
        if name in FIELD_PARAMS:
            options = fields
        elif name == "table":
            options = tables
        elif name == "operator":
            options = [(op, op) for op in OPERATORS]
        elif name == "language":
            options = [(code, {"en": "English", "es_digits": "Spanish, digit by digit"}[code]) for code in LANGUAGES]
        else:
            options = None
        known = {ref for ref, _ in options or []}
        if options is not None:  # a reference the type no longer has stays visible, for the check to name
            options = [*options, *((v, v) for v in chosen if v and v not in known)]
        out.append({"name": name, "value": value, "label": PARAMS[name].label, "hint": PARAMS[name].hint,
                    "options": options, "chosen": chosen, "many": name in LIST_PARAMS and options is not None,
                    "kinds": " ".join(k for k, spec in KINDS.items() if name in spec.params),
                    "shown": kind is not None and name in kind.params, "wide": name == "expression"})
    return out


def rows_from_data(data: Mapping[str, Any], *, extra: Mapping[str, int] | None = None) -> dict[str, Any]:
    """The editor's rows for a definition's data (saved, or as posted), with blank rows to add to (`extra`
    more of a kind when the admin asked to add one)."""
    extra = extra or {}
    fields_to_pick = field_options(data)
    tables_to_pick = [(t.get("key", ""), t.get("label", "")) for t in data.get("tables") or [] if t.get("key")]
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
        row["params"] = _params(row, fields_to_pick, tables_to_pick)
        rules.append(row)
    rubric = [{"code": r.get("code", ""), "label": r.get("label", ""), "question": r.get("question", ""),
               "fields": ", ".join(r.get("fields") or [])} for r in data.get("rubric") or []]
    def blanks(rows: list, kind: str, none_yet: int) -> int:
        """A blank row to start with, then one each time the admin asks to add one."""
        return extra.get(kind, 0) or (none_yet if not rows else 0)

    fields += [_field_row({}, "") for _ in range(blanks(fields, "fields", BLANK_FIELDS))]
    tables += [{"key": "", "label": "", "purpose": "", "group": False, "row_label": ""}
               for _ in range(blanks(tables, "tables", BLANK_TABLES))]
    for _ in range(blanks(rules, "rules", BLANK_RULES)):
        blank = {**{k: "" for k in ("code", "label", "kind", "message", "message_none_of", *RULE_PARAMS)},
                 **{flag: False for flag in _FLAGS}}
        rules.append({**blank, "params": _params(blank, fields_to_pick, tables_to_pick)})
    rubric += [{"code": "", "label": "", "question": "", "fields": ""} for _ in range(blanks(rubric, "rubric", BLANK_RUBRIC))]
    return {"fields": fields, "tables": tables, "rules": rules, "rubric": rubric, "kinds": list(KINDS.values()),
            "field_options": fields_to_pick}


def _field_row(f: Mapping[str, Any], table: str) -> dict[str, Any]:
    row = {k: f.get(k, "") for k in FIELD_KEYS if k not in ("table", "choices")}
    row["kind"] = row["kind"] or "text"
    row.update(table=table, choices=", ".join(f.get("choices") or []), required=bool(f.get("required")))
    return row


_PATTERN_WORDS = {  # what a parameter's pattern asks for, as an admin reads it (pydantic names the regex)
    "after": "write a date as YYYY-MM-DD", "before": "write a date as YYYY-MM-DD",
    "offset": "write a number, such as 60 or -1.5", "value": "write a number, such as 0 or 12.50",
    "tolerance": "write a number, such as 0.01", "code": "use small letters, digits and _, starting with a letter",
}


def _in_words(param: str | None, text: str) -> str:
    if "should match pattern" in text:
        return _PATTERN_WORDS.get(param or "", "write it as fields are named: small letters, digits and _, "
                                               "a table's column as table.column")
    if "at least 1 character" in text:
        return "it cannot be empty"
    if text.startswith("Input should be "):
        return "choose " + text.removeprefix("Input should be ")
    return text


def problems_placed(problems: list[str], data: Mapping[str, Any]) -> tuple[list[str], dict[int, list[str]]]:
    """The definition's problems, those of a rule also by its row (0-based) so the page says each beside the
    rule it concerns, named as the page names it ("Rule 2, Period order: On or after: write a date as
    YYYY-MM-DD") rather than by its place in the data (rules.1.after) or its code."""
    rules = list(data.get("rules") or [])
    row_of_code = {r.get("code"): i for i, r in enumerate(rules) if r.get("code")}
    general: list[str] = []
    by_rule: dict[int, list[str]] = {}
    for problem in problems:
        at, text = None, problem
        if found := re.match(r"^rules\.(\d+)(?:\.(\w+))?(?:\.\d+)?: (.*)$", problem):
            at, param, text = int(found.group(1)), found.group(2), found.group(3)
            text = _in_words(param, text)
            if param:
                text = f"{PARAMS[param].label if param in PARAMS else param.replace('_', ' ')}: {text}"
        elif (found := re.match(r"^rule '([^']+)': (.*)$", problem)) and found.group(1) in row_of_code:
            at, text = row_of_code[found.group(1)], found.group(2)
        if at is None or at >= len(rules):
            general.append(problem)
            continue
        by_rule.setdefault(at, []).append(text)
        label = rules[at].get("label") or rules[at].get("code") or ""
        general.append(f"Rule {at + 1}{f', {label}' if label else ''}: {text}")
    return general, by_rule
