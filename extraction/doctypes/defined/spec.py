"""A document type defined as data (pure): its fields, their groups and its rules from a fixed vocabulary.

An admin writes a definition in the app or in YAML; `extraction.doctypes.defined.check` says what is wrong with one,
`extraction.doctypes.defined.build` makes the DocumentType the loop, the rules and the desk run on. Everything here is
bounded so that a definition stays a description, never a program.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

__all__ = ["FIELD_KINDS", "LANGUAGES", "OPERATORS", "PLACEHOLDERS", "RULE_KINDS", "FieldSpec", "GroupSpec", "RubricSpec",
           "RuleSpec", "TableSpec", "TypeSpec"]

# text: any words; number: a decimal; money: an amount (currency signs and either decimal mark read);
# count: a whole number of things, never negative; date: a calendar date; code: an identifier whose form a
# pattern gives; choice: one of a list; currency: an ISO 4217 code; fraction: a share of a whole as the
# document writes it ("1/3", "33.33%", 0.5), read exactly, between 0 and 1.
FIELD_KINDS = ("text", "number", "money", "count", "date", "code", "choice", "currency", "fraction")
RULE_KINDS = ("column_sum", "expression", "condition", "compare", "digits_words", "pattern", "date_range", "one_of",
              "required", "min_rows", "unique")
# How `compare` relates a field to another field or to a number.
OPERATORS = ("<", "<=", ">", ">=", "=", "!=")
# Languages whose spelled numbers `digits_words` reads (extraction/doctypes/defined/number_words.py): "es_digits",
# Spanish digit words read digit by digit as tally sheets print counts; "en", English cardinal numbers.
LANGUAGES = ("es_digits", "en")
# What a rule's sentence may name besides the fields ({total}; in a rule over rows, that row's {amount}).
PLACEHOLDERS = ("expected", "found", "difference", "row", "row_label", "field", "target", "terms")

Key = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,39}$")]
# A field of a table is written 'table.column'; a single field by its key.
Ref = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,39}(\.[a-z][a-z0-9_]{0,39})?$")]
Label = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=80)]
Prose = Annotated[str, StringConstraints(strip_whitespace=True, max_length=2000)]
Sentence = Annotated[str, StringConstraints(strip_whitespace=True, max_length=300)]

MAX_FIELDS = 60
MAX_COLUMNS = 30
MAX_TABLES = 10
MAX_RULES = 60
MAX_CHOICES = 200
MAX_GROUPS = 10
MAX_RUBRIC = 5
DecimalText = Annotated[str, StringConstraints(strip_whitespace=True, pattern=r"^-?\d+(\.\d+)?$")]


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FieldSpec(_Spec):
    """One value to read: a single field, or a column of a table."""

    key: Key
    label: Label
    kind: Literal["text", "number", "money", "count", "date", "code", "choice", "currency", "fraction"] = "text"
    required: bool = False
    purpose: Sentence = ""  # what it is for: the model reads it, reviewers see it
    pattern: Annotated[str, StringConstraints(max_length=200)] = ""  # code: the form its value takes
    pattern_source: Sentence = ""  # where that form comes from (the issuer's specification, a law)
    choices: Annotated[list[Annotated[str, StringConstraints(max_length=120)]], Field(max_length=MAX_CHOICES)] = []
    # a single field's heading on the desk ('Totals'); fields without one show first, under the type's label,
    # and named headings after the tables, as a document prints its totals below its rows
    section: Annotated[str, StringConstraints(strip_whitespace=True, max_length=80)] = ""


class TableSpec(_Spec):
    """Repeated rows with columns (an invoice's lines, a tally's parties)."""

    key: Key
    label: Label
    purpose: Sentence = ""
    # how sentences name one row: 'Line {row}[ ({description})]'; [...] is left out when a value it names
    # is missing. Empty: the table's label and the row's number.
    row_label: Annotated[str, StringConstraints(strip_whitespace=True, max_length=120)] = ""
    columns: Annotated[list[FieldSpec], Field(min_length=1, max_length=MAX_COLUMNS)]


class GroupSpec(_Spec):
    """Single fields kept together under one key (a property's id and description): 'property.id'."""

    key: Key
    label: Label
    purpose: Sentence = ""
    fields: Annotated[list[FieldSpec], Field(min_length=1, max_length=MAX_COLUMNS)]


class RubricSpec(_Spec):
    """A question for a judge model about what arithmetic cannot check (is the issuer the seller?), asked
    once every rule passes; a 'no' flags the document with the judge's reason."""

    code: Key
    label: Label
    question: Sentence
    fields: Annotated[list[Ref], Field(max_length=MAX_FIELDS)] = []


class RuleSpec(_Spec):
    """One rule from the vocabulary, with its parameters and the sentence a reviewer reads when it breaks.

    The sentence may name `{expected}`, `{found}`, `{difference}` (found - expected), `{row}` (the row's
    number, in rules over a table's rows), `{row_label}` (the table's row_label), `{target}` (the field
    compared, in words), `{terms}` (a sum's values as written, joined by +), and any field by its key
    ({subtotal}; in a rule over rows, that row's {quantity}). A part in [brackets] is left out when a field
    it names has no value. Where the sentence names neither expected nor found, they are added.

    - column_sum: sum of `column` ('items.amount') equals `field` (or the number `value`), within
      `tolerance`; with `or_fields` it may equal any of those instead, and `message_none_of` is said when
      more than one of them is present. A column of fractions adds up exactly.
    - expression: `field` equals `expression` of other fields, within `tolerance`; with a table's columns on
      both sides it holds on every row. `defaults` gives operands that count as a number when missing
      ({"tax": "0"}); any other missing operand leaves the rule nothing to say.
    - condition: `expression` is two expressions compared ('amount_due >= 0', 'paid <= total + 0.01'), which
      must hold; with a table's columns in it, on every row. A division by zero makes the rule unchecked on
      that answer (a person looks), never silent.
    - compare: `field` `operator` (<, <=, >, >=, =, !=) `other` field plus `offset` (days for dates), or the
      number `value`: 'period_end > period_start', 'due_date <= issue_date + 60 days', 'amount_due >= 0'.
      Dates compare with dates, numbers with numbers; a column compared with a column of its table holds on
      every row.
    - digits_words: the number in `field` equals the number spelled in `words`, in `language`.
    - pattern: `field` matches `pattern` (whole value); `source` says where the pattern comes from.
    - date_range: `field` is a date on or after `after` and on or before `before` (YYYY-MM-DD), and not in
      the future when `not_future`.
    - one_of: `field` is one of `choices`.
    - required: every field of `fields` has a value (with `any`, at least one of them).
    - min_rows: `table` has at least `count` rows.
    - unique: no two rows have the same value in `field` (a table's column).
    """

    code: Key  # names the rule in violations, filters and reports
    label: Label  # the rule in a few words, in lists and filters
    kind: Literal["column_sum", "expression", "condition", "compare", "digits_words", "pattern", "date_range",
                  "one_of", "required", "min_rows", "unique"]
    message: Sentence
    message_none_of: Sentence = ""
    field: Ref | None = None
    or_fields: Annotated[list[Ref], Field(max_length=5)] = []
    value: DecimalText | None = None
    defaults: Annotated[dict[Ref, DecimalText], Field(max_length=20)] = {}
    any: bool = False
    fields: Annotated[list[Ref], Field(max_length=MAX_FIELDS)] = []
    column: Ref | None = None
    expression: Annotated[str, StringConstraints(max_length=300)] = ""
    tolerance: Annotated[str, StringConstraints(pattern=r"^\d+(\.\d+)?$")] = "0"
    words: Ref | None = None
    language: Literal["es_digits", "en"] = "en"
    pattern: Annotated[str, StringConstraints(max_length=200)] = ""
    source: Sentence = ""
    after: Annotated[str, StringConstraints(pattern=r"^\d{4}-\d{2}-\d{2}$")] | None = None
    before: Annotated[str, StringConstraints(pattern=r"^\d{4}-\d{2}-\d{2}$")] | None = None
    not_future: bool = False
    choices: Annotated[list[Annotated[str, StringConstraints(max_length=120)]], Field(max_length=MAX_CHOICES)] = []
    table: Key | None = None
    count: Annotated[int, Field(ge=0, le=10_000)] = 1
    operator: Literal["<", "<=", ">", ">=", "=", "!="] | None = None
    other: Ref | None = None
    offset: Annotated[str, StringConstraints(pattern=r"^[+-]?\d+(\.\d+)?$")] | None = None


class TypeSpec(_Spec):
    """A document type as data."""

    name: Key  # the slug batches store
    label: Label
    description: Prose = ""  # what documents it is for
    instructions: Prose = ""  # for the model, before the fields
    fields: Annotated[list[FieldSpec], Field(max_length=MAX_FIELDS)] = []
    groups: Annotated[list[GroupSpec], Field(max_length=MAX_GROUPS)] = []
    tables: Annotated[list[TableSpec], Field(max_length=MAX_TABLES)] = []
    rules: Annotated[list[RuleSpec], Field(max_length=MAX_RULES)] = []
    rubric: Annotated[list[RubricSpec], Field(max_length=MAX_RUBRIC)] = []

    def field_specs(self) -> dict[str, FieldSpec]:
        """Every field by its reference: 'total', 'property.id' for a group's field, and 'items.amount' for
        a table's column."""
        out: dict[str, FieldSpec] = {f.key: f for f in self.fields}
        for g in self.groups:
            out.update({f"{g.key}.{f.key}": f for f in g.fields})
        for t in self.tables:
            out.update({f"{t.key}.{c.key}": c for c in t.columns})
        return out

    def table_of(self, ref: str) -> str | None:
        """The table whose column `ref` is, or None for a single field (a group's included)."""
        head, dot, _ = ref.partition(".")
        return head if dot and head in {t.key for t in self.tables} else None

    def as_data(self) -> dict[str, Any]:
        """The definition as plain data, defaults left out (what YAML files and the database keep)."""
        return self.model_dump(mode="json", exclude_defaults=True)
