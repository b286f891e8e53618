"""Scripted models that read tally sheets through the prompt, right or wrong in the ways a real model was.

Each model answers one document through `ScriptedLLMServer` (tests/support/llm_server.py): the server calls
`model.step(body)` for every chat request; the model reads the `<document>` section like a careful reader
(tests/acta_answers.correct_answer) and then errs as the seed study saw a real model err on 200 real sheets
(docs/DESIGN.md, acta), round by round:

- right: what is printed, with proofs, every round.
- misread_digit: round 1 reads one printed digit of a row as another (5 as 6 most often), the words as
  printed; later rounds correct it once the feedback names the field, else repeat it.
- forced_sum: round 1 drops a digit of a row (digits and words agree with the dropped value, so the sum
  comes up short); round 2, told the sum is off, adds the missing votes to another row the text shows
  clearly and keeps the dropped row; later rounds repeat that.
- all_zero: round 1 a one-digit misread (as misread_digit); later rounds answer every count 0 with
  "CERO ..." words, proofs kept.
- moved_vote: votes of one party answered under another party of the same candidate (BR instead of DDP;
  no total changes), in every round.
- misread_total: round 1 reads one digit of a total as another, the words as printed; later rounds
  correct it once the feedback names the field.

The injection site (which row, which digit, which pair) is drawn from the seed among every place the
error can occur, not among the places a rule is sure to see it. `injected` tells whether there was any
such place (a sheet whose counts have no two-digit number offers no dropped digit).

No Django: the benchmarks use it too.
"""

from __future__ import annotations

import random
import re
import traceback
from collections.abc import Callable
from typing import Any

from tests.support import acta_answers as aa
from tests.support.llm_server import Reply, openai_error_body, reply_json, reply_status

MODELS = ("right", "misread_digit", "forced_sum", "all_zero", "moved_vote", "misread_total")
ERRING = MODELS[1:]
# Digit confusions of printed sheets (the study's commonest first: a 5 read as 6).
CONFUSIONS = {"5": "6", "6": "5", "1": "7", "7": "1", "3": "8", "8": "3", "0": "8", "9": "4", "2": "7", "4": "9"}
USAGE = (1500, 900)


def scripted_reply(body: dict[str, Any], answers: list[dict[str, Any]], answer: Callable[[], dict[str, Any]], *,
                   usage: tuple[int, int]) -> Reply:
    """A scripted model's reply to one request: `answer()` is this round's whole answer, kept in `answers`; from
    round 2 a careful model sends only the changes it was asked for, as the request says. A bug in the script
    shows on the document (a 400 with its traceback) instead of a dropped connection."""
    try:
        whole = answer()
        fields = aa.patch_fields(body) if answers else None
        reply = aa.as_patch(whole, answers[-1], fields) if fields is not None else whole
    except Exception:
        return reply_status(400, openai_error_body(f"scripted model failed: {traceback.format_exc()}"))
    answers.append(whole)
    return reply_json(reply, usage=usage)


def _told(feedback: str, path: str) -> bool:
    """Whether the feedback names this field (not as the prefix of another: rows[1] is not rows[12])."""
    return re.search(re.escape(path) + r"(?![\w\[])", feedback) is not None


def _count_paths(answer: dict[str, Any]) -> list[str]:
    return [f"rows[{i}].votes" for i in range(len(answer["rows"]))] + list(aa.TOTAL_KEYS)


def _with_digit(answer: dict[str, Any], path: str, position: int, digit: str) -> dict[str, Any]:
    text = aa.digit_texts(answer, path)
    return aa.set_count(answer, path, int(text[:position] + digit + text[position + 1:]), words=False)


