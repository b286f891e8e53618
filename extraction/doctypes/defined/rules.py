"""The vocabulary's rules, made from a definition's RuleSpecs (pure).

Each rule reports what it expected and found and says the admin's sentence with its placeholders filled
(extraction/doctypes/defined/spec.py's RuleSpec lists them). A value a rule needs and does not have is never evidence
that another is wrong: the rule then says nothing, and `required` or the field's kind reports what is missing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import date, timedelta
from decimal import Decimal
from fractions import Fraction
from typing import Any

from extraction.doctypes.defined.expressions import COMPARISONS, Condition, Expr, parse_condition, parse_expression
from extraction.doctypes.defined.kinds import folded
from extraction.doctypes.defined.number_words import parse_number_words
from extraction.doctypes.defined.patterns import pattern_matches, pattern_unchecked
from extraction.doctypes.defined.sentences import fill, placeholders
from extraction.doctypes.defined.spec import RuleSpec
from extraction.doctypes.defined.values import Fields, Number, blank, ref_of, row_of, shown
from extraction.rules.answers import get_value
from extraction.rules.violations import CHECK_UNFINISHED, RuleContext, Violation
from extraction.values.dates import parse_date
from extraction.values.numbers import parse_fraction, parse_number

__all__ = ["rule_make"]

Rule = Callable[[dict[str, Any], RuleContext], list[Violation]]
_NEAR_ONE = Fraction(1, 100)  # rounded shares miss a whole by a rounding step or a few


def rule_make(rule: RuleSpec, fields: Fields) -> Rule:
    make = {"column_sum": _column_sum, "expression": _expression, "condition": _condition, "compare": _compare,
            "digits_words": _digits_words,
            "pattern": _pattern, "date_range": _date_range, "one_of": _one_of, "required": _required,
            "min_rows": _min_rows, "unique": _unique}[rule.kind]
    check = make(rule, fields)
    check.__name__ = rule.code
    return check


def _words(ref: str, fields: Fields) -> str:
    """A field's label as a sentence says it mid-way: 'Total' -> 'total', 'VAT' stays."""
    spec = fields.specs.get(ref_of(ref))
    label = spec.label if spec else ref.replace("_", " ")
    return label if label[1:2].isupper() else label[:1].lower() + label[1:]


def _violation(rule: RuleSpec, fields: Fields, answer: dict[str, Any], cited: tuple[str, ...], *, expected: Any,
               found: Any, kind: str = "text", computed: str = "", message: str = "", row_path: str = "",
               subject: str | None = None, **extra: str) -> Violation:
    """A broken rule, its sentence filled. `computed` names which of expected/found the rule computed (shown
    rounded as computed values are); `row_path` is a path on the row a rule over rows speaks of; `extra`
    adds placeholders (target, terms); `subject` is the field the rule is checked against (a sum's total)."""
    table, row = _table_row(fields, row_path)
    values = fields.sentence_values(answer, row=(table, row) if table is not None and row is not None else None)
    values.update(expected=shown(expected, kind, computed=computed == "expected"),
                  found=shown(found, kind, computed=computed == "found"), field=_words(cited[-1], fields) if cited else "")
    if isinstance(expected, Decimal) and isinstance(found, Decimal):
        values["difference"] = shown(found - expected, kind, computed=True)
    elif isinstance(expected, Decimal | Fraction) and isinstance(found, Decimal | Fraction):
        values["difference"] = shown(Fraction(found) - Fraction(expected), kind, computed=True)
    if table is not None and row is not None:
        values["row_label"] = fields.row_label(answer, table, row)
    values.update(extra)
    template = message or rule.message
    text = fill(template, values)
    if not placeholders(template) & {"expected", "found"}:
        text = f"{text.rstrip('.')} (expected {values['expected']}, found {values['found']})"
    return Violation(code=rule.code, fields=cited, expected=_json_number(expected), found=_json_number(found),
                     message=text, subject=subject)


def _table_row(fields: Fields, path: str) -> tuple[str | None, int | None]:
    """The table and row of a path on a table's row ('items[2].amount' -> ('items', 2)), else Nones."""
    table, bracket, _ = path.partition("[")
    return (table, row_of(path)) if bracket and table in fields.tables else (None, None)


def _json_number(value: Any) -> Any:
    """Integral shares are stored as numbers (1, not '1'); other values as Violation keeps them."""
    return value.numerator if isinstance(value, Fraction) and value.denominator == 1 else value


def _within(a: Number, b: Number, rule: RuleSpec) -> bool:
    return abs(Fraction(a) - Fraction(b)) <= Fraction(Decimal(rule.tolerance))


