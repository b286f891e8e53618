"""The validation loop (pure): extract, validate, feed the broken rules back, keep the best round.

It knows nothing of documents, Django or LLMs: `extract` and `validate` are callables. Each round sees
only the previous answer and the broken rules still worth asking about (not a growing history), which keeps
prompts short and stops the model from arguing with its own past. From round 2 `extract` may return a
`Patch` of the previous answer (only the fields it changes): the loop merges it and validates the whole.

A broken rule that comes back unchanged after it was fed back, on fields whose values the model did not
change, has survived a re-read: the model looked again and kept its answer (the cited text still shows another
value, the page does not print the field, the sheet itself does not add up). It is not asked again; when
nothing else is left, the loop stops and people decide. A rule that breaks the same way after the model changed
a value it names was not kept: the model answered otherwise (a right name citing a line the OCR scrambled
breaks `value_grounded` just as the wrong name did), so it is asked again while rounds last.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from rapidfuzz import fuzz, process

from extraction.reading.patches import Patch, apply_patch, patch_violations
from extraction.rules.answers import AnswerParseError, get_field, get_value, is_proved
from extraction.rules.violations import Violation
from extraction.values.numbers import fold

__all__ = [
    "AnswerParseError",
    "Attempt",
    "LoopObserver",
    "LoopResult",
    "RoundOutcome",
    "StopReason",
    "run_validation_loop",
    "support",
    "suspicion",
]

StopReason = Literal["passed", "stagnated", "exhausted", "error"]



@dataclass(frozen=True)
class Attempt:
    """What `extract` gets for one round: its number (1-based) and only the previous round's outcome."""

    round: int
    previous_answer: Any = None
    previous_violations: tuple[Violation, ...] = ()  # only those worth asking about again
    previous_raw: Any = None  # the unparsed reply, when the previous answer could not be parsed

    @property
    def is_retry(self) -> bool:
        return self.round > 1

    @property
    def involved(self) -> tuple[str, ...]:
        """The fields the fed-back rules name, in the order they are first named."""
        return tuple(dict.fromkeys(f for v in self.previous_violations for f in v.fields))


@dataclass
class RoundOutcome:
    number: int
    answer: Any = None
    violations: list[Violation] = field(default_factory=list)
    error: BaseException | None = None  # AnswerParseError, or the fault that stopped the loop
    raw: Any = None

    @property
    def passed(self) -> bool:
        return self.error is None and self.answer is not None and not self.violations

    @property
    def faulted(self) -> bool:
        """A fault outside the answer (LLM down, bug): the round has no verdict at all."""
        return self.error is not None and not isinstance(self.error, AnswerParseError)

    @property
    def support(self) -> float:
        """How well the page supports this round's values (`support`): 0 at best, lower the less it shows."""
        return support(self.answer, self.violations)


@dataclass
class LoopResult:
    reason: StopReason
    best: RoundOutcome | None  # None only when no round produced an answer or a parse error
    rounds: list[RoundOutcome]
    error: BaseException | None = None  # set when reason == "error"
    # keys of broken rules that came back unchanged after being fed back, on values the model did not change,
    # and that the best answer still gives: of the best round's violations, the model re-read these and kept
    # its answer
    settled: frozenset[tuple[Any, ...]] = frozenset()

    @property
    def passed(self) -> bool:
        return self.reason == "passed"

    @property
    def answer(self) -> Any:
        return self.best.answer if self.best else None

    @property
    def violations(self) -> list[Violation]:
        return list(self.best.violations) if self.best else []


class LoopObserver(Protocol):
    def round_started(self, number: int, attempt: Attempt) -> None: ...

    def round_finished(self, number: int, outcome: RoundOutcome) -> None: ...


def _parse_error_violation(err: AnswerParseError) -> Violation:
    return Violation(
        code="parse_error",
        message=f"The answer could not be read: {err.message}",
        fields=(),
        expected="one JSON object following the schema",
        found=err.message,
    )


def suspicion(violations: Sequence[Violation]) -> float:
    """How much of an answer looks wrong: about the fewest fields that must be wrong to explain every broken
    rule.

    Violations are read from the narrowest (one field) to the widest (a sum over 39 fields). A violation that
    names a field already under suspicion is explained by it and adds nothing; any other adds 1, spread over
    the fields it names, which are then under suspicion. So one misread digit (its proof, its digit/words
    twin and the sum all broken) weighs 1, while an all-zero answer that passes every sum weighs one per
    ungrounded row; a bare count of violations would say the opposite.
    """
    suspect: set[str] = set()
    score = 0.0
    for v in sorted(violations, key=lambda v: len(v.fields)):
        if not v.fields:
            score += 1.0  # about the answer as a whole (a parse error): nothing explains it
        elif suspect.isdisjoint(v.fields):
            score += 1.0
            suspect.update(v.fields)
    return score


_WORD = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+")


def _words(text: str) -> list[str]:
    return _WORD.findall(fold(text))


def _shown_share(value: Any, text: str) -> float:
    """How much of `value` the text shows, in [0, 1]: each word of the value scored by the closest word of the
    text (a misread letter costs a little, a word not printed all of it), weighed by its length. Word by word
    and in any order, since what the text fails to show is the question, not how an OCR engine ordered it."""
    want, have = _words(str(value)), _words(text)
    if not want:
        return 1.0
    if not have:
        return 0.0
    shown = sum(len(w) * process.extractOne(w, have, scorer=fuzz.ratio)[1] / 100 for w in want)
    return shown / sum(len(w) for w in want)