class ActaModel:
    """One document's scripted model. `step` is what the server calls; `answers` keeps every round's answer."""

    def __init__(self, kind: str, printed: dict[str, Any], *, seed: int) -> None:
        if kind not in MODELS:
            raise ValueError(f"unknown model {kind!r}; known: {list(MODELS)}")
        self.kind, self.printed = kind, printed
        self.rng = random.Random(f"{kind}-{seed}")
        self.round = 0
        self.injected: bool | None = None  # None until round 1 was answered
        self.site = ""
        self.answers: list[dict[str, Any]] = []
        self._correct: dict[str, Any] | None = None
        self._wrong: dict[str, Any] | None = None  # the round-1 reading error, kept across rounds

    # ---------------------------------------------------------------- the server's step

    def step(self, body: dict[str, Any]) -> Reply:
        def answer() -> dict[str, Any]:
            self.round += 1
            if self._correct is None:
                self._correct = aa.correct_answer(aa.data_section(body), self.printed, strict=False)
            return self.answer(self._correct, aa.feedback_of(body))

        return scripted_reply(body, self.answers, answer, usage=USAGE)

    def answer(self, correct: dict[str, Any], feedback: str) -> dict[str, Any]:
        if self.kind == "right":
            self.injected = False
            return correct
        if self.round == 1:
            self._wrong = getattr(self, f"_first_{self.kind}")(correct)
            self.injected = self._wrong is not None
            return self._wrong or correct
        if self._wrong is None:
            return correct
        return getattr(self, f"_later_{self.kind}")(correct, feedback)

    # ---------------------------------------------------------------- misread digit / total

    def _misread_sites(self, answer: dict[str, Any], paths: list[str]) -> list[tuple[str, int, str]]:
        sites = []
        for path in paths:
            text = aa.digit_texts(answer, path)
            sites += [(path, i, CONFUSIONS[d]) for i, d in enumerate(text) if d in CONFUSIONS]
        return sites

    def _misread(self, answer: dict[str, Any], paths: list[str]) -> dict[str, Any] | None:
        sites = self._misread_sites(answer, paths)
        fives = [s for s in sites if aa.digit_texts(answer, s[0])[s[1]] == "5"]
        if fives and self.rng.random() < 0.5:
            sites = fives  # the study's commonest slip
        if not sites:
            return None
        path, position, digit = self.rng.choice(sites)
        self.site = f"{path} digit {position + 1} as {digit}"
        self._path = path
        return _with_digit(answer, path, position, digit)

    def _first_misread_digit(self, correct: dict[str, Any]) -> dict[str, Any] | None:
        return self._misread(correct, [f"rows[{i}].votes" for i in range(len(correct["rows"]))])

    def _later_misread_digit(self, correct: dict[str, Any], feedback: str) -> dict[str, Any]:
        if _told(feedback, self._path):
            self._wrong = correct  # corrected, and it stays corrected
        return self._wrong

    def _first_misread_total(self, correct: dict[str, Any]) -> dict[str, Any] | None:
        return self._misread(correct, list(aa.TOTAL_KEYS))

    _later_misread_total = _later_misread_digit

    # ---------------------------------------------------------------- forced sum

    def _first_forced_sum(self, correct: dict[str, Any]) -> dict[str, Any] | None:
        sites = [(i, k) for i, row in enumerate(correct["rows"]) for k in range(len(str(row["votes"]["value"])))
                 if row["votes"]["value"] >= 10]
        if not sites:
            return None
        row, k = self.rng.choice(sites)
        text = str(correct["rows"][row]["votes"]["value"])
        dropped = int(text[:k] + text[k + 1:])
        self._row, self._missing = row, correct["rows"][row]["votes"]["value"] - dropped
        self.site = f"rows[{row}] {text} read as {dropped}"
        return aa.set_count(correct, f"rows[{row}].votes", dropped)

    def _later_forced_sum(self, correct: dict[str, Any], feedback: str) -> dict[str, Any]:
        if self.round == 2 and "sum_valid_votes" in feedback:
            # Another row, one whose value the text shows (it has a proof), takes the missing votes.
            clear = [i for i, r in enumerate(self._wrong["rows"]) if i != self._row and r["votes"]["proof"]]
            other = self.rng.choice(clear)
            value = self._wrong["rows"][other]["votes"]["value"] + self._missing
            self._wrong = aa.set_count(self._wrong, f"rows[{other}].votes", value)
            self.site += f", then {self._missing} added to rows[{other}]"
        return self._wrong

    # ---------------------------------------------------------------- all zero after a failed round

    _first_all_zero = _first_misread_digit

    def _later_all_zero(self, correct: dict[str, Any], feedback: str) -> dict[str, Any]:
        return aa.all_zero(correct)

    # ---------------------------------------------------------------- a vote moved within one candidate

    def _first_moved_vote(self, correct: dict[str, Any]) -> dict[str, Any] | None:
        pairs = [(a, b) for a, b in aa.same_candidate_pairs(correct) + [
            (b, a) for a, b in aa.same_candidate_pairs(correct)] if correct["rows"][a]["votes"]["value"] >= 1]
        if not pairs:
            return None
        a, b = self.rng.choice(sorted(pairs))
        donor = correct["rows"][a]["votes"]["value"]
        moved = self.rng.choice([1, donor])  # one vote, or the whole row read under the other party
        new = aa.set_count(correct, f"rows[{a}].votes", donor - moved)
        self.site = f"{moved} of rows[{a}] under rows[{b}]"
        return aa.set_count(new, f"rows[{b}].votes", correct["rows"][b]["votes"]["value"] + moved)

    def _later_moved_vote(self, correct: dict[str, Any], feedback: str) -> dict[str, Any]:
        return self._wrong


