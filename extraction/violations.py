"""What a rule is and what it reports (pure): a rule is a function `(answer, ctx) -> list[Violation]` over the
JSON-shaped answer (see extraction/answers.py for its paths)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Any

from extraction.ocr.blocks import OcrBlock
from extraction.prompt_doc import PromptDocument

JsonScalar = str | int | float | None

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

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(self.fields))
        object.__setattr__(self, "expected", _json_safe(self.expected))
        object.__setattr__(self, "found", _json_safe(self.found))

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
    """What rules may look at besides the answer: the prompt the model read and the OCR blocks.

    `prompt` is None when the model saw no OCR text (vision input): proofs cannot be checked then.
    `cache` lets expensive derived data (the block index, resolved proofs) be built once per context. It holds
    only what the blocks and the prompt decide, never anything of one answer: the loop checks every round's
    answer with one context, and the desk keeps it across edits (services/rule_context.py).
    """

    prompt: PromptDocument | None = None
    blocks: list[OcrBlock] = field(default_factory=list)
    word_numbers: bool = False  # the document type spells numbers in digit words (DocumentType.word_numbers)
    cache: dict[str, Any] = field(default_factory=dict, repr=False)
    # While `run_rules` checks one answer: each proved field's resolved proofs, by the node's id, kept with the
    # node itself (so no other node can take that id meanwhile). Several rules resolve every field; None
    # outside a check, so nothing of one answer outlives it.
    answer_memo: dict[int, tuple[Any, list]] | None = field(default=None, repr=False)


Rule = Callable[[dict[str, Any], RuleContext], list[Violation]]
# judge(question, answer_json) -> (passed, reason)
Judge = Callable[[str, str], tuple[bool, str]]


@dataclass(frozen=True)
class RubricCheck:
    """A question for a judge model, asked only once every code rule passes."""

    code: str
    question: str
    fields: tuple[str, ...] = ()

