"""A defined type's patterns (pure): compiled on the `regex` engine and matched with a time limit, so a
pattern an admin wrote can never hang a worker on a value (catastrophic backtracking)."""

from __future__ import annotations

import functools

import regex

__all__ = ["MAX_PATTERN", "PatternError", "pattern_compile", "pattern_matches"]

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