def model_step(models: Callable[[], ActaModel | None]) -> Callable[[dict[str, Any]], Reply]:
    """A server step that hands each request to the current document's model."""

    def step(body: dict[str, Any]) -> Reply:
        model = models()
        if model is None:
            return reply_status(500, openai_error_body("no scripted model for this request"))
        return model.step(body)

    return step


def counts_of(answer: dict[str, Any] | None) -> dict[str, Any]:
    """The values a reading gives: every count and its words, and the code (for comparing with the sheet)."""
    if not answer:
        return {}
    out = {"acta_id": (answer.get("acta_id") or {}).get("value")}
    for i, row in enumerate(answer.get("rows") or []):
        out[f"rows[{i}].votes"] = (row.get("votes") or {}).get("value")
        out[f"rows[{i}].votes_words"] = (row.get("votes_words") or {}).get("value")
    for key in aa.TOTAL_KEYS:
        out[key] = (answer.get(key) or {}).get("value")
        out[f"{key}_words"] = (answer.get(f"{key}_words") or {}).get("value")
    return out


def printed_counts(printed: dict[str, Any]) -> dict[str, Any]:
    out = {"acta_id": printed["acta_id"]}
    for i, row in enumerate(printed["rows"]):
        out[f"rows[{i}].votes"], out[f"rows[{i}].votes_words"] = row["votes"], row["votes_words"]
    for key in aa.TOTAL_KEYS:
        out[key], out[f"{key}_words"] = printed[key], printed[f"{key}_words"]
    return out


def wrong_fields(answer: dict[str, Any] | None, printed: dict[str, Any]) -> list[str]:
    """Fields of the answer that differ from what the sheet prints (words compared word by word)."""
    got, want = counts_of(answer), printed_counts(printed)

    def same(a: Any, b: Any) -> bool:
        if isinstance(b, str) and isinstance(a, str):
            return " ".join(a.upper().split()) == " ".join(b.upper().split())
        try:
            return int(a) == int(b)
        except (TypeError, ValueError):
            return a == b

    return [k for k, v in want.items() if not same(got.get(k), v)]


def is_all_zero(answer: dict[str, Any] | None) -> bool:
    counts = counts_of(answer)
    values = [v for k, v in counts.items() if k.endswith("votes")]
    return bool(values) and all(v == 0 for v in values)


__all__ = ["ERRING", "MODELS", "ActaModel", "is_all_zero", "model_step", "wrong_fields"]
