"""A definition's fields as its rules read them from an answer, and as its sentences show them (pure).

A reference names a field of the definition: 'total', 'property.id' (a group's field) or 'items.amount' (a
table's column, one path per row: 'items[0].amount'). Numbers are exact: Decimal, and Fraction for shares.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any

from extraction.doctypes.defined.sentences import fill
from extraction.doctypes.defined.spec import FieldSpec, TypeSpec
from extraction.rules.answers import get_value
from extraction.values.numbers import parse_fraction, parse_number

__all__ = ["Fields", "Number", "blank", "ref_of", "row_of", "shown"]

Number = Decimal | Fraction
_INDEX = re.compile(r"\[(\d+)\]")
_TEXT_SHOWN = 40  # characters of a text value a sentence quotes (a line's description, an owner's name)


def blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def ref_of(path: str) -> str:
    """'items[2].amount' -> 'items.amount'."""
    return _INDEX.sub("", path)


def row_of(path: str) -> int | None:
    m = _INDEX.search(path)
    return int(m.group(1)) if m else None


def shown(value: Any, kind: str, *, computed: bool = False) -> str:
    """A value as a sentence shows it. Money read from the page keeps its cents where it has them (12.5 ->
    '12.50', 150 -> '150'); money the rule computed is rounded to the cent ('140.00'). A computed share
    shows its percentage beside it ('3/4 (75%)')."""
    if value is None:
        return ""
    if isinstance(value, Fraction):
        if computed and value.denominator != 1:
            return f"{value} ({float(value * 100):.4g}%)"
        return str(value)
    if isinstance(value, Decimal):
        if kind == "money" and computed:
            try:
                return str(value.quantize(Decimal("0.01")))
            except InvalidOperation:  # beyond the context's precision: shown as it is
                return format(value, "f")
        value = value.normalize()
        if kind == "money" and value.as_tuple().exponent == -1:
            return f"{value:.2f}"
        return format(value.quantize(Decimal(1)) if value == value.to_integral_value() else value, "f")
    text = str(value).strip()
    return text if len(text) <= _TEXT_SHOWN else text[: _TEXT_SHOWN - 1].rstrip() + "…"


class Fields:
    """The fields of one definition, read from answers."""

    def __init__(self, spec: TypeSpec):
        self.spec = spec
        self.specs: dict[str, FieldSpec] = spec.field_specs()
        self.tables = {t.key: t for t in spec.tables}

    def kind(self, ref: str) -> str:
        f = self.specs.get(ref)
        return f.kind if f else "text"

    def rows(self, answer: dict[str, Any], table: str) -> list[Any]:
        rows = answer.get(table)
        return rows if isinstance(rows, list) else []

    def paths(self, answer: dict[str, Any], ref: str) -> list[str]:
        """The paths a reference names: 'total' and 'property.id' themselves, 'items.amount' on every row."""
        table = self.spec.table_of(ref)
        if table is None:
            return [ref]
        column = ref.partition(".")[2]
        return [f"{table}[{i}].{column}" for i in range(len(self.rows(answer, table)))]

    def number(self, answer: dict[str, Any], path: str) -> Number | None:
        """The value at `path` as an exact number (a share of kind fraction as a Fraction), or None."""
        value = get_value(answer, path)
        if self.kind(ref_of(path)) == "fraction":
            return parse_fraction(value)
        return parse_number(value)

    def row_label(self, answer: dict[str, Any], table: str, row: int) -> str:
        """How sentences name a row: the table's row_label filled from the row, else 'Owners 2'."""
        t = self.tables[table]
        if not t.row_label:
            return f"{t.label} {row + 1}"
        return fill(t.row_label, self.sentence_values(answer, row=(table, row)))

    def sentence_values(self, answer: dict[str, Any], *, row: tuple[str, int] | None = None) -> dict[str, str | None]:
        """What a sentence may name by a field's key: every single field ('total', 'property.id') and, in a
        rule over a table's rows, that row's columns ('quantity' and 'items.quantity'); None when blank."""
        out: dict[str, str | None] = {}
        for ref in self.specs:
            if self.spec.table_of(ref) is None:
                out[ref] = self._shown_at(answer, ref)
        if row is not None:
            table, i = row
            for c in self.tables[table].columns:
                out[c.key] = out[f"{table}.{c.key}"] = self._shown_at(answer, f"{table}[{i}].{c.key}")
            out["row"] = str(i + 1)
        return out

    def _shown_at(self, answer: dict[str, Any], path: str) -> str | None:
        value = get_value(answer, path)
        if blank(value):
            return None
        kind = self.kind(ref_of(path))
        if kind in ("number", "money", "count"):
            number = parse_number(value)
            return shown(number, kind) if number is not None else shown(value, "text")
        return shown(value, "text")
