"""Validation assembled (pure): the schema, a type's rules and the universal proof rules, then its rubric."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from extraction.proofs.resolve import universal_rules
from extraction.rules.answers import loc_to_path
from extraction.rules.violations import Judge, RubricCheck, Rule, RuleContext, Violation

if TYPE_CHECKING:
    from extraction.doctypes.base import DocumentType

def run_rules(answer: dict[str, Any], ctx: RuleContext, rules: Iterable[Rule]) -> list[Violation]:
    out: list[Violation] = []
    ctx.answer_memo = {}
    try:
        for rule in rules:
            out.extend(rule(answer, ctx))
    finally:
        ctx.answer_memo = None
    return out


def evaluate_rubric(answer: dict[str, Any], checks: Iterable[RubricCheck], judge: Judge) -> list[Violation]:
    """Ask the judge each rubric question; a failed check becomes a `rubric:<code>` violation."""
    answer_json = json.dumps(answer, ensure_ascii=False, default=str)
    out = []
    for check in checks:
        passed, reason = judge(check.question, answer_json)
        if not passed:
            out.append(
                Violation(
                    code=f"rubric:{check.code}",
                    message=f"A reviewer check failed: {check.question} — {reason or 'no reason given'}",
                    fields=check.fields,
                    expected="yes",
                    found=reason or "no",
                )
            )
    return out


def schema_violations(doctype: DocumentType, answer: Any) -> list[Violation]:
    """Check the answer against the type's schema; each error becomes a `schema` violation on its path."""
    import pydantic

    try:
        doctype.schema.model_validate(answer)
    except pydantic.ValidationError as err:
        out = []
        for item in err.errors(include_url=False):
            loc = list(item["loc"])
            if loc[-1:] == ["value"]:
                loc = loc[:-1]  # the field is the proved leaf the desk edits, not its inner "value"
            path = loc_to_path(loc)
            got = item.get("input") if item["type"] != "missing" else None
            out.append(
                Violation(
                    code="schema",
                    message=f"{path or 'the answer'}: {item['msg']}",
                    fields=(path,) if path else (),
                    expected=None,
                    found=_short(got) if item["type"] != "missing" else "missing",
                )
            )
        return out
    return []


def make_validator(
    doctype: DocumentType, ctx: RuleContext, judge: Judge | None = None, *, parsed: bool = False
) -> Callable[[Any], list[Violation]]:
    """The `validate` callable for the loop: schema, then the type's rules and the universal proof rules,
    then (only when all of those pass) the type's rubric through the judge. `parsed`: every answer given is
    the schema's own output (`DocumentType.parse_answer`), so checking it against the schema again is skipped."""
    rules = [*doctype.rules, *universal_rules(word_numbers=doctype.word_numbers)]

    def validate(answer: Any) -> list[Violation]:
        if hasattr(answer, "model_dump"):
            answer = answer.model_dump(mode="json")
        broken = [] if parsed else schema_violations(doctype, answer)
        if broken:
            return broken
        broken = run_rules(answer, ctx, rules)
        if not broken and judge is not None and doctype.rubric:
            broken = evaluate_rubric(answer, doctype.rubric, judge)
        return broken

    return validate


def _short(value: Any, limit: int = 80) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
