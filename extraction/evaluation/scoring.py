"""Scoring a run of an evaluation set against the values people confirmed (pure).

Each document of the run is judged on every value people gave and every value the reading added: a value is
right when it equals the person's (numbers by amount, text by its characters with runs of spaces as one).
From that: each field's accuracy, each document's outcome (passed and right, passed but wrong, flagged but
right, flagged and wrong, failed), and each rule's precision and recall against people. A comparison of two
runs says in words where the candidate is worse than the live version."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

_INDEX = re.compile(r"\[\d+\]")
_SPACES = re.compile(r"\s+")

PASSED_RIGHT, FALSE_PASS, NEEDLESS_REVIEW, CAUGHT, FAILED = (
    "passed_right", "false_pass", "needless_review", "caught", "failed")
OUTCOMES = (PASSED_RIGHT, FALSE_PASS, NEEDLESS_REVIEW, CAUGHT, FAILED)
OUTCOME_WORDS = {PASSED_RIGHT: "Passed and right", FALSE_PASS: "Passed but wrong (false pass)",
                 NEEDLESS_REVIEW: "Flagged but right (needless review)", CAUGHT: "Flagged and wrong (caught)",
                 FAILED: "Failed (no answer)"}


def field_kind(path: str) -> str:
    """A field without its row numbers: 'items[3].price' -> 'items[].price' (a table's column is one field)."""
    return _INDEX.sub("[]", path)


def _number(value: Any) -> Decimal | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float | Decimal):
        return Decimal(str(value))
    if isinstance(value, str):
        try:
            return Decimal(value.strip().replace(",", "")) if value.strip() else None
        except InvalidOperation:
            return None
    return None


def same_value(found: Any, expected: Any) -> bool:
    """Whether a read value equals the person's: empty equals empty, a number its amount in any spelling a file
    gives it ('12.50', 12.5), anything else its text with runs of spaces as one."""
    if _empty(found) or _empty(expected):
        return _empty(found) and _empty(expected)
    a, b = _number(found), _number(expected)
    if a is not None and b is not None:
        return a == b
    return _SPACES.sub(" ", str(found)).strip() == _SPACES.sub(" ", str(expected)).strip()


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


@dataclass(frozen=True)
class DocumentRun:
    """One document of a run: its status (passed, flagged, failed, or still being read), the values read
    ({path: value}), the people's ({path: value}), the rules that fired ({code: [paths]}), cost and seconds."""

    item: int
    name: str
    status: str
    found: Mapping[str, Any]
    expected: Mapping[str, Any]
    fired: Mapping[str, list[str]] = field(default_factory=dict)
    cost: Decimal = Decimal(0)
    seconds: float | None = None

    def paths(self) -> list[str]:
        """Every path judged: those people gave a value for, then those only the reading has (a row they
        removed)."""
        return list(self.expected) + [p for p in self.found if p not in self.expected]

    def wrong_paths(self) -> list[str]:
        """Every path whose value differs from the person's: given by people but read otherwise or not at all,
        or read where people gave nothing."""
        return [p for p in self.paths() if not same_value(self.found.get(p), self.expected.get(p))]


def _outcome(status: str, wrong: bool) -> str | None:
    """A document's outcome from its status and whether a value of it is wrong; None while it is being read."""
    if status == "failed":
        return FAILED
    if status == "passed":
        return FALSE_PASS if wrong else PASSED_RIGHT
    if status == "flagged":
        return CAUGHT if wrong else NEEDLESS_REVIEW
    return None