def _column_sum(rule: RuleSpec, fields: Fields) -> Rule:
    column = rule.column or ""
    kind = fields.kind(column)
    targets = [ref for ref in (rule.field, *rule.or_fields) if ref]
    constant = parse_fraction(rule.value) if rule.value is not None else None

    def check(answer: dict[str, Any], ctx: RuleContext) -> list[Violation]:
        paths = fields.paths(answer, column)
        values = [fields.number(answer, p) for p in paths]
        if not paths or any(v is None for v in values):
            return []  # a missing value is the required rule's to report, not evidence of a wrong sum
        exact = kind == "fraction"
        total: Number = sum((Fraction(v) for v in values if v is not None), Fraction(0)) if exact else \
            sum((v for v in values if isinstance(v, Decimal)), Decimal(0))
        present = [(ref, n) for ref in targets if (n := fields.number(answer, ref)) is not None]
        if constant is not None:
            present = [("", constant if exact else Decimal(constant.numerator) / Decimal(constant.denominator))]
        if not present or any(_within(total, n, rule) for _, n in present):
            return []
        terms = " + ".join(shown(get_value(answer, p), "text") for p in paths)
        ref, expected = present[0]
        message = rule.message_none_of if len(present) > 1 and rule.message_none_of else ""
        v = _violation(rule, fields, answer, (*paths, *([ref] if ref else [])), expected=expected, found=total,
                       kind=kind, computed="found", message=message, target=_words(ref, fields) if ref else "",
                       terms=terms, subject=ref or None)
        if exact and abs(Fraction(total) - Fraction(expected)) < _NEAR_ONE and _rounded(fields, answer, paths):
            v = replace(v, message=(
                f"{v.message.rstrip('.')}. Rounded shares such as 33.33% do not add up to exactly 100%; if the "
                "document gives exact fractions (like 1/3), answer those"))
        return [v]

    return check


def _rounded(fields: Fields, answer: dict[str, Any], paths: list[str]) -> bool:
    """Some share is written as a decimal, which a third or a sixth can only be rounded to."""
    return any(isinstance(v := get_value(answer, p), float) or any(c in str(v) for c in ".,") for p in paths)


def _expression(rule: RuleSpec, fields: Fields) -> Rule:
    expr = parse_expression(rule.expression)
    target = rule.field or ""
    kind = fields.kind(target)
    singles = [n for n in expr.ordered_names() if n not in expr.sums()]
    tables = {t for n in [*singles, target] if (t := fields.spec.table_of(n))}
    defaults = {ref: Decimal(v) for ref, v in rule.defaults.items()}

    def one(answer: dict[str, Any], row: int | None) -> list[Violation]:
        path = _on_row(fields, row)
        read, values, columns = _operands(fields, answer, path, singles, expr.sums(), defaults)
        expected, found = expr.evaluate(values, columns), fields.number(answer, path(target))  # type: ignore[arg-type]
        if expected is None and (zero := expr.zero_divisor(values, columns)) is not None:  # type: ignore[arg-type]
            return [_uncomputable(rule, expr, zero, path, singles)]
        if expected is None or found is None or _within(expected, found, rule):
            return []
        cited = tuple(dict.fromkeys([*(path(n) for n in singles if read[n] is not None),
                                     *(p for n in expr.ordered_names() if n in expr.sums()
                                       for p in fields.paths(answer, n)), path(target)]))
        return [_violation(rule, fields, answer, cited, expected=expected, found=found, kind=kind, computed="expected",
                           row_path=path(target) if row is not None else "", target=_words(target, fields),
                           subject=path(target))]

    return _over_rows(one, tables, fields)


def _on_row(fields: Fields, row: int | None) -> Callable[[str], str]:
    """The path of a reference on `row` ('lines.amount' -> 'lines[2].amount'); a single field's own path."""
    def path(ref: str) -> str:
        table = fields.spec.table_of(ref)
        return f"{table}[{row}].{ref.partition('.')[2]}" if table and row is not None else ref

    return path


def _operands(fields: Fields, answer: dict[str, Any], path: Callable[[str], str], singles: list[str],
              sums: set[str], defaults: dict[str, Decimal]) -> tuple[dict, dict, dict]:
    """What an expression reads: each single operand as read (None when missing), the same with `defaults`
    for the missing, and each summed column whole."""
    read = {n: fields.number(answer, path(n)) for n in singles}
    values = {n: read[n] if read[n] is not None else defaults.get(n) for n in singles}
    columns = {n: [fields.number(answer, p) for p in fields.paths(answer, n)] for n in sums}
    return read, values, columns


def _over_rows(one: Callable[[dict[str, Any], int | None], list[Violation]], tables: set[str], fields: Fields) -> Rule:
    """A rule checked once, or on every row of the one table it reads."""
    def check(answer: dict[str, Any], ctx: RuleContext) -> list[Violation]:
        if not tables:
            return one(answer, None)
        (table,) = tables
        return [v for i in range(len(fields.rows(answer, table))) for v in one(answer, i)]

    return check


