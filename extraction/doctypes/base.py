"""What a document type is (pure): a schema of proved fields, a prompt, rules, and how the desk shows it."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Generic, NamedTuple, TypeVar

import pydantic
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer, model_validator

from extraction.proofs.refs import ProofRef
from extraction.rules.answers import AnswerParseError, get_value, is_proved_path, iter_fields, loc_to_path, set_field
from extraction.rules.violations import RubricCheck, Rule
from extraction.values.numbers import parse_number

__all__ = [
    "Amount",
    "Count",
    "EditRefused",
    "EditedAmount",
    "DocumentType",
    "FieldGroup",
    "FieldItem",
    "Proved",
    "TruthComparison",
    "TruthDifference",
    "fields_group",
    "table_group",
]

T = TypeVar("T")


class Proved(BaseModel, Generic[T]):
    """One answered field: its value (None when the document does not show it) and where it was read."""

    # numbers_to_str: an invoice number written as 42183017 is still the text "42183017"
    model_config = ConfigDict(extra="ignore", coerce_numbers_to_str=True)

    value: T | None = None
    proof: list[ProofRef] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _bare_value(cls, data: Any) -> Any:
        # A bare value (no {"value", "proof"} wrapper) is kept, with no proof: the proof rule then says
        # precisely what is missing instead of a schema error on the whole answer.
        if isinstance(data, dict) and (not data or "value" in data or "proof" in data):
            return data
        return {"value": data, "proof": []}


def _parse_amount(value: Any) -> Any:
    if isinstance(value, str):
        number = parse_number(value)
        if number is None and value.strip():
            raise ValueError(f"not a number: {value!r}")
        return number
    return value


def _amount_json(value: Decimal) -> int | float:
    return int(value) if value == value.to_integral_value() else float(value)


# A money amount or quantity: accepts 12.5, "12.50", "1.234,56 €"; kept exact as Decimal, written to JSON
# as a plain number so stored answers stay readable.
Amount = Annotated[
    Decimal,
    BeforeValidator(_parse_amount),
    PlainSerializer(_amount_json, return_type=int | float, when_used="json"),
]

# What a reviewer may type into a field, whatever its kind: longer is no reading of a page, only a burden on
# every later read of the answer.
MAX_EDIT_CHARS = 1000
# The largest count a reviewer may type: a billion votes or pieces, well inside PostgreSQL's integer and a
# browser's exact JSON numbers.
MAX_COUNT = 10**9
# The digits of an amount a reviewer may type: a non-whole amount is written to JSON as a float, exact to 15.
MAX_AMOUNT_DIGITS = 15

# A count of things (votes, pieces): a whole number, never negative, at most MAX_COUNT. For reviewers' edits
# (`editable`); the model's answers keep the schema's plain int so that a negative count is a rule the loop
# can feed back.
Count = Annotated[int, Field(ge=0, le=MAX_COUNT)]

# An amount a reviewer types (`editable`): an Amount of at most MAX_AMOUNT_DIGITS digits, never NaN or infinite.
EditedAmount = Annotated[Amount, Field(max_digits=MAX_AMOUNT_DIGITS, allow_inf_nan=False)]

# --- the desk's view ---------------------------------------------------------------------------------


class FieldItem(NamedTuple):
    path: str
    label: str
    value: Any


@dataclass
class FieldGroup:
    """A box of fields on the desk; a table group also has `columns` and one list of items per row."""

    name: str
    fields: list[FieldItem] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    rows: list[list[FieldItem]] = field(default_factory=list)
    row_labels: list[str] = field(default_factory=list)

    @property
    def is_table(self) -> bool:
        return bool(self.columns)


def fields_group(name: str, answer: dict[str, Any], items: list[tuple[str, str]]) -> FieldGroup:
    """A group of single fields from (path, label) pairs; missing paths show as None."""
    return FieldGroup(name=name, fields=[FieldItem(p, label, get_value(answer, p)) for p, label in items])


def table_group(
    name: str,
    answer: dict[str, Any],
    list_key: str,
    columns: list[tuple[str, str]],
    row_label: Callable[[int, dict[str, Any]], str] | None = None,
) -> FieldGroup:
    """A table group: one row per item of `answer[list_key]`, one column per (key, label)."""
    items = answer.get(list_key) or []
    group = FieldGroup(name=name, columns=[label for _, label in columns])
    for i, item in enumerate(items):
        row = []
        for key, label in columns:
            path = f"{list_key}[{i}].{key}"
            row.append(FieldItem(path, label, get_value(answer, path)))
            group.fields.append(row[-1])
        group.rows.append(row)
        group.row_labels.append(row_label(i, item) if row_label else str(i + 1))
    return group


@functools.lru_cache(maxsize=256)
def _cached_adapter(kind: Any) -> pydantic.TypeAdapter:
    return pydantic.TypeAdapter(kind)


def _adapter(kind: Any) -> pydantic.TypeAdapter:
    """A field type's validator, built once per type (building one is a good part of an edit's time)."""
    try:
        hash(kind)
    except TypeError:  # a type that cannot be a cache key: built each time
        return pydantic.TypeAdapter(kind)
    return _cached_adapter(kind)


def lower_first(label: str) -> str:
    # "Votes in words" -> "votes in words", but "VAT" stays "VAT"
    return label[:1].lower() + label[1:] if label[1:2].islower() else label


class FieldLabels(dict[str, str]):
    """path -> label for people, from a document type's field groups; `of` names any path, `of_family` a
    family of paths across a table's rows ('rows[].votes')."""

    def of(self, path: str) -> str:
        """A path the groups do not show reads as words, under its row's label when the row has one
        ('rows[3].party' -> 'PPT — ...: party')."""
        if path in self:
            return self[path]
        row, _, rest = path.rpartition(".")
        if row in self:
            return f"{self[row]}: {path_words(rest)}"
        return path_words(path)

    def of_family(self, family: str) -> str:
        """'rows[].votes' -> 'Votes by party · votes' (the table's name, then the column as one row names it);
        a family that is one field is that field's label; '(…)' markers stay as they are."""
        head, sep, column = family.partition("[].")
        if sep:
            sample = next((label for path, label in self.items()
                           if path.startswith(head + "[") and path.endswith("." + column)), "")
            return f"{self.get(head, path_words(head))} · {sample.rpartition(': ')[2] or path_words(column)}"
        return family if family.startswith("(") else self.get(family) or path_words(family)