@dataclass
class Score:
    documents: int = 0
    done: int = 0
    outcomes: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))
    fields: dict[str, tuple[int, int]] = field(default_factory=dict)  # kind -> (right, compared)
    rules: dict[str, dict[str, int]] = field(default_factory=dict)  # code -> fired, right_alarms, caught
    cost: Decimal = Decimal(0)
    seconds: float = 0.0
    wrong_documents: int = 0  # read, with a value people gave otherwise: every rule's recall is out of these
    per_document: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        read = self.done - self.outcomes[FAILED]
        wrong = self.wrong_documents
        return {
            "documents": self.documents, "done": self.done, "outcomes": dict(self.outcomes),
            "fields": {k: {"right": r, "compared": n, "accuracy": round(r / n, 4) if n else None}
                       for k, (r, n) in sorted(self.fields.items())},
            "rules": {code: {**counts, "wrong": wrong,
                             "precision": round(counts["right_alarms"] / counts["fired"], 4) if counts["fired"] else None,
                             "recall": round(counts["caught"] / wrong, 4) if wrong else None}
                      for code, counts in sorted(self.rules.items())},
            "cost_per_document": str((self.cost / read).quantize(Decimal("0.000001"))) if read else None,
            "seconds_per_document": round(self.seconds / read, 2) if read else None,
        }


def run_score(documents: Iterable[DocumentRun], *, rule_codes: Iterable[str] = ()) -> Score:
    """The run's figures, in one pass over the documents. A rule's precision: of the documents it fired on, the
    share where a value it names (any value, when it names none) was wrong. Its recall: of the documents read
    with a wrong value, the share it fired on. `rule_codes` lists rules that never fired, so that they show
    with no alarm."""
    score = Score()
    rules: dict[str, dict[str, int]] = {code: {"fired": 0, "right_alarms": 0, "caught": 0} for code in rule_codes}
    fields: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for doc in documents:
        score.documents += 1
        read = doc.status in ("passed", "flagged")
        wrong = set(doc.wrong_paths()) if read else set()
        outcome = _outcome(doc.status, bool(wrong))
        score.per_document.append({"item": doc.item, "name": doc.name, "status": doc.status, "outcome": outcome,
                                   "wrong": sorted(wrong), "rules": sorted(doc.fired) if outcome else []})
        if outcome is None:
            continue
        score.done += 1
        score.outcomes[outcome] += 1
        if not read:
            continue
        score.cost += doc.cost
        score.seconds += doc.seconds or 0.0
        for path in doc.paths():
            counts = fields[field_kind(path)]
            counts[0] += path not in wrong
            counts[1] += 1
        score.wrong_documents += bool(wrong)
        for code, named in doc.fired.items():
            counts = rules.setdefault(code, {"fired": 0, "right_alarms": 0, "caught": 0})
            counts["fired"] += 1
            counts["right_alarms"] += bool(wrong & set(named) if named else wrong)
            counts["caught"] += bool(wrong)
    score.fields = {k: (v[0], v[1]) for k, v in fields.items()}
    score.rules = rules
    return score


def comparison_warnings(candidate: Mapping[str, Any], live: Mapping[str, Any], *, candidate_name: str,
                        live_name: str) -> list[str]:
    """Where the candidate run (Score.as_dict) is worse than the live one, in sentences: a field it reads
    right less often, and more wrong documents let pass. Nothing when either run is not finished."""
    if candidate["done"] < candidate["documents"] or live["done"] < live["documents"]:
        return []
    out = []
    for kind, mine in candidate["fields"].items():
        theirs = live["fields"].get(kind)
        if theirs and mine["accuracy"] is not None and theirs["accuracy"] is not None \
                and mine["accuracy"] < theirs["accuracy"]:
            out.append(f"{candidate_name} reads {kind} right less often: {mine['right']} of {mine['compared']} "
                       f"against {theirs['right']} of {theirs['compared']} for {live_name}.")
    mine_fp, theirs_fp = candidate["outcomes"][FALSE_PASS], live["outcomes"][FALSE_PASS]
    if mine_fp > theirs_fp:
        out.append(f"{candidate_name} lets {mine_fp} document{'s' if mine_fp != 1 else ''} with a wrong value pass, "
                   f"where {live_name} lets {theirs_fp}.")
    return out
