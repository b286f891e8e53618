"""The rule every type has: a field it requires is not empty."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from extraction.rules.answers import get_value
from extraction.rules.violations import Rule, RuleContext, Violation


def required_fields_rule(paths: Callable[[dict[str, Any]], Iterable[tuple[str, str]]]) -> Rule:
    """A rule flagging each (path, label) given by `paths(answer)` whose value is null or empty."""

    def required(answer: dict[str, Any], ctx: RuleContext) -> list[Violation]:
        out = []
        for path, label in paths(answer):
            value = get_value(answer, path)
            if value is None or (isinstance(value, str) and not value.strip()):
                out.append(
                    Violation(
                        code="missing_value",
                        message=f"{label} is missing: read it from the document",
                        fields=(path,),
                        expected="a value",
                        found=None,
                    )
                )
        return out

    required.__name__ = "missing_value"
    return required
