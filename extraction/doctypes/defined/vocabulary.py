"""The rule vocabulary in people's words (pure): each kind's name, what it checks in one line, and the
parameters it reads, in the order an editor asks for them. One home: the Types page reads it."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["FIELD_PARAMS", "KINDS", "LIST_PARAMS", "PARAMS", "Kind", "Param", "key_of"]


def key_of(label: str) -> str:
    """A key made from a label, as the definition's keys are written: 'Amount due' -> 'amount_due'."""
    key = re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_")[:40]
    return key if key[:1].isalpha() else (f"f_{key}"[:40] if key else "")


@dataclass(frozen=True)
class Param:
    name: str
    label: str
    hint: str = ""


@dataclass(frozen=True)
class Kind:
    name: str  # the code a definition stores
    title: str  # what people call it
    explains: str  # what it checks, in one line
    params: tuple[str, ...]


PARAMS = {p.name: p for p in (
    Param("field", "Field"),
    Param("column", "Column", "a table's column"),
    Param("or_fields", "Or any of", "other fields the sum may equal instead"),
    Param("value", "Number", "a number instead of a field"),
    Param("words", "Field in words"),
    Param("language", "Words in"),
    Param("table", "Table"),
    Param("expression", "Expression", "arithmetic of fields: subtotal + tax, sum(lines.amount)"),
    Param("defaults", "Count as", "a missing operand as a number: tax=0"),
    Param("tolerance", "Tolerance", "how far apart still counts as equal: 0.01"),
    Param("pattern", "Pattern", "the form of the whole value: [A-Z]{2}\\d{6}"),
    Param("source", "Where the pattern comes from"),
    Param("choices", "Choices", "comma-separated"),
    Param("fields", "Fields"),
    Param("after", "On or after", "YYYY-MM-DD"),
    Param("before", "On or before", "YYYY-MM-DD"),
    Param("count", "At least, rows"),
    Param("operator", "Is"),
    Param("other", "Than the field"),
    Param("offset", "Plus", "days for dates, an amount for numbers"),
)}
# parameters whose value names fields of the type (picked from them, never typed); the lists take several
FIELD_PARAMS = frozenset({"field", "column", "or_fields", "words", "fields", "other"})
LIST_PARAMS = frozenset({"or_fields", "fields", "choices"})

KINDS = {k.name: k for k in (
    Kind("column_sum", "A column adds up", "The rows of a table's column add up to a field, or to a number.",
         ("column", "field", "or_fields", "value", "tolerance")),
    Kind("expression", "A field is computed from others",
         "A field equals arithmetic of other fields, such as subtotal + tax; over a table, on every row.",
         ("field", "expression", "defaults", "tolerance")),
    Kind("condition", "A condition holds",
         "Two amounts compared hold, such as amount_due >= 0 or lines.paid <= lines.due.", ("expression", "defaults")),
    Kind("compare", "A field compared with another",
         "A date or a number compared with another field (plus days or an amount), or with a number.",
         ("field", "operator", "other", "offset", "value")),
    Kind("digits_words", "Digits match words", "A number agrees with the same number spelled in words.",
         ("field", "words", "language")),
    Kind("pattern", "A value has its form", "A field's whole value matches a pattern, which says where it comes from.",
         ("field", "pattern", "source")),
    Kind("date_range", "A date lies in a range", "A date is on or after one day and on or before another, or not "
         "in the future.", ("field", "after", "before")),
    Kind("one_of", "A value is one of a list", "A field's value is one of the choices.", ("field", "choices")),
    Kind("required", "Fields have values", "Each of the fields has a value (or, with any, at least one).", ("fields",)),
    Kind("min_rows", "A table has rows", "A table has at least so many rows.", ("table", "count")),
    Kind("unique", "No value twice", "No two rows of a table have the same value in a column.", ("field",)),
)}
