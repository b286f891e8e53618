"""The rules a defined type gets from its fields' kinds and flags (pure): required fields have a value,
dates read as dates, codes have their form, choices are among theirs, counts are not negative, currencies
are ISO 4217 codes, shares read as fractions of a whole."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

from extraction.doctypes.defined.patterns import pattern_matches, pattern_unchecked
from extraction.doctypes.defined.spec import FieldSpec
from extraction.doctypes.defined.values import Fields, blank, ref_of, row_of
from extraction.rules.answers import get_value
from extraction.rules.required import required_fields_rule
from extraction.rules.violations import CHECK_UNFINISHED, RuleContext, Violation
from extraction.values.currency import ISO_4217, SYMBOL_CODES
from extraction.values.dates import DATE_EXAMPLES, parse_date
from extraction.values.numbers import fold, parse_fraction

__all__ = ["IMPLIED_LABELS", "folded", "implied_rules"]

Rule = Callable[[dict[str, Any], RuleContext], list[Violation]]

IMPLIED_LABELS = {
    "date_parse": "A date cannot be read",
    "value_pattern": "A value does not have its form",
    CHECK_UNFINISHED: "A value's check could not finish",
    "value_choice": "A value is not one of its choices",
    "negative_count": "A count is negative",
    "currency_code": "The currency is not a currency code",
    "fraction_parse": "A share cannot be read",
    "fraction_range": "A share is out of range",
}


def folded(text: str) -> str:
    return " ".join(fold(text).split())


def implied_rules(fields: Fields) -> list[Rule]:
    required = [ref for ref, f in fields.specs.items() if f.required]

    def label(answer: dict[str, Any], path: str) -> str:
        ref = ref_of(path)
        table = fields.spec.table_of(ref)
        own = fields.specs[ref].label
        if table is not None:
            return f"{fields.row_label(answer, table, row_of(path) or 0)}: {own}"
        group = next((g for g in fields.spec.groups if ref.startswith(f"{g.key}.")), None)
        return f"{group.label}: {own}" if group else own

    def required_paths(answer: dict[str, Any]) -> list[tuple[str, str]]:
        return [(p, label(answer, p)) for ref in required for p in fields.paths(answer, ref)]

    def kinds(answer: dict[str, Any], ctx: RuleContext) -> list[Violation]:
        out = []
        for ref, f in fields.specs.items():
            for p in fields.paths(answer, ref):
                value = get_value(answer, p)
                if not blank(value):
                    out += _kind_violations(f, p, lambda p=p: label(answer, p), value)
        return out

    return [required_fields_rule(required_paths), kinds] if required else [kinds]


def _kind_violations(f: FieldSpec, path: str, label: Callable[[], str], value: Any) -> list[Violation]:  # noqa: C901
    text = str(value).strip()
    if f.kind == "date" and parse_date(text) is None:
        return [Violation(code="date_parse", fields=(path,), expected="YYYY-MM-DD", found=text,
                          message=f"{label()} {text!r} is not a date in any known format (such as {DATE_EXAMPLES}); "
                          "answer it as YYYY-MM-DD")]
    matches = pattern_matches(f.pattern, text) if f.pattern else True
    if matches is None:
        return [pattern_unchecked(label(), f.pattern, text, path)]
    if matches is False:
        source = f" ({f.pattern_source})" if f.pattern_source else ""
        return [Violation(code="value_pattern", fields=(path,), expected=f.pattern, found=text,
                          message=f"{label()} {text!r} does not have the form {f.pattern}{source}")]
    if f.kind == "choice" and folded(text) not in {folded(c) for c in f.choices}:
        return [Violation(code="value_choice", fields=(path,), expected=", ".join(f.choices), found=text,
                          message=f"{label()} {text!r} is not one of: {', '.join(f.choices)}")]
    if f.kind == "count" and isinstance(value, int) and value < 0:
        return [Violation(code="negative_count", fields=(path,), expected=">= 0", found=value,
                          message=f"{label()} is {value}, but a count is never negative")]
    if f.kind == "currency" and text not in ISO_4217:
        return [Violation(code="currency_code", fields=(path,), expected="an ISO 4217 code", found=text,
                          message=f"{label()} {text!r} is not an ISO 4217 code: {_currency_hint(text)}")]
    if f.kind == "fraction":
        return _fraction_violations(path, label, value)
    return []


def _currency_hint(text: str) -> str:
    upper = text.upper()
    if upper in ISO_4217:
        return f"write it in capitals: {upper}"
    codes = SYMBOL_CODES.get(upper)
    if not codes:
        return "answer a three-letter ISO 4217 code such as EUR or USD"
    if len(codes) == 1:
        return f"that is a symbol; answer the code {codes[0]}"
    return (f"that symbol is shared by several currencies ({', '.join(codes)}); answer the code the document "
            "implies (address, country, tax id)")


def _fraction_violations(path: str, label: Callable[[], str], value: Any) -> list[Violation]:
    """A share is a fraction of a whole: more than nothing and at most all of it."""
    share = parse_fraction(value)
    if share is None:
        return [Violation(code="fraction_parse", fields=(path,), expected="a share like 1/3, 50% or 0.5", found=value,
                          message=f"{label()}: the share {value!r} is not a fraction; write it as 1/3, 50% or 0.5, "
                          "as the document gives it")]
    if not 0 < share <= 1:
        return [Violation(code="fraction_range", fields=(path,), expected="more than 0 and at most 1 (100%)",
                          found=str(value), message=f"{label()}: the share {value!r} = {_percent(share)} is outside "
                          "0..100%")]
    return []


def _percent(f: Fraction) -> str:
    return f"{float(f * 100):.4g}%"
