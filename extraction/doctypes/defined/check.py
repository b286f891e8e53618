"""What is wrong with a definition, in sentences an admin can act on (pure).

Checked when a definition is saved or imported: its shape (pydantic), then what the shape cannot say: a rule
naming a field the type does not have, a pattern that does not compile, expressions that define fields in a
circle, a rule whose field is of the wrong kind.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from decimal import Decimal
from typing import Any

import pydantic

from extraction.common.nul import nul_at
from extraction.doctypes.defined.expressions import ExpressionError, parse_condition, parse_expression
from extraction.doctypes.defined.patterns import PatternError, pattern_backtracks, pattern_compile
from extraction.doctypes.defined.sentences import placeholders
from extraction.doctypes.defined.spec import PLACEHOLDERS, FieldSpec, RuleSpec, TypeSpec
from extraction.rules.violations import CHECK_UNFINISHED

__all__ = ["RESERVED_CODES", "DefinitionError", "spec_parse", "spec_warnings"]

# Rule codes every type already uses (the proof rules, the loop's own): a defined rule cannot take them.
RESERVED_CODES = frozenset({"proof_found", "value_grounded", "missing_value", "schema", "parse_error",
                            "suspicious_pass", "audit_disagree", CHECK_UNFINISHED})
_NUMERIC = frozenset({"number", "money", "count"})
_SUMMED = _NUMERIC | {"fraction"}


class DefinitionError(ValueError):
    """A definition that cannot be used; `problems` lists every reason, one sentence each."""

    def __init__(self, problems: list[str]):
        super().__init__("; ".join(problems))
        self.problems = problems


def spec_parse(data: Any) -> TypeSpec:
    """The definition `data` describes (a dict, as YAML or a form gives it), checked whole; DefinitionError
    lists every problem found."""
    place = nul_at(data)
    if place is not None:  # before anything stores or shows it: no text in Proofdesk holds a NUL
        raise DefinitionError([f"{place or 'the definition'}: holds a NUL character (\\x00), which no text may hold"])
    try:
        spec = TypeSpec.model_validate(data)
    except pydantic.ValidationError as err:
        raise DefinitionError([_shape_problem(e) for e in err.errors(include_url=False)[:20]]) from None
    problems = _problems(spec)
    if problems:
        raise DefinitionError(problems)
    return spec


def spec_warnings(spec: TypeSpec) -> list[str]:
    """What is allowed but will not work well: a pattern that backtracks catastrophically, so that a value
    like the one named cannot be checked in time and is marked unchecked for a person; arithmetic that divides
    by what an answer can make 0, so that on such an answer the rule cannot be computed."""
    patterns = [(f"field {ref!r}", f.pattern) for ref, f in spec.field_specs().items() if f.pattern]
    patterns += [(f"rule {r.code!r}", r.pattern) for r in spec.rules if r.kind == "pattern" and r.pattern]
    out = []
    for where, pattern in patterns:
        try:
            slow = pattern_backtracks(pattern)
        except PatternError:
            continue  # a problem, reported as one
        if slow is not None:
            out.append(f"{where}: the pattern {pattern} backtracks catastrophically: on a value such as {slow!r} "
                       "its check cannot finish in time, and the value is marked unchecked for a person. Write it "
                       "so that no repeat can match the same text in more than one way (for example a+ for (a|aa)+).")
    return out + [w for rule in spec.rules if (w := _division_warning(rule))]


def _division_warning(rule: RuleSpec) -> str | None:
    """A rule whose arithmetic divides by 0 on an example answer (every value it reads at 0, or its default)."""
    try:
        if rule.kind == "expression":
            expr: Any = parse_expression(rule.expression)
        elif rule.kind == "condition":
            expr = parse_condition(rule.expression)
        else:
            return None
    except ExpressionError:
        return None  # a problem, reported as one
    example = {name: Decimal(rule.defaults.get(name, "0")) for name in expr.names() - expr.sums()}
    zero = expr.zero_divisor(example, {name: [Decimal(0)] for name in expr.sums()})
    if zero is None:
        return None
    shown = ", ".join(f"{name} = {value}" for name, value in sorted(example.items())) or "every value 0"
    return (f"rule {rule.code!r}: {rule.expression} divides by {zero}, which an answer can make 0 (for example "
            f"{shown}); on such an answer the rule cannot be computed and its values go to a person unchecked. "
            "Compare without dividing (a <= b * c rather than a / b <= c).")


def _shape_problem(e: Any) -> str:
    where = ".".join(str(p) for p in e["loc"]) or "the definition"
    return f"{where}: {e['msg']}"


def _problems(spec: TypeSpec) -> list[str]:
    out: list[str] = []
    keys = [f.key for f in spec.fields] + [g.key for g in spec.groups] + [t.key for t in spec.tables]
    out += [f"the key {k!r} is used twice" for k in sorted({k for k in keys if keys.count(k) > 1})]
    inner = [*(f.key for g in spec.groups for f in g.fields), *(c.key for t in spec.tables for c in t.columns)]
    out += [f"the key {k!r} is a name the answer's schema keeps for itself; choose another"
            for k in sorted({*keys, *inner}) if _reserved_key(k)]
    for key, what, members in [*((t.key, "table", t.columns) for t in spec.tables),
                               *((g.key, "group", g.fields) for g in spec.groups)]:
        cols = [c.key for c in members]
        out += [f"{what} {key!r}: the field {k!r} is used twice" for k in sorted({k for k in cols if cols.count(k) > 1})]
    for ref, f in spec.field_specs().items():
        out += [f"field {ref!r}: {p}" for p in _field_problems(f)]
    for t in spec.tables:
        unknown = placeholders(t.row_label) - {"row", *(c.key for c in t.columns)}
        out += [f"table {t.key!r}: its row label names {{{n}}}, which is not one of its columns or {{row}}"
                for n in sorted(unknown)]
    codes = [r.code for r in spec.rules] + [r.code for r in spec.rubric]
    out += [f"the rule code {c!r} is used twice" for c in sorted({c for c in codes if codes.count(c) > 1})]
    out += [f"rule {c!r}: the code is one every type already uses; choose another" for c in codes if c in RESERVED_CODES]
    names = _sentence_names(spec)
    for rule in spec.rules:
        out += [f"rule {rule.code!r}: {p}" for p in _rule_problems(rule, spec)]
        for n in sorted(placeholders(rule.message) | placeholders(rule.message_none_of)):
            if n not in names:
                out.append(f"rule {rule.code!r}: its sentence names {{{n}}}, which is neither a field of this type nor "
                           f"one of {', '.join('{' + p + '}' for p in PLACEHOLDERS)}")
    fields = spec.field_specs()
    for check in spec.rubric:
        out += [f"rubric {check.code!r}: its field {ref!r} is not a field of this type" for ref in check.fields
                if ref not in fields]
    out += _circles(spec)
    return out


def _sentence_names(spec: TypeSpec) -> set[str]:
    """What a rule's sentence may name: the placeholders, every field by reference, a column by its key."""
    return {*PLACEHOLDERS, *spec.field_specs(), *(c.key for t in spec.tables for c in t.columns)}


