"""What a rule is and what it reports (pure): a rule is a function `(answer, ctx) -> list[Violation]` over the
JSON-shaped answer (see extraction/rules/answers.py for its paths)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from decimal import Decimal
from fractions import Fraction
from typing import Any

from extraction.ocr.blocks import OcrBlock
from extraction.ocr.tagged_text import PromptDocument

JsonScalar = str | int | float | None
# The code of a check that could not finish (a type's pattern that ran out of time on a value).
CHECK_UNFINISHED = "check_unfinished"


@dataclass(frozen=True)
class Violation:
    """One broken rule. `expected`/`found` are JSON-safe so they can be stored and fed back as they are."""

    code: str
    message: str
    fields: tuple[str, ...] = ()
    expected: JsonScalar = None
    found: JsonScalar = None
    # The whole answer is unusable (all counts zero while the page prints votes): such a round is never kept
    # over one that is not, whatever else either breaks.
    degenerate: bool = False
    # The field the rule speaks of, among `fields` (a sum's total: the sum is over many fields, but what it is
    # checked against is one); the desk labels the rule with it and selects it first. None: the first named.
    subject: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(self.fields))
        object.__setattr__(self, "expected", _json_safe(self.expected))
        object.__setattr__(self, "found", _json_safe(self.found))

    @property
    def unchecked(self) -> bool:
        """A check that could not be made (it ran out of time): not a pass, and not the model's to mend."""
        return self.code == CHECK_UNFINISHED

    @property
    def key(self) -> tuple[str, tuple[str, ...], JsonScalar]:
        """What makes two violations 'the same' for stagnation: code, fields and what was found."""
        return (self.code, self.fields, self.found)

    def to_dict(self) -> dict[str, Any]:
        out = {
            "code": self.code,
            "message": self.message,
            "fields": list(self.fields),
            "expected": self.expected,
            "found": self.found,
        }
        if self.degenerate:
            out["degenerate"] = True
        if self.subject:
            out["subject"] = self.subject
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Violation:
        return cls(
            code=data["code"],
            message=data.get("message", ""),
            fields=tuple(data.get("fields") or ()),
            expected=data.get("expected"),
            found=data.get("found"),
            degenerate=bool(data.get("degenerate")),
            subject=data.get("subject") or None,
        )


def _json_safe(value: Any) -> JsonScalar:
    if value is None or isinstance(value, str | bool):
        return value
    if isinstance(value, int | float):
        return value
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, Fraction):
        return str(value)
    return str(value)


@dataclass
class RuleContext:
    """What rules may look at besides the answer: the prompt the model read and the OCR blocks. Built by
    `extraction.reading.context.reading_context`, the one place that knows how a document was read.

    `prompt` is None when the model saw no OCR text (vision input): proofs cannot be checked then; `page_prompt`
    keeps the prompt's ids all the same, to locate a field's place on the page (`locating`).
    `row_anchor(answer, path)` is the label printed on the row of the field at `path` (the acta's party), or
    None: where a cited block shows a value more than once, the proof is the occurrence on that row.
    `cache` lets expensive derived data (the block index, resolved proofs) be built once per context. It holds
    only what the blocks and the prompt decide, never anything of one answer: the loop checks every round's
    answer with one context, and the desk keeps it across edits (reviewer/desk/rule_context.py).
    """

    prompt: PromptDocument | None = None
    blocks: list[OcrBlock] = field(default_factory=list)
    word_numbers: bool = False  # the document type spells numbers in digit words (DocumentType.word_numbers)
    row_anchor: Callable[[dict[str, Any], str], str | None] | None = field(default=None, repr=False)
    page_prompt: PromptDocument | None = field(default=None, repr=False)
    cache: dict[str, Any] = field(default_factory=dict, repr=False)
    # While `run_rules` checks one answer: each proved field's resolved proofs, by the node's id, kept with the
    # node itself (so no other node can take that id meanwhile). Several rules resolve every field; None
    # outside a check, so nothing of one answer outlives it.
    answer_memo: dict[int, tuple[Any, list]] | None = field(default=None, repr=False)

    def anchor(self, answer: dict[str, Any], path: str) -> str | None:
        """The label printed on the row of the field at `path`, when the document type names one."""
        return self.row_anchor(answer, path) if self.row_anchor is not None else None

    def locating(self) -> RuleContext:
        """This context with the prompt's ids even where the model did not read them (vision input): to find
        a field's place on the page (crops for a retry, the desk's boxes), never to judge its proofs. It
        shares the blocks and the cache."""
        if self.prompt is not None or self.page_prompt is None:
            return self
        return replace(self, prompt=self.page_prompt, answer_memo=None)


Rule = Callable[[dict[str, Any], RuleContext], list[Violation]]
# judge(question, answer_json) -> (passed, reason)
Judge = Callable[[str, str], tuple[bool, str]]


@dataclass(frozen=True)
class RubricCheck:
    """A question for a judge model, asked only once every code rule passes."""

    code: str
    question: str
    fields: tuple[str, ...] = ()