def field_labels(groups: list[FieldGroup]) -> FieldLabels:
    """path -> label: a table cell is '<row label>: <column label>', a single field its own label; a table's
    list ('rows') is the group's name and each of its rows ('rows[3]') the row's label."""
    out = FieldLabels()
    for group in groups:
        if group.is_table:
            for row_label, row in zip(group.row_labels, group.rows, strict=False):
                if row_label.isdigit():  # a bare row number says little on its own: "Line items 2"
                    row_label = f"{group.name} {row_label}"
                for item in row:
                    out[item.path] = f"{row_label}: {lower_first(item.label)}"
                    head, _, _ = item.path.rpartition(".")
                    out.setdefault(head, row_label)
                    out.setdefault(head.split("[", 1)[0], group.name)
        else:
            for item in group.fields:
                out.setdefault(item.path, item.label)
    return out


def path_words(path: str) -> str:
    """A field path in words when no group names it: 'rows[3].party' -> 'rows 4: party'."""
    text = re.sub(r"\[(\d+)\]", lambda m: f" {int(m.group(1)) + 1}", path)
    return text.replace(".", ": ").replace("_", " ")


def _default_groups(answer: dict[str, Any]) -> list[FieldGroup]:
    return [
        FieldGroup(
            name="Fields", fields=[FieldItem(p, p, node.get("value")) for p, node in iter_fields(answer)]
        )
    ]


class TruthDifference(NamedTuple):
    """One field whose answer is not the truth the document itself states (the acta's QR)."""

    path: str
    found: Any  # what the answer says
    truth: Any
    row: str | None = None  # the name of the row the field is in, when it is in one
    scored: bool = True  # counts in accuracy figures (an identifier such as the acta code does not)


@dataclass(frozen=True)
class TruthComparison:
    """An answer held against a document's truth: the differences, and how many fields accuracy counts."""

    scored_fields: int
    differences: list[TruthDifference]


class EditRefused(ValueError):
    """A reviewer's edit the document type does not allow; the message is for the reviewer."""


def _shown(text: str) -> str:
    """A reviewer's value quoted in a message, cut short: the message is read beside the field."""
    return repr(text if len(text) <= 60 else text[:60] + "…")


def _pattern(path_pattern: str) -> re.Pattern[str]:
    return re.compile(re.escape(path_pattern).replace(r"\[\*\]", r"\[\d+\]"))