def _reserved_key(key: str) -> bool:
    """A key the answer's pydantic model cannot take as a field ('json', 'copy', 'model_dump', ...)."""
    return key.startswith("model_") or hasattr(pydantic.BaseModel, key)


def _field_problems(f: FieldSpec) -> list[str]:
    out = []
    if f.kind == "choice" and not f.choices:
        out.append("a field of kind 'choice' needs its list of choices")
    if f.pattern:
        try:
            pattern_compile(f.pattern)
        except PatternError as err:
            out.append(str(err))
    elif f.kind == "code":
        out.append("a field of kind 'code' needs the pattern its value takes")
    return out


def _rule_problems(rule: RuleSpec, spec: TypeSpec) -> list[str]:  # noqa: C901 - one branch per kind
    fields = spec.field_specs()
    tables = {t.key for t in spec.tables}

    def known(ref: str | None, what: str, *, kinds: frozenset[str] | None = None, column: bool | None = None) -> list[str]:
        if not ref:
            return [f"it needs its {what}"]
        if ref not in fields:
            return [f"its {what} {ref!r} is not a field of this type"]
        if column is True and spec.table_of(ref) is None:
            return [f"its {what} {ref!r} must be a table's column, written 'table.column'"]
        if column is False and spec.table_of(ref) is not None:
            return [f"its {what} {ref!r} must be a single field, not a table's column"]
        if kinds and fields[ref].kind not in kinds:
            return [f"its {what} {ref!r} is of kind {fields[ref].kind!r}; it must be {' or '.join(sorted(kinds))}"]
        return []

    kind = rule.kind
    if kind == "column_sum":
        out = known(rule.column, "column", kinds=_SUMMED, column=True)
        if rule.value is not None:
            if rule.field or rule.or_fields:
                out.append("it compares the sum with a field or with a value, not both")
            return out
        for ref in (rule.field, *rule.or_fields):
            out += known(ref, "field", kinds=_SUMMED, column=False)
        return out
    if kind == "expression":
        out = known(rule.field, "field", kinds=_NUMERIC)
        try:
            expr = parse_expression(rule.expression)
        except ExpressionError as err:
            return out + [f"its expression: {err}"]
        for name in sorted(expr.names()):
            out += known(name, "expression's field", kinds=_NUMERIC, column=True if name in expr.sums() else None)
        out += [f"its default for {ref!r} is for a field the expression does not read" for ref in sorted(rule.defaults)
                if ref not in expr.names() - expr.sums()]
        if out:
            return out
        own = {t for n in [*(expr.names() - expr.sums()), rule.field or ""] if (t := spec.table_of(n))}
        if len(own) > 1:
            return [f"it reads the rows of more than one table ({', '.join(sorted(own))}); a rule over rows reads one"]
        if own and rule.field and spec.table_of(rule.field) is None:
            return ["it sets a single field from a table's row; use sum() to read a column whole"]
        return []
    if kind == "condition":
        try:
            cond = parse_condition(rule.expression)
        except ExpressionError as err:
            return [f"its condition: {err}"]
        out = []
        for name in sorted(cond.names()):
            out += known(name, "condition's field", kinds=_SUMMED, column=True if name in cond.sums() else None)
        out += [f"its default for {ref!r} is for a field the condition does not read" for ref in sorted(rule.defaults)
                if ref not in cond.names() - cond.sums()]
        own = {t for n in cond.names() - cond.sums() if (t := spec.table_of(n))}
        if not out and len(own) > 1:
            return [f"it reads the rows of more than one table ({', '.join(sorted(own))}); a rule over rows reads one"]
        return out
    if kind == "compare":
        return _compare_problems(rule, spec, known)
    if kind == "digits_words":
        return known(rule.field, "field", kinds=_NUMERIC) + known(rule.words, "words field", kinds=frozenset({"text"}))
    if kind == "pattern":
        out = known(rule.field, "field")
        try:
            pattern_compile(rule.pattern)
        except PatternError as err:
            out.append(str(err))
        if not rule.source:
            out.append("say where the pattern comes from (source)")
        return out
    if kind == "date_range":
        out = known(rule.field, "field", kinds=frozenset({"date"}))
        if not (rule.after or rule.before or rule.not_future):
            out.append("give a range: after, before or not_future")
        for name in ("after", "before"):
            value = getattr(rule, name)
            try:
                if value:
                    date.fromisoformat(value)
            except ValueError:
                out.append(f"its {name} {value!r} is not a date")
        if rule.after and rule.before and rule.after > rule.before:
            out.append("its range ends before it starts")
        return out
    if kind == "one_of":
        return known(rule.field, "field") + ([] if rule.choices else ["it needs its list of choices"])
    if kind == "required":
        if not rule.fields:
            return ["it needs the fields that are required"]
        return [p for ref in rule.fields for p in known(ref, "field")]
    if kind == "min_rows":
        return [] if rule.table in tables else [f"its table {rule.table!r} is not a table of this type"]
    if kind == "unique":
        return known(rule.field, "field", column=True)
    return [f"unknown kind {kind!r}"]  # pragma: no cover - the shape allows only the kinds above


