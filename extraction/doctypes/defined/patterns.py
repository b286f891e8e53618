"""A defined type's patterns (pure): compiled on the `regex` engine and matched with a time limit, so a
pattern an admin wrote can never hang a worker on a value (catastrophic backtracking)."""

from __future__ import annotations

import functools

import regex

from extraction.rules.violations import CHECK_UNFINISHED, Violation

__all__ = ["MAX_PATTERN", "PatternError", "pattern_backtracks", "pattern_compile", "pattern_matches",
           "pattern_unchecked"]

MAX_PATTERN = 200  # characters: an identifier's format, not a parser
_MAX_VALUE = 1000  # characters of a value matched; a field's value longer than this does not match
_TIMEOUT = 0.05  # seconds per match: a sane pattern takes microseconds on a field's value


class PatternError(ValueError):
    """A pattern that cannot be used; the message says why."""


@functools.lru_cache(maxsize=256)
def pattern_compile(pattern: str) -> regex.Pattern:
    """The compiled pattern; PatternError when it is empty, too long or does not compile."""
    if not pattern:
        raise PatternError("the pattern is empty")
    if len(pattern) > MAX_PATTERN:
        raise PatternError(f"the pattern is longer than {MAX_PATTERN} characters")
    try:
        return regex.compile(pattern)
    except regex.error as err:
        raise PatternError(f"the pattern does not compile: {err}") from None


def pattern_matches(pattern: str, value: str) -> bool | None:
    """Whether the whole of `value` matches `pattern`; None when the match ran out of time (no evidence
    either way: a rule says nothing)."""
    if len(value) > _MAX_VALUE:
        return False
    try:
        return pattern_compile(pattern).fullmatch(value, timeout=_TIMEOUT) is not None
    except TimeoutError:
        return None


_PROBE_LENGTH = 40  # characters repeated: exponential backtracking needs far fewer to pass the time limit
_PROBE_TAILS = ("!", "\u2603", " ")  # a last character the pattern does not expect, forcing every way to be tried
_PROBE_ALPHABET = "a0A -.,/:"


def pattern_backtracks(pattern: str) -> str | None:
    """A value on which matching `pattern` runs out of time (catastrophic backtracking: '(a|aa)+$' on
    'aaaa...!'), or None when none of the probes does. Each probe repeats one of the pattern's own literal
    characters and runs, or a common character, then ends on one the pattern does not expect: the shape of
    value on which a nested or overlapping repeat tries every way of splitting the run."""
    compiled = pattern_compile(pattern)
    units = dict.fromkeys([*(c for c in pattern if c.isalnum() or c in " -.,/:#_"), *_PROBE_ALPHABET,
                           *regex.findall(r"(?<!\\)[A-Za-z0-9]{2,}", pattern)])
    for unit in units:
        for tail in _PROBE_TAILS:
            value = unit * (_PROBE_LENGTH // len(unit)) + tail
            try:
                compiled.fullmatch(value, timeout=_TIMEOUT)
                compiled.search(value, timeout=_TIMEOUT)
            except TimeoutError:
                return value
    return None


def pattern_unchecked(label: str, pattern: str, value: str, path: str) -> Violation:
    """A value whose match with `pattern` ran out of time: unchecked, for a person to look at. Not a pass (the
    value may well be wrong) and not a broken rule for the model to mend (the model cannot make it finish)."""
    return Violation(code=CHECK_UNFINISHED, fields=(path,), expected=pattern, found=value,
                     message=f"{label} {value!r} could not be checked against the form {pattern}: the check ran "
                     f"out of time ({int(_TIMEOUT * 1000)} ms; the pattern backtracks on this value), so the value "
                     "is unchecked. Look at it on the page; the type's pattern should be simplified.")
