"""What the system already knows about each field, as numbers a confidence model can weigh (pure).

Every signal comes from what the loop, the rules and the proofs already produced: the broken rules that
name the field (and whether the model kept them after a re-read), the rounds in which its value changed,
how its proof resolved and how much of the cited text the value is, the OCR confidence of the cited words,
whether its digits/words twin agrees, a second engine's reading where one ran, and how often people
corrected this field of this type. Each signal is 0 when nothing speaks against the field, so a model's
bias alone says how much a clean field is trusted.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from extraction.proofs.blocks import ResolvedProof
from extraction.proofs.grounding import supports
from extraction.proofs.resolve import resolve_path
from extraction.reading.loop import suspicion
from extraction.rules.answers import get_value, iter_fields
from extraction.rules.violations import RuleContext, Violation
from extraction.values.numbers import as_int, parse_digit_words

__all__ = ["FEATURES", "FieldSignals", "field_kind", "field_signals"]

# The order of a signal vector; confidence models store their weights in this order, by name.
FEATURES: tuple[str, ...] = (
    "broken",            # rules broken that name the field (capped at 3)
    "narrow_broken",     # one of them names at most two fields: it points at this field (or its twin)
    "settled",           # a broken rule the model kept after being told: people must decide
    "rounds_changed",    # rounds after the first in which the value changed (capped at 2)
    "proof_none",        # the proof resolved to nothing on the page
    "proof_fuzzy",       # the proof was found only loosely
    "not_grounded",      # the cited words do not show the value
    "coverage_gap",      # 1 - the share of the cited text that the value is
    "ocr_doubt",         # 1 - the lowest OCR confidence of the cited words
    "twin_disagrees",    # the digits and the words of the same count disagree
    "engine_disagrees",  # a second OCR engine reads the cited place otherwise
    "corrected_rate",    # how often people corrected this field of this type
    "doc_suspicion",     # log(1 + the least number of wrong fields that explains the answer's broken rules)
)

_INDEX = re.compile(r"\[\d+\]")
_ALNUM = re.compile(r"[^0-9A-Za-z]+")


def field_kind(path: str) -> str:
    """The field without its row number: `rows[3].votes` -> `rows[].votes` (corrections are counted by kind)."""
    return _INDEX.sub("[]", path)


@dataclass(frozen=True)
class FieldSignals:
    path: str
    values: dict[str, float]
    proof_method: str  # id, exact, fuzzy or none
    ocr_confidence: float | None

    def vector(self) -> list[float]:
        return [self.values[name] for name in FEATURES]

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "signals": self.values, "proof_method": self.proof_method,
                "ocr_confidence": self.ocr_confidence}


def _twin(path: str, paths: set[str]) -> tuple[str, str] | None:
    """(digits path, words path) when the field is one of a count's two writings."""
    if path.endswith("_words") and path[: -len("_words")] in paths:
        return path[: -len("_words")], path
    if f"{path}_words" in paths:
        return path, f"{path}_words"
    return None


def _twin_disagrees(answer: dict[str, Any], pair: tuple[str, str]) -> bool:
    digits, words = as_int(get_value(answer, pair[0])), get_value(answer, pair[1])
    if digits is None or not isinstance(words, str) or not words.strip():
        return False
    return parse_digit_words(words) != digits


def _coverage(value: Any, found: list[ResolvedProof]) -> float:
    cited = _ALNUM.sub("", " ".join(f.text for f in found))
    shown = _ALNUM.sub("", str(value if value is not None else ""))
    if not cited:
        return 0.0
    return min(1.0, len(shown) / len(cited))


def _method(found: list[ResolvedProof]) -> str:
    methods = {f.method for f in found}
    for method in ("id", "exact", "fuzzy"):
        if method in methods:
            return method
    return "none"


def _rounds_changed(path: str, round_answers: Sequence[dict[str, Any] | None]) -> int:
    seen = [get_value(a, path) for a in round_answers if isinstance(a, dict)]
    return sum(1 for before, after in zip(seen, seen[1:], strict=False) if before != after)


def field_signals(
    *,
    answer: dict[str, Any],
    violations: Sequence[Violation],
    ctx: RuleContext,
    settled: frozenset = frozenset(),
    round_answers: Sequence[dict[str, Any] | None] = (),
    ocr_confidence: Mapping[str, float | None] | None = None,
    second_engine: Mapping[str, bool] | None = None,
    corrected_rates: Mapping[str, float] | None = None,
) -> dict[str, FieldSignals]:
    """The signals of every proved field of `answer`, by path.

    `round_answers` are the loop's answers in round order up to the kept one; `ocr_confidence` maps block
    ids to the engine's confidence (the blocks' own confidence is used when absent); `second_engine` maps
    paths to whether another engine agrees (missing: none ran); `corrected_rates` maps `field_kind`s to the
    share of reviewed fields people corrected.
    """
    fields = list(iter_fields(answer))
    paths = {p for p, _ in fields}
    block_conf = dict(ocr_confidence or {b.id: b.confidence for b in ctx.blocks})
    doc_doubt = float(suspicion(list(violations)))
    out = {}
    for path, node in fields:
        mine = [v for v in violations if path in v.fields]
        found = resolve_path(answer, path, node, ctx) if ctx.prompt is not None else []
        method = _method(found) if ctx.prompt is not None else "none"
        value = node.get("value")
        grounded = bool(found) and (any(f.shows_value for f in found) or supports(
            value, " ".join(f.text for f in found), word_numbers=ctx.word_numbers))
        confs = [c for c in (block_conf.get(f.block_id) for f in found) if c is not None]
        pair = _twin(path, paths)
        values = {
            "broken": float(min(3, len(mine))),
            "narrow_broken": float(any(len(v.fields) <= 2 for v in mine)),
            "settled": float(any(v.key in settled for v in mine)),
            "rounds_changed": float(min(2, _rounds_changed(path, round_answers))),
            "proof_none": float(ctx.prompt is not None and method == "none" and value not in (None, "")),
            "proof_fuzzy": float(method == "fuzzy"),
            "not_grounded": float(bool(found) and not grounded),
            "coverage_gap": 1.0 - _coverage(value, found) if found else 0.0,
            "ocr_doubt": 1.0 - min(confs) if confs else 0.0,
            "twin_disagrees": float(pair is not None and _twin_disagrees(answer, pair)),
            "engine_disagrees": float(second_engine is not None and second_engine.get(path) is False),
            "corrected_rate": float((corrected_rates or {}).get(field_kind(path), 0.0)),
            "doc_suspicion": _log1p(doc_doubt),
        }
        out[path] = FieldSignals(path=path, values=values, proof_method=method,
                                 ocr_confidence=min(confs) if confs else None)
    return out


def _log1p(x: float) -> float:
    import math

    return math.log1p(x)
