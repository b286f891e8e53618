"""A document type defined as data (pure): its fields, their groups and its rules from a fixed vocabulary.

An admin writes a definition in the app or in YAML; `extraction.typedef.check` says what is wrong with one,
`extraction.typedef.build` makes the DocumentType the loop, the rules and the desk run on. Everything here is
bounded so that a definition stays a description, never a program.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

__all__ = ["FIELD_KINDS", "LANGUAGES", "RULE_KINDS", "FieldSpec", "RuleSpec", "TableSpec", "TypeSpec"]

# text: any words; number: a decimal; money: an amount (currency signs and either decimal mark read);
# count: a whole number of things, never negative; date: a calendar date; code: an identifier whose form a
# pattern gives; choice: one of a list.
FIELD_KINDS = ("text", "number", "money", "count", "date", "code", "choice")
RULE_KINDS = ("column_sum", "expression", "digits_words", "pattern", "date_range", "one_of", "required",
              "min_rows", "unique")
# Languages whose spelled numbers `digits_words` reads (extraction/typedef/number_words.py): "es_digits",
# Spanish digit words read digit by digit as tally sheets print counts; "en", English cardinal numbers.
LANGUAGES = ("es_digits", "en")

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


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FieldSpec(_Spec):
    """One value to read: a single field, or a column of a table."""

    key: Key
    label: Label
    kind: Literal["text", "number", "money", "count", "date", "code", "choice"] = "text"
    required: bool = False
    purpose: Sentence = ""  # what it is for: the model reads it, reviewers see it
    pattern: Annotated[str, StringConstraints(max_length=200)] = ""  # code: the form its value takes
    pattern_source: Sentence = ""  # where that form comes from (the issuer's specification, a law)
    choices: Annotated[list[Annotated[str, StringConstraints(max_length=120)]], Field(max_length=MAX_CHOICES)] = []


class TableSpec(_Spec):
    """Repeated rows with columns (an invoice's lines, a tally's parties)."""

    key: Key
    label: Label
    purpose: Sentence = ""
    columns: Annotated[list[FieldSpec], Field(min_length=1, max_length=MAX_COLUMNS)]


class RuleSpec(_Spec):
    """One rule from the vocabulary, with its parameters and the sentence a reviewer reads when it breaks.

    The sentence may name `{expected}`, `{found}` and `{row}` (the row's number, in rules over a table's
    rows); where it names neither value, the loop's feedback adds them.

    - column_sum: sum of `column` ('items.amount') equals `field`, within `tolerance`.
    - expression: `field` equals `expression` of other fields, within `tolerance`; with a table's columns on
      both sides it holds on every row.
    - digits_words: the number in `field` equals the number spelled in `words`, in `language`.
    - pattern: `field` matches `pattern` (whole value); `source` says where the pattern comes from.
    - date_range: `field` is a date on or after `after` and on or before `before` (YYYY-MM-DD), and not in
      the future when `not_future`.
    - one_of: `field` is one of `choices`.
    - required: every field of `fields` has a value.
    - min_rows: `table` has at least `count` rows.
    - unique: no two rows have the same value in `field` (a table's column).
    """

    code: Key  # names the rule in violations, filters and reports
    label: Label  # the rule in a few words, in lists and filters
    kind: Literal["column_sum", "expression", "digits_words", "pattern", "date_range", "one_of", "required",
                  "min_rows", "unique"]
    message: Sentence
    field: Ref | None = None
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


class TypeSpec(_Spec):
    """A document type as data."""

    name: Key  # the slug batches store
    label: Label
    description: Prose = ""  # what documents it is for
    instructions: Prose = ""  # for the model, before the fields
    fields: Annotated[list[FieldSpec], Field(max_length=MAX_FIELDS)] = []
    tables: Annotated[list[TableSpec], Field(max_length=MAX_TABLES)] = []
    rules: Annotated[list[RuleSpec], Field(max_length=MAX_RULES)] = []

    def field_specs(self) -> dict[str, FieldSpec]:
        """Every field by its reference: 'total', and 'items.amount' for a table's column."""
        out: dict[str, FieldSpec] = {f.key: f for f in self.fields}
        for t in self.tables:
            out.update({f"{t.key}.{c.key}": c for c in t.columns})
        return out

    def as_data(self) -> dict[str, Any]:
        """The definition as plain data, defaults left out (what YAML files and the database keep)."""
        return self.model_dump(mode="json", exclude_defaults=True)