def _uncomputable(rule: RuleSpec, expr: Expr | Condition, zero: Expr, path: Callable[[str], str],
                  singles: list[str]) -> Violation:
    """A rule whose arithmetic cannot be computed on this answer (it divides by 0): unchecked, for a person to
    look at, and a problem of the definition, which did not say what the rule means then. Never a pass."""
    cited = tuple(dict.fromkeys(path(n) for n in singles))
    return Violation(code=CHECK_UNFINISHED, fields=cited, expected=str(expr), found=f"{zero} = 0",
                     message=f"{rule.label}: the rule could not be computed on this answer, because {expr} divides by "
                     f"{zero}, which is 0 here. The values are unchecked: look at them on the page. The type's "
                     "definition should say what the rule means when that is 0.")


def _condition(rule: RuleSpec, fields: Fields) -> Rule:
    """`expression` is a condition that must hold ('amount_due >= 0'); with columns, on every row."""
    cond = parse_condition(rule.expression)
    singles = [n for n in cond.ordered_names() if n not in cond.sums()]
    tables = {t for n in singles if (t := fields.spec.table_of(n))}
    defaults = {ref: Decimal(v) for ref, v in rule.defaults.items()}
    kind = next((fields.kind(n) for n in cond.ordered_names()), "number")

    def one(answer: dict[str, Any], row: int | None) -> list[Violation]:
        path = _on_row(fields, row)
        read, values, columns = _operands(fields, answer, path, singles, cond.sums(), defaults)
        left, right = cond.left.evaluate(values, columns), cond.right.evaluate(values, columns)  # type: ignore[arg-type]
        if left is None or right is None:
            zero = cond.zero_divisor(values, columns)  # type: ignore[arg-type]
            return [] if zero is None else [_uncomputable(rule, cond, zero, path, singles)]
        if cond.holds(left, right):
            return []
        cited = tuple(dict.fromkeys([*(path(n) for n in singles if read[n] is not None),
                                     *(p for n in cond.sums() for p in fields.paths(answer, n))]))
        subject = path(cond.left.ordered_names()[0]) if cond.left.kind == "name" else None
        bound = str(cond.right) if cond.right.kind == "number" else shown(right, kind, computed=cond.right.kind != "name")
        return [_violation(rule, fields, answer, cited, expected=f"{cond.words} {bound}",
                           found=left, kind=kind, computed="found" if cond.left.kind != "name" else "",
                           row_path=cited[0] if row is not None and cited else "", subject=subject)]

    return _over_rows(one, tables, fields)


_DATE_WORDS = {"<": "before", "<=": "on or before", ">": "after", ">=": "on or after", "=": "on", "!=": "not on"}


def _compare(rule: RuleSpec, fields: Fields) -> Rule:
    """`field` `operator` `other` (+ `offset`, days for dates) or the number `value`; a column against a
    column of its table, row by row; against a single field, each row against it."""
    op = rule.operator or "="
    dates = fields.kind(rule.field or "") == "date"
    offset = Decimal(rule.offset) if rule.offset else Decimal(0)
    constant = Decimal(rule.value) if rule.value is not None else None
    other_table = fields.spec.table_of(rule.other) if rule.other else None
    same_table = other_table is not None and other_table == fields.spec.table_of(rule.field or "")

    def read(answer: dict[str, Any], path: str) -> date | Decimal | None:
        if dates:
            value = get_value(answer, path)
            return parse_date(str(value)) if not blank(value) else None
        n = fields.number(answer, path)
        return Decimal(n.numerator) / Decimal(n.denominator) if isinstance(n, Fraction) else n

    def check(answer: dict[str, Any], ctx: RuleContext) -> list[Violation]:
        out = []
        for i, p in enumerate(fields.paths(answer, rule.field or "")):
            found = read(answer, p)
            other_path = None
            if constant is not None:
                bound: date | Decimal | None = constant
            else:
                others = fields.paths(answer, rule.other or "")
                if same_table:
                    other_path = others[i] if i < len(others) else None
                else:
                    other_path = others[0] if others else None
                bound = read(answer, other_path) if other_path else None
            if found is None or bound is None:
                continue  # a missing or unreadable value is another rule's to report
            bound = bound + timedelta(days=int(offset)) if isinstance(bound, date) else bound + offset
            if COMPARISONS[op][0](found, bound):  # type: ignore[arg-type]
                continue
            shown_bound = bound.isoformat() if isinstance(bound, date) else shown(bound, fields.kind(rule.field or ""))
            expected = f"{_DATE_WORDS[op] if dates else COMPARISONS[op][1]} {shown_bound}"
            out.append(_violation(rule, fields, answer, (p, *([other_path] if other_path else [])), expected=expected,
                                  found=found.isoformat() if isinstance(found, date) else found,
                                  kind="text" if dates else fields.kind(rule.field or ""), row_path=p, subject=p))
        return out

    return check