def support(answer: Any, violations: Sequence[Violation]) -> float:
    """How well the page supports an answer's values, from what its broken rules found: 0 when no rule found
    the page's text short of a value, else minus the share of each such value the text does not show, summed.

    A rule compares a value with text the page prints when its violation names one field, `expected` is that
    field's value in the answer and `found` is text (`value_grounded`: the value and the cited text; any rule of
    any type reporting the same way counts alike). Rules that compare other things (a sum with its total, a
    value with a pattern) say nothing here. Fields no rule faults are taken as shown, so between two rounds it
    is the values they do not share, or that are judged against other text, that decide.
    """
    shortfall = 0.0
    for v in violations:
        if len(v.fields) != 1 or not isinstance(v.found, str) or isinstance(v.expected, bool):
            continue
        value = get_value(answer, v.fields[0])
        if isinstance(value, str | int | float) and not isinstance(value, bool) and v.expected == value:
            shortfall += 1.0 - _shown_share(value, v.found)
    return -round(shortfall, 6)  # rounded: the same violations in another order must tie exactly


def _rank(r: RoundOutcome) -> tuple[bool, bool, float, int, float, int]:
    # A parsed answer beats an unparsable one; a degenerate answer never wins over one that is not; then the
    # answer that looks least wrong, then the one with fewer broken rules, then the one whose values the page
    # supports better (a right name that still breaks `value_grounded` against scrambled OCR text over a wrong
    # one); ties go to the earlier round.
    degenerate = any(v.degenerate for v in r.violations)
    return (r.answer is None, degenerate, suspicion(r.violations), len(r.violations), -r.support, r.number)


def _best(rounds: Sequence[RoundOutcome]) -> RoundOutcome | None:
    candidates = [r for r in rounds if not r.faulted]
    if not candidates:
        return None
    return min(candidates, key=_rank)


def _values(answer: Any, paths: Sequence[str]) -> tuple[str | None, ...]:
    """What `answer` gives at each path, comparable and hashable: a field's value (a container as a whole),
    None where the path is missing."""
    out: list[str | None] = []
    for path in paths:
        try:
            node = get_field(answer, path)
        except KeyError:
            out.append(None)
            continue
        out.append(json.dumps(node["value"] if is_proved(node) else node, sort_keys=True, default=str))
    return tuple(out)


def _result(reason: StopReason, rounds: list[RoundOutcome], kept: set[tuple[Any, ...]], *,
            best: RoundOutcome | None = None, error: BaseException | None = None) -> LoopResult:
    """The loop's result; `kept` holds (violation key, the values of its fields) for every rule that survived a
    re-read, and `settled` names those the best answer gives with the very values the model kept."""
    best = best if best is not None else _best(rounds)
    settled = frozenset(key for key, values in kept if best is not None and best.answer is not None
                        and _values(best.answer, key[1]) == values)
    return LoopResult(reason=reason, best=best, rounds=rounds, error=error, settled=settled)


def run_validation_loop(
    extract: Callable[[Attempt], Any],
    validate: Callable[[Any], list[Violation]],
    max_rounds: int,
    *,
    observer: LoopObserver | None = None,
) -> LoopResult:
    """Run up to `max_rounds` rounds of extract -> validate and return the best round and why it stopped.

    Stops with "passed" (no violations), "stagnated" (no broken rule left that the model could mend: each
    survived a re-read, the model told and its values unchanged, or is a check that could not finish),
    "exhausted" (rounds ran out) or "error" (extract or validate raised something other than
    AnswerParseError; the exception is carried, the best earlier round kept).
    """
    if max_rounds < 1:
        raise ValueError(f"max_rounds must be >= 1, got {max_rounds}")
    rounds: list[RoundOutcome] = []
    kept: set[tuple[Any, ...]] = set()  # (violation key, values of its fields): told, and kept
    attempt = Attempt(round=1)
    for number in range(1, max_rounds + 1):
        if observer is not None:
            observer.round_started(number, attempt)
        outcome = RoundOutcome(number=number)
        try:
            reply = extract(attempt)
            outcome.raw = reply
            if isinstance(reply, Patch):
                outcome.answer = apply_patch(attempt.previous_answer, reply)
                outcome.violations = [*validate(outcome.answer), *patch_violations(reply)]
            else:
                outcome.answer = reply
                outcome.violations = list(validate(outcome.answer))
        except AnswerParseError as err:
            outcome.answer, outcome.raw, outcome.error = None, err.raw, err
            outcome.violations = [_parse_error_violation(err)]
        except Exception as err:  # a fault outside the answer: stop, keep what we have
            outcome.error = err
            rounds.append(outcome)
            if observer is not None:
                observer.round_finished(number, outcome)
            return _result("error", rounds, kept, error=err)
        rounds.append(outcome)
        if observer is not None:
            observer.round_finished(number, outcome)

        if outcome.passed:
            return _result("passed", rounds, kept, best=outcome)
        asked = {v.key for v in attempt.previous_violations}
        if outcome.answer is not None:
            # the same rule broken the same way, on the values it was told about: the model kept its answer
            kept |= {(v.key, values) for v in outcome.violations if v.key in asked
                     and (values := _values(outcome.answer, v.fields)) == _values(attempt.previous_answer, v.fields)}
        # A check that could not finish is for a person: telling the model would not make it finish.
        open_ = tuple(v for v in outcome.violations if not v.unchecked
                      and (outcome.answer is None or (v.key, _values(outcome.answer, v.fields)) not in kept))
        if not open_:
            return _result("stagnated", rounds, kept)
        attempt = Attempt(
            round=number + 1,
            previous_answer=outcome.answer,
            previous_violations=open_,
            previous_raw=outcome.raw if outcome.answer is None else None,
        )
    return _result("exhausted", rounds, kept)
