"""Correct acta answers, with proofs, built from the tagged text the model reads — and ways to spoil them.

A scripted model in the tests reads the prompt it was sent just as a real one would: `correct_answer`
finds each party's row (a table row or a run of lines) in the `<document>` section and cites the cells or
words that print its values. Only the values come from outside: what the generator PRINTED on the sheet
(`GeneratedActa.printed`). The mutators then inject one reading error each, leaving every proof in place
unless the error is about the proof.

Pure: no Django, no pytest (bench/rules_catch.py uses it too).
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any

from extraction.acta.generate import spell_digits
from extraction.doctypes.acta_layout import CANDIDATES, PARTIES
from extraction.feedback import DATA_CLOSE, DATA_OPEN

TOTAL_LABELS = {"valid_votes": "VOTOS VALIDOS", "null_votes": "VOTOS NULOS", "total_votes": "TOTAL VOTOS"}
_LINE = re.compile(r"^<LINE (\d+)> ?(.*)$")
_TABLE = re.compile(r"^<TABLE (\d+)>$")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")


@dataclass
class Unit:
    """One citable piece of the prompt: a LINE, or one CELL of a TABLE."""

    kind: str  # "LINE" | "CELL"
    text: str
    line: int | None = None
    table: int | None = None
    row: int | None = None
    column: int | None = None

    @property
    def tokens(self) -> list[str]:
        return self.text.upper().split()

    def proof(self) -> dict[str, Any]:
        if self.kind == "LINE":
            return {"type": "LINE", "id": self.line}
        return {"type": "CELL", "table": self.table, "row": self.row, "column": self.column}


@dataclass
class ParsedPrompt:
    lines: list[Unit] = field(default_factory=list)  # in prompt order
    rows: list[list[Unit]] = field(default_factory=list)  # every table row, in prompt order


def data_section(body_or_text: Any) -> str:
    """The document text between the <document> and </document> lines of a chat request body (or a text)."""
    texts = [body_or_text] if isinstance(body_or_text, str) else _texts(body_or_text.get("messages", []))
    pattern = re.compile(rf"^{re.escape(DATA_OPEN)}\n(.*?)\n{re.escape(DATA_CLOSE)}$", re.DOTALL | re.MULTILINE)
    for text in texts:
        if m := pattern.search(text):
            return m.group(1)
    raise ValueError("no <document> section in the request")


def _texts(messages: list[dict[str, Any]]) -> list[str]:
    out = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out += [p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text"]
    return out


def feedback_of(body: dict[str, Any]) -> str:
    """The feedback message of a retry (the last user message after the assistant's answer), or ''."""
    messages = body.get("messages", [])
    if len(messages) < 4:
        return ""
    return "\n".join(_texts(messages[-1:]))


def parse_prompt(text: str) -> ParsedPrompt:
    parsed = ParsedPrompt()
    table: int | None = None
    row = 0
    for raw in text.splitlines():
        line = raw.strip()
        if table is not None:
            if line == "</TABLE>":
                table = None
                continue
            if line.startswith("|"):
                row += 1
                cells = [c.strip().replace("\\|", "|") for c in _CELL_SPLIT.split(line.strip("|"))]
                parsed.rows.append([Unit("CELL", c, table=table, row=row, column=i + 1) for i, c in enumerate(cells)])
            continue
        if m := _TABLE.match(line):
            table, row = int(m.group(1)), 0
        elif m := _LINE.match(line):
            parsed.lines.append(Unit("LINE", m.group(2), line=int(m.group(1))))
    return parsed


def _starts_with(tokens: list[str], label: list[str]) -> bool:
    return tokens[: len(label)] == label


def _contains(tokens: list[str], wanted: list[str]) -> bool:
    n = len(wanted)
    return any(tokens[i:i + n] == wanted for i in range(len(tokens) - n + 1))


_LABELS = [p.split() for p in PARTIES] + [t.split() for t in TOTAL_LABELS.values()]


def _is_label(unit: Unit) -> bool:
    return any(_starts_with(unit.tokens, label) for label in _LABELS)


def find_row(parsed: ParsedPrompt, label: str, digits: str, words: str) -> tuple[Unit, Unit]:
    """The units printing `digits` and `words` on the row labelled `label` (a party or a total)."""
    want, digit_tokens, word_tokens = label.split(), [digits], words.split()
    for cells in parsed.rows:
        for anchor in cells:
            if not _starts_with(anchor.tokens, want):
                continue
            right = [c for c in cells if c.column >= anchor.column]
            d = next((c for c in right if _contains(c.tokens, digit_tokens)), None)
            w = next((c for c in right if _contains(c.tokens, word_tokens)), None)
            if d and w:
                return d, w
    for i, anchor in enumerate(parsed.lines):
        if not _starts_with(anchor.tokens, want):
            continue
        window = [anchor]
        for unit in parsed.lines[i + 1:i + 5]:
            if _is_label(unit):
                break
            window.append(unit)
        d = next((u for u in window if _contains(u.tokens, digit_tokens)), None)
        w = next((u for u in window if _contains(u.tokens, word_tokens)), None)
        if d and w:
            return d, w
    raise ValueError(f"the prompt has no row {label!r} printing {digits} / {words}")


def _digits_proof(unit: Unit, digits: str) -> list[dict[str, Any]]:
    if unit.kind == "LINE" and unit.tokens != [digits]:
        return [{"type": "WORD", "line": unit.line, "value": digits}]
    return [unit.proof()]


def _field(value: Any, proof: list[dict[str, Any]]) -> dict[str, Any]:
    return {"value": value, "proof": proof}


def correct_answer(prompt_text: str, printed: dict[str, Any]) -> dict[str, Any]:
    """The answer a careful model gives: the values as printed, each citing where it is printed."""
    parsed = parse_prompt(prompt_text)
    acta_id = printed["acta_id"]
    id_line = next((u for u in parsed.lines if acta_id in u.text), None)
    if id_line is None:
        raise ValueError(f"the prompt has no line with the acta id {acta_id}")
    answer: dict[str, Any] = {
        "acta_id": _field(acta_id, [{"type": "WORD", "line": id_line.line, "value": acta_id}]),
        "rows": [],
    }
    for row in printed["rows"]:
        d, w = find_row(parsed, row["party"], row["votes_text"], row["votes_words"])
        answer["rows"].append({
            "party": row["party"],
            "votes": _field(int(row["votes_text"]), _digits_proof(d, row["votes_text"])),
            "votes_words": _field(row["votes_words"], [w.proof()]),
        })
    for key, label in TOTAL_LABELS.items():
        d, w = find_row(parsed, label, printed[f"{key}_text"], printed[f"{key}_words"])
        answer[key] = _field(int(printed[f"{key}_text"]), _digits_proof(d, printed[f"{key}_text"]))
        answer[f"{key}_words"] = _field(printed[f"{key}_words"], [w.proof()])
    return answer


# --- spoiling an answer --------------------------------------------------------------------------------


def width_of(answer: dict[str, Any]) -> int:
    """How many digits the sheet prints per count (the words of the first row tell)."""
    return len(str(answer["rows"][0]["votes_words"]["value"]).split())


def spelled(number: int, width: int) -> str:
    return spell_digits(str(number).zfill(width))


def path_node(answer: dict[str, Any], key: str) -> dict[str, Any]:
    """`rows[3].votes` / `valid_votes` -> the proved node."""
    m = re.fullmatch(r"rows\[(\d+)\]\.(\w+)", key)
    return answer["rows"][int(m.group(1))][m.group(2)] if m else answer[key]


def set_count(answer: dict[str, Any], key: str, number: int, *, words: bool = True) -> dict[str, Any]:
    """A copy with the count at `key` (`rows[i].votes` or a total) set; with `words`, its words agree."""
    new = copy.deepcopy(answer)
    path_node(new, key)["value"] = number
    if words:
        path_node(new, f"{key}_words")["value"] = spelled(number, width_of(answer))
    return new


def digit_texts(answer: dict[str, Any], key: str) -> str:
    return str(path_node(answer, key)["value"]).zfill(width_of(answer))


def misread(answer: dict[str, Any], row: int, printed: str, read: str) -> dict[str, Any]:
    """A copy in which one printed digit `printed` of row `row` was read as `read` (digits only)."""
    text = digit_texts(answer, f"rows[{row}].votes")
    i = text.rfind(printed)
    if i < 0:
        raise ValueError(f"row {row} prints {text}, which has no {printed}")
    return set_count(answer, f"rows[{row}].votes", int(text[:i] + read + text[i + 1:]), words=False)


def rows_with_digit(answer: dict[str, Any], digit: str, *, significant: bool = True) -> list[int]:
    """Rows whose count shows `digit` (in the number itself, not only in the zero padding)."""
    out = []
    for i, row in enumerate(answer["rows"]):
        text = str(row["votes"]["value"]) if significant else digit_texts(answer, f"rows[{i}].votes")
        if digit in text and (row["votes"]["value"] or not significant):
            out.append(i)
    return out


def all_zero(answer: dict[str, Any]) -> dict[str, Any]:
    """Every count 0 (words agreeing), every proof kept."""
    new = answer
    for key in [f"rows[{i}].votes" for i in range(len(answer["rows"]))] + list(TOTAL_LABELS):
        new = set_count(new, key, 0)
    return new


def forced_sum(answer: dict[str, Any]) -> dict[str, Any]:
    """Valid votes forced to the rows' sum and total to valid + null, words agreeing, proofs kept."""
    rows_sum = sum(int(r["votes"]["value"]) for r in answer["rows"])
    new = set_count(answer, "valid_votes", rows_sum)
    return set_count(new, "total_votes", rows_sum + int(answer["null_votes"]["value"]))


def swap_rows(answer: dict[str, Any], a: int, b: int, *, with_proofs: bool) -> dict[str, Any]:
    """Two rows' votes exchanged; `with_proofs`: the proofs go with the values (the rows were mixed up)."""
    new = copy.deepcopy(answer)
    ra, rb = new["rows"][a], new["rows"][b]
    for key in ("votes", "votes_words"):
        if with_proofs:
            ra[key], rb[key] = rb[key], ra[key]
        else:
            ra[key]["value"], rb[key]["value"] = rb[key]["value"], ra[key]["value"]
    return new


def same_candidate_pairs(answer: dict[str, Any]) -> list[tuple[int, int]]:
    """Pairs of rows of one candidate whose counts differ."""
    pairs, start = [], 0
    for _candidate, parties in CANDIDATES:
        idx = range(start, start + len(parties))
        pairs += [(a, b) for a in idx for b in idx if a < b
                  and answer["rows"][a]["votes"]["value"] != answer["rows"][b]["votes"]["value"]]
        start += len(parties)
    return pairs