def _compare_problems(rule: RuleSpec, spec: TypeSpec, known: Callable[..., list[str]]) -> list[str]:
    """A comparison's field and what it is compared with: another field of the same family, or a number."""
    fields = spec.field_specs()
    out = known(rule.field, "field", kinds=_SUMMED | {"date"})
    if not rule.operator:
        out.append("it needs its comparison (<, <=, >, >=, = or !=)")
    if (rule.other is None) == (rule.value is None):
        return out + ["it compares the field with another field or with a number: give one of them"]
    is_date = rule.field in fields and fields[rule.field].kind == "date"
    if rule.value is not None:
        if is_date:
            out.append("a date is compared with another date field; for a fixed date use a date_range rule")
        if rule.offset:
            out.append("an offset is added to another field, not to a number")
        return out
    out += known(rule.other, "other field", kinds=frozenset({"date"}) if is_date else _SUMMED)
    if is_date and rule.offset and "." in rule.offset:
        out.append(f"its offset {rule.offset} is a number of days, a whole number")
    own, others = spec.table_of(rule.field or ""), spec.table_of(rule.other or "")
    if others is not None and others != own:
        out.append("it compares a field with a table's column; compare it with a single field or its own table's")
    return out


def _circles(spec: TypeSpec) -> list[str]:
    """Expression rules that define a field through itself (a = b + 1 and b = a - 1; total = total)."""
    needs: dict[str, set[str]] = {}
    for rule in spec.rules:
        if rule.kind == "expression" and rule.field:
            try:
                needs.setdefault(rule.field, set()).update(parse_expression(rule.expression).names())
            except ExpressionError:
                continue  # reported with the rule
    out, done, clear = [], set(), set()
    for start in sorted(needs):
        path = _cycle(start, needs, [], clear)
        if path and frozenset(path) not in done:
            done.add(frozenset(path))
            out.append("these expressions define fields through each other: " + " -> ".join([*path, path[0]]))
    return out


def _cycle(node: str, needs: dict[str, set[str]], path: list[str], clear: set[str]) -> list[str] | None:
    """A circle through `node` reached along `path`; `clear` holds nodes known to lead into none, so each
    node is explored once."""
    if node in path:
        return path[path.index(node):]
    if node in clear:
        return None
    for nxt in sorted(needs.get(node, ())):
        found = _cycle(nxt, needs, [*path, node], clear)
        if found:
            return found
    clear.add(node)
    return None