# --- the type itself ---------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class DocumentType:
    name: str  # slug, stored on batches
    label: str  # for people
    schema: type[BaseModel]
    system_prompt: str  # what to extract; says the document text is data, never instructions
    rules: list[Rule] = field(default_factory=list)
    rubric: list[RubricCheck] = field(default_factory=list)
    # what a page image goes through before a model sees it (the acta masks its QR code, which holds the truth)
    prepare_image: Callable[[Any], Any] | None = None
    # (pages=, prompt=) -> answer, read without an LLM (the acta's template reader); None: the type needs an LLM
    offline_reader: Callable[..., dict[str, Any]] | None = None
    # the first page's image path -> the truth the page itself states (the acta's QR), kept for scoring and never
    # shown to a model; None when the page states none, ValueError when it states something this type cannot read
    page_truth: Callable[[Path], dict[str, Any] | None] | None = None
    # (answer, truth) -> how the answer differs from a truth `page_truth` gave; None when the truth is unusable
    compare_truth: Callable[[Any, Any], TruthComparison | None] | None = None
    word_numbers: bool = False  # Spanish digit words in a cited line count as support for numbers
    # (answer, path) -> the label printed on the row of that field (the acta's party), or None: where a cited
    # block shows a value more than once, its proof is the occurrence on that row (extraction/proofs/words.py)
    row_anchor: Callable[[dict[str, Any], str], str | None] | None = None
    group_fields: Callable[[dict[str, Any]], list[FieldGroup]] = _default_groups
    # What a reviewer may correct: path patterns of proved fields ("rows[*].votes") and the type each new
    # value must have. Empty: every proved field, checked by the schema alone.
    editable: Mapping[str, Any] = field(default_factory=dict)
    rule_labels: Mapping[str, str] = field(default_factory=dict)  # this type's own rule codes in words
    definition: Any = None  # the definition (extraction.doctypes.defined.spec.TypeSpec) a defined type is built from
    version: int | None = None  # the saved version of a type defined in the app

    def edit_answer(self, answer: dict[str, Any], path: str, raw: str | None) -> dict[str, Any]:
        """The answer with the field at `path` set to a reviewer's text, checked against what the type
        declares editable and the field's type, then parsed by the schema. EditRefused says why not."""
        if not is_proved_path(answer, path):
            raise EditRefused(f"{path!r} cannot be corrected: it is not one of this document's values.")
        kind = Any
        if self.editable:
            kind = next((k for pattern, k in self.editable.items() if _pattern(pattern).fullmatch(path)), None)
            if kind is None:
                raise EditRefused(f"{path!r} cannot be corrected: it is part of the printed form, not a value read "
                                  "from it.")
        text = (raw or "").strip()
        if len(text) > MAX_EDIT_CHARS:
            raise EditRefused(f"A value has at most {MAX_EDIT_CHARS} characters; this one has {len(text)}.")
        if text:
            try:
                _adapter(kind).validate_python(text)
            except pydantic.ValidationError as err:
                reason = err.errors(include_url=False)[0]["msg"]
                raise EditRefused(f"{_shown(text)} is not a valid value for this field ({reason}).") from None
        try:
            return self.parse_answer(set_field(answer, path, text or None))
        except AnswerParseError as err:
            detail = str(err).split(": ", 1)[-1]
            raise EditRefused(f"{_shown(text)} is not a valid value for this field ({detail}).") from None

    def truth_differences(self, answer: Any, truth: Any) -> TruthComparison | None:
        """How an answer differs from the document's known truth; None when the type or document has none."""
        return self.compare_truth(answer, truth) if self.compare_truth is not None and truth else None

    def field_groups(self, answer: dict[str, Any]) -> list[FieldGroup]:
        return self.group_fields(answer)

    def field_labels(self, answer: dict[str, Any]) -> FieldLabels:
        """Every field's label for people, from the desk's groups: 'PSUV — NICOLAS MADURO: votes in words'."""
        return field_labels(self.field_groups(answer if isinstance(answer, dict) else {}))

    def field_label(self, answer: dict[str, Any], path: str) -> str:
        """One field's label; a path the groups do not show reads as words ('rows[3].party' -> 'PPT — ...: party')."""
        return self.field_labels(answer).of(path)

    def parse_answer(self, data: Any) -> dict[str, Any]:
        """Validate a model's answer (JSON text, dict or model) and return it as a JSON-safe dict.

        Raises AnswerParseError with a specific message when it is not JSON or not the schema, so the loop
        can feed it back.
        """
        raw = data
        if isinstance(data, str | bytes):
            try:
                data = json.loads(data)
            except json.JSONDecodeError as err:
                raise AnswerParseError(
                    f"the answer is not valid JSON: {err.msg} at line {err.lineno} column {err.colno}", raw
                ) from None
        if isinstance(data, BaseModel):
            data = data.model_dump(mode="json")
        try:
            model = self.schema.model_validate(data)
        except pydantic.ValidationError as err:
            problems = "; ".join(
                f"{loc_to_path(e['loc']) or '(root)'}: {e['msg']}" for e in err.errors(include_url=False)[:8]
            )
            raise AnswerParseError(f"the answer does not match the schema: {problems}", raw) from None
        return model.model_dump(mode="json")