def _digits_words(rule: RuleSpec, fields: Fields) -> Rule:
    def check(answer: dict[str, Any], ctx: RuleContext) -> list[Violation]:
        out = []
        for number_path, words_path in zip(fields.paths(answer, rule.field or ""),
                                           fields.paths(answer, rule.words or ""), strict=False):
            number, words = parse_number(get_value(answer, number_path)), get_value(answer, words_path)
            spelled = (parse_number_words(words, language=rule.language) if isinstance(words, str) and words.strip()
                       else None)
            if number is None or spelled is None or number == spelled:
                continue
            out.append(_violation(rule, fields, answer, (number_path, words_path), expected=spelled, found=number,
                                  kind="number", row_path=number_path))
        return out

    return check


def _each_value(rule: RuleSpec, fields: Fields, test: Callable[[Any], tuple[Any, Any] | None]) -> Rule:
    """A rule over one field's values (every row's, for a column): `test(value)` gives (expected, found)
    when the value breaks it."""

    def check(answer: dict[str, Any], ctx: RuleContext) -> list[Violation]:
        out = []
        for p in fields.paths(answer, rule.field or ""):
            value = get_value(answer, p)
            if blank(value):
                continue
            broken = test(value)
            if broken is not None:
                out.append(_violation(rule, fields, answer, (p,), expected=broken[0], found=broken[1], row_path=p))
        return out

    return check


def _pattern(rule: RuleSpec, fields: Fields) -> Rule:
    def check(answer: dict[str, Any], ctx: RuleContext) -> list[Violation]:
        out = []
        for p in fields.paths(answer, rule.field or ""):
            value = get_value(answer, p)
            if blank(value):
                continue
            text = str(value).strip()
            matches = pattern_matches(rule.pattern, text)
            if matches is None:
                out.append(pattern_unchecked(_words(p, fields), rule.pattern, text, p))
            elif not matches:
                out.append(_violation(rule, fields, answer, (p,), expected=rule.pattern, found=text, row_path=p))
        return out

    return check


def _date_range(rule: RuleSpec, fields: Fields) -> Rule:
    after = date.fromisoformat(rule.after) if rule.after else None
    before = date.fromisoformat(rule.before) if rule.before else None

    def test(value: Any) -> tuple[Any, Any] | None:
        d = parse_date(str(value))
        if d is None:
            return None  # an unreadable date is date_parse's to report
        ends = [x for x in (before, date.today() if rule.not_future else None) if x]
        latest = min(ends) if ends else None
        if (after is None or d >= after) and (latest is None or d <= latest):
            return None
        if after and latest:
            return f"{after.isoformat()} to {latest.isoformat()}", d.isoformat()
        return (f"on or after {after.isoformat()}" if after else f"on or before {latest.isoformat()}"), d.isoformat()

    return _each_value(rule, fields, test)


def _one_of(rule: RuleSpec, fields: Fields) -> Rule:
    allowed = {folded(c) for c in rule.choices}
    return _each_value(rule, fields, lambda v: (", ".join(rule.choices), str(v).strip())
                       if folded(str(v)) not in allowed else None)


def _required(rule: RuleSpec, fields: Fields) -> Rule:
    def check(answer: dict[str, Any], ctx: RuleContext) -> list[Violation]:
        paths = [p for ref in rule.fields for p in fields.paths(answer, ref)]
        missing = [p for p in paths if blank(get_value(answer, p))]
        if rule.any:
            if not paths or len(missing) < len(paths):
                return []
            return [_violation(rule, fields, answer, tuple(paths), expected="a value in one of them", found=None)]
        return [_violation(rule, fields, answer, (p,), expected="a value", found=None, row_path=p) for p in missing]

    return check


def _min_rows(rule: RuleSpec, fields: Fields) -> Rule:
    def check(answer: dict[str, Any], ctx: RuleContext) -> list[Violation]:
        n = len(fields.rows(answer, rule.table or ""))
        if n >= rule.count:
            return []
        return [_violation(rule, fields, answer, (rule.table or "",), expected=f"at least {rule.count} rows", found=n)]

    return check


def _unique(rule: RuleSpec, fields: Fields) -> Rule:
    def check(answer: dict[str, Any], ctx: RuleContext) -> list[Violation]:
        seen: dict[str, str] = {}
        out = []
        for p in fields.paths(answer, rule.field or ""):
            value = get_value(answer, p)
            if blank(value):
                continue
            key = folded(str(value))
            if key in seen:
                out.append(_violation(rule, fields, answer, (seen[key], p), expected="a value no other row has",
                                      found=str(value).strip(), row_path=p))
            else:
                seen[key] = p
        return out

    return check
