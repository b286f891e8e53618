"""Correct acta answers, with proofs, built from the tagged text the model reads — and ways to spoil them.

A scripted model in the tests and benchmarks reads the prompt it was sent just as a real one would:
`correct_answer` finds each party's row in the `<document>` section by the party's name and the values
printed after it (in table cells or lines, in reading order), whatever the layout: one table or several,
free lines, one to three columns, digits before or after the words, candidates merged or repeated, and
text as an OCR engine gives it (values split over lines, letters read for digits). Printed forms and thermal
strips add lines: the digits on one line and the words on the next, the party's name alone on its line with its
figures under it, the words before the digits, a leader of dots, dashes or underscores between the name and its
figures (which an OCR engine may glue to either: `PSUV.......056`, `PSUV-----CERO`), several pages. It cites the
cells or words that print each value (a word glued to a leader is cited as the engine gave it). Only the
values come from outside: what the generator PRINTED on the sheet (`GeneratedActa.printed`). The mutators
then inject one reading error each, leaving every proof in place unless the error is about the proof.

Pure: no Django, no pytest (the benchmarks use it too).
"""

from __future__ import annotations

import copy
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein

from extraction.doctypes.acta.layout import CANDIDATES, DIGIT_WORDS, PARTIES, TOTAL_KEYS
from extraction.reading.feedback import DATA_CLOSE, DATA_OPEN
from sheetgen.generate import spell_digits

TOTAL_LABELS = {"valid_votes": "VOTOS VALIDOS", "null_votes": "VOTOS NULOS", "total_votes": "TOTAL VOTOS"}
_LINE = re.compile(r"^L(\d+) ?(.*)$")
_TABLE = re.compile(r"^T(\d+)$")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
# Letters an OCR engine reads for digits inside a number.
_AS_DIGIT = str.maketrans({"O": "0", "o": "0", "D": "0", "Q": "0", "I": "1", "l": "1", "|": "1", "i": "1",
                           "S": "5", "B": "8", "Z": "2"})
_WINDOW_UNITS = 10  # how far (in lines or cells) a row's values may stand from its label (one digit per cell: 4-5)
# A leader between a name and its figures: two or more dots, dashes or underscores (or an ellipsis).
_LEADER = re.compile(r"(?:[.\-_·]{2,}|…+)")


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
    units: list[Unit] = field(default_factory=list)  # lines and cells (row by row) in prompt order


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
    """The feedback message of a retry (the last message, when it follows the document), or ''."""
    messages = body.get("messages", [])
    if len(messages) < 3:
        return ""
    return "\n".join(_texts(messages[-1:]))


def patch_fields(body: dict[str, Any]) -> list[str] | None:
    """The fields a retry asks to be answered as changes (extraction/reading/patches.py), or None when the request
    wants the whole answer: from the round's schema when it has one, else from the feedback's field list."""
    fmt = body.get("response_format") or {}
    schema = (fmt.get("json_schema") or {}).get("schema") or {}
    items = schema.get("properties", {}).get("changes", {}).get("items", {})
    enum = items.get("properties", {}).get("field", {}).get("enum")
    if enum:
        return list(enum)
    feedback = feedback_of(body)
    if '{"changes": [' not in feedback:
        return None
    listed = feedback.split("as you answered them", 1)[-1]
    fields: list[str] = []
    for line in listed.splitlines():
        m = re.match(r"^([\w.\[\]]+?)(?:\[(\d+)\.\.(\d+)\](\S*))? = ", line)
        if not m:
            continue
        if m.group(2):  # rows[0..37].votes
            fields += [f"{m.group(1)}[{i}]{m.group(4)}" for i in range(int(m.group(2)), int(m.group(3)) + 1)]
        else:
            fields.append(m.group(1))
    return fields


def as_patch(answer: dict[str, Any], previous: dict[str, Any], fields: list[str]) -> dict[str, Any]:
    """A whole answer as the changes it makes to `previous` on `fields` (what a model sends in a retry)."""
    from extraction.rules.answers import get_field

    changes = []
    for path in fields:
        new, old = get_field(answer, path), get_field(previous, path)
        if (new.get("value"), new.get("proof")) != (old.get("value"), old.get("proof")):
            changes.append({"field": path, "value": new.get("value"), "proof": new.get("proof") or []})
    return {"changes": changes}


def parse_prompt(text: str) -> ParsedPrompt:
    parsed = ParsedPrompt()
    table: int | None = None
    row = 0
    for raw in text.splitlines():
        line = raw.strip()
        if table is not None and line.startswith("|"):  # a row of the open table
            row += 1
            cells = [c.strip().replace("\\|", "|") for c in _CELL_SPLIT.split(line[1:])]
            units = [Unit("CELL", c, table=table, row=row, column=i + 1) for i, c in enumerate(cells)]
            parsed.rows.append(units)
            parsed.units += [u for u in units if u.text]
            continue
        table = None
        if m := _TABLE.match(line):
            table, row = int(m.group(1)), 0
        elif m := _LINE.match(line):
            unit = Unit("LINE", m.group(2), line=int(m.group(1)))
            parsed.lines.append(unit)
            parsed.units.append(unit)
    return parsed


# --- finding a row by its label and the values printed after it ---------------------------------------


def _fold(token: str) -> str:
    token = unicodedata.normalize("NFKD", token.upper())
    return "".join(c for c in token if c.isalnum())


def _as_number(token: str) -> str:
    raw = token.strip(".,:;")
    digits = raw.translate(_AS_DIGIT)
    return digits if digits.isascii() and digits.isdigit() and sum(c.isdigit() for c in raw) * 2 >= len(raw) else ""


_PARTY_TOKENS = {p: [_fold(t) for t in p.split()] for p in PARTIES}
_DIGIT_WORDS = frozenset(DIGIT_WORDS)
_TOTAL_WORDS = {"valid_votes": ("VALIDOS", "VALIDO"), "null_votes": ("NULOS", "NULO")}


def _total_key(folded: list[str], i: int) -> str | None:
    """A total's label at token i: VALIDOS / NULOS anywhere in it, else TOTAL (TOTALES) alone or ESCRUTADOS."""
    token = folded[i]
    for key, words in _TOTAL_WORDS.items():
        if token in words or (token.startswith("VOTOS") and token[5:] in words):  # VOTOSVALIDOS: a lost space
            return key
    if token == "ESCRUTADOS":  # VOTOS ESCRUTADOS: the votes counted, the sheet's total
        return "total_votes"
    if token.startswith("TOTAL"):
        near = folded[i + 1:i + 4]
        if any(t in words for words in _TOTAL_WORDS.values() for t in near):
            return None  # "TOTAL VOTOS VALIDOS": the label is VALIDOS'
        return "total_votes"
    return None


@dataclass(frozen=True)
class _Token:
    unit: int
    index: int
    text: str  # as in the prompt (a part of a word a leader was glued to: that part)
    folded: str
    word: str = ""  # the word of the prompt it is part of, when it is only a part of it

    @property
    def cited(self) -> str:
        return self.word or self.text


def _parts(word: str) -> list[str]:
    """A word of the prompt as a reader reads it: a name or a figure glued to a leader (PSUV......056,
    PSUV-----CERO) is the name and the figure; any other word, leaders alone included, as it is."""
    parts = [p for p in _LEADER.split(word) if p]
    if len(parts) == 1 and parts[0] == word or not any(ch.isalnum() for ch in word):
        return [word]
    return [p for p in parts if any(ch.isalnum() for ch in p)]


class _Stream:
    """Every token of the prompt in reading order, with where the labels (parties, totals) stand."""

    def __init__(self, parsed: ParsedPrompt):
        self.units = parsed.units
        self.tokens: list[_Token] = []
        for u, unit in enumerate(parsed.units):
            for i, word in enumerate(unit.text.split()):
                parts = _parts(word)
                for text in parts:
                    self.tokens.append(_Token(u, i, text, _fold(text), word if len(parts) > 1 or text != word else ""))
        folded = [t.folded for t in self.tokens]
        self.labels: dict[int, tuple[str, int]] = {}  # token position -> (label key, label length)
        for pos in range(len(folded)):
            for party, want in _PARTY_TOKENS.items():
                if pos in self.labels:
                    continue
                if folded[pos:pos + len(want)] == want and self._near_units(pos, len(want)):
                    self.labels[pos] = (party, len(want))
                elif len(want) > 1 and folded[pos] == "".join(want):  # the OCR lost the space: ELCAMBIO
                    self.labels[pos] = (party, 1)
            key = _total_key(folded, pos)
            if key and pos not in self.labels:
                self.labels[pos] = (key, 1)
        self._misread_labels(folded)

    def _misread_labels(self, folded: list[str]) -> None:
        """A party name the OCR got one letter wrong (PEV for PFV, CMSV for MSV with a box rule read into it,
        PT for PPT) is still its label when no token reads that party exactly and it is one letter away from
        no other missing party: a reader knows the list."""
        found = {k for k, _ in self.labels.values()}
        missing = [p for p, want in _PARTY_TOKENS.items() if p not in found and len(want) == 1]
        known = set(_PARTY_TOKENS)
        # a name of several words whose last word no other name has: that word alone (CNEL CAMBIO: a stamp
        # over EL)
        lasts = {want[-1]: p for p, want in _PARTY_TOKENS.items() if p not in found and len(want) > 1
                 and sum(want[-1] in other for other in _PARTY_TOKENS.values()) == 1}
        for pos, token in enumerate(folded):
            if pos not in self.labels and token in lasts:
                self.labels[pos] = (lasts.pop(token), 1)
        for pos, token in enumerate(folded):
            if pos in self.labels or len(token) < 2 or token.isdigit() or token in known or token in _DIGIT_WORDS:
                continue  # UNO is a digit word, not UNE misread
            near = [p for p in missing if len(p) >= 3 and Levenshtein.distance(p, token) == 1]
            if len(near) == 1:
                self.labels[pos] = (near[0], 1)
                missing.remove(near[0])

    def _near_units(self, pos: int, n: int) -> bool:
        """The tokens of a name in one unit, or in two that follow each other (an engine cut 'EL | CAMBIO'
        at a wide gap)."""
        units = {t.unit for t in self.tokens[pos:pos + n]}
        return max(units) - min(units) <= 1

    def anchors(self, key: str) -> list[int]:
        return [pos for pos, (k, _) in self.labels.items() if k == key]

    def window(self, anchor: int) -> list[int]:
        """Token positions after the label up to the next label (a few units at most), then those before
        it back to the previous label: where this row's values are printed."""
        after, before = self.sides(anchor)
        return after + before

    def sides(self, anchor: int) -> tuple[list[int], list[int]]:
        """The window's positions after the label and, nearest first, before it."""
        n = self.labels[anchor][1]
        first_unit = self.tokens[anchor].unit
        after = []
        for pos in range(anchor + n, len(self.tokens)):
            if pos in self.labels or self.tokens[pos].unit - first_unit > _WINDOW_UNITS:
                break
            after.append(pos)
        before = []
        for pos in range(anchor - 1, -1, -1):
            if pos in self.labels or first_unit - self.tokens[pos].unit > 2:
                break
            before.append(pos)
        return after, before


def _digits_at(stream: _Stream, window: list[int], digits: str) -> list[int] | None:
    """The token positions that print `digits`: one token, else consecutive tokens of digits read together
    (a count printed one digit per box, or letter-spaced: '0 0 5 6', '01 4')."""
    for test in (lambda t: t.text.strip(".,:;") == digits,
                 lambda t: _as_number(t.text) == digits,
                 lambda t: _as_number(t.text) != "" and int(_as_number(t.text)) == int(digits)):
        for pos in window:
            if test(stream.tokens[pos]):
                return [pos]
    for i in range(len(window)):
        read = ""
        for k, pos in enumerate(window[i:], start=i):
            piece = _as_number(stream.tokens[pos].text)
            if not piece or (k > i and pos != window[k - 1] + 1):
                break
            read += piece
            if len(read) >= len(digits):
                if k > i and read == digits:
                    return window[i:k + 1]
                break
    return None


def _words_at(stream: _Stream, window: list[int], words: str) -> list[int] | None:
    want = words.split()
    n = len(want)
    runs = [window[i:i + n] for i in range(len(window) - n + 1) if window[i:i + n] == list(range(window[i],
                                                                                              window[i] + n))]
    for run in runs:
        if [stream.tokens[p].folded for p in run] == want:
            return run
    joined = "".join(want)  # the OCR lost spaces between digit words: CEROCEROCERO CUATRO
    for k in range(1, n):
        for i in range(len(window) - k + 1):
            run = window[i:i + k]
            if run == list(range(run[0], run[0] + k)) and "".join(stream.tokens[p].folded for p in run) == joined:
                return run
    best = max(runs, key=lambda r: fuzz.ratio(" ".join(stream.tokens[p].folded for p in r), words), default=None)
    if best and fuzz.ratio(" ".join(stream.tokens[p].folded for p in best), words) >= 80:  # SHETE for SIETE
        return best
    return None


def _cite_digits(stream: _Stream, positions: list[int]) -> list[dict[str, Any]]:
    units = {stream.tokens[p].unit for p in positions}
    unit = stream.units[stream.tokens[positions[0]].unit]
    if len(units) > 1:
        return _cite_units(stream, positions)  # one digit per cell: every cell it is printed in
    words = list(dict.fromkeys((stream.tokens[p].index, stream.tokens[p].cited) for p in positions))
    if unit.kind == "LINE" and len(unit.text.split()) > len(words):
        return [{"type": "WORD", "line": unit.line, "value": " ".join(w for _, w in words)}]
    return [unit.proof()]


def _cite_units(stream: _Stream, positions: list[int]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for pos in positions:
        proof = stream.units[stream.tokens[pos].unit].proof()
        if proof not in out:
            out.append(proof)
    return out


def _in_merged_cell(stream: _Stream, rows: list[list[Unit]], anchor: int, digits: str, words: str
                    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]] | None:
    """A cell holding the labels of several rows (the text layer merged them): the values are the same
    ordinal in the cells beside it that hold as many numbers and spelled numbers, or, in a column the table
    splits per row, in that many rows below."""
    unit = stream.units[stream.tokens[anchor].unit]
    if unit.kind != "CELL":
        return None
    labels = [pos for pos in stream.labels if stream.tokens[pos].unit == stream.tokens[anchor].unit]
    if len(labels) < 2:
        return None
    ordinal, width = sorted(labels).index(anchor), len(words.split())
    at = next((k for k, r in enumerate(rows) if any(c is unit for c in r)), None)
    if at is None:
        return None
    below = rows[at + ordinal] if at + ordinal < len(rows) and rows[at + ordinal][0].table == unit.table else []
    d_proof = w_proof = None
    for cell in rows[at]:
        tokens = cell.text.split()
        numbers = [t for t in tokens if _as_number(t)]
        own = next((c for c in below if c.column == cell.column), None) if len(tokens) < len(labels) else None
        if len(numbers) == len(labels) == len(tokens) and int(_as_number(numbers[ordinal])) == int(digits):
            d_proof = [cell.proof()]
        elif len(tokens) == len(labels) * width and " ".join(
                _fold(t) for t in tokens[ordinal * width:(ordinal + 1) * width]) == words:
            w_proof = [cell.proof()]
        elif own is not None and _as_number(own.text.replace(" ", "")) == digits:
            d_proof = [own.proof()]
        elif own is not None and " ".join(_fold(t) for t in own.text.split()) == words:
            w_proof = [own.proof()]
    return (d_proof, w_proof) if d_proof and w_proof else None


def _locate(stream: _Stream, key: str, digits: str, words: str, rows: list[list[Unit]]
            ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]] | None:
    """(digits proof, words proof) of the row labelled `key` that prints these values, or None."""
    fallback = None
    for anchor in stream.anchors(key):
        merged = _in_merged_cell(stream, rows, anchor, digits, words)
        if merged:
            return merged
        after, before = stream.sides(anchor)
        w = _words_at(stream, after + before, words)
        # digits after the label first, as a reader reads a row; where the text lost them (an OCR slip), the
        # words beside the label show the number and are cited for it
        d = _digits_at(stream, after, digits) or (None if w is not None else _digits_at(stream, before, digits))
        if w is not None:
            return _cite_digits(stream, d) if d is not None else _cite_units(stream, w), _cite_units(stream, w)
        if fallback is None and (d is not None or w is not None):
            label = _cite_units(stream, [anchor])
            fallback = (_cite_digits(stream, d) if d is not None else label,
                        _cite_units(stream, w) if w is not None else label)
    return fallback


def _unit_of(stream: _Stream, ref: dict[str, Any]) -> int | None:
    """The unit a proof cites (a WORD's line)."""
    for k, unit in enumerate(stream.units):
        if unit.kind == "LINE" and ref.get("type") in ("LINE", "WORD") and unit.line == ref.get("id", ref.get("line")):
            return k
        if unit.kind == "CELL" and ref.get("type") == "CELL" and (unit.table, unit.row, unit.column) == (
                ref.get("table"), ref.get("row"), ref.get("column")):
            return k
    return None


def _unlabelled(stream: _Stream, index: int, digits: str, words: str, claimed: set[int | None]
                ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]] | None:
    """The values of a row whose name the text does not show (the OCR dropped it, or a stamp or a signature
    garbled it), as a reader who knows the form's order finds them: printed after the row of the nearest
    earlier party the text names and before the nearest later one, in a line or cell no named row's values
    are in. `index` is the row's place in the form (a total's is after the last party's)."""
    earlier = [a for p in reversed(PARTIES[:index]) for a in stream.anchors(p)[:1]]
    later = [a for p in PARTIES[index + 1:] for a in stream.anchors(p)[:1]]
    lo = earlier[0] if earlier else 0
    # blocks of rows side by side interleave in the text: a later party read before the earlier one bounds nothing
    hi = later[0] if later and later[0] > lo else len(stream.tokens)
    free = [p for p in range(lo, hi) if p not in stream.labels and stream.tokens[p].unit not in claimed]
    d, w = _digits_at(stream, free, digits), _words_at(stream, free, words)
    if w is None:
        return None
    return (_cite_digits(stream, d) if d is not None else _cite_units(stream, w)), _cite_units(stream, w)


def _field(value: Any, proof: list[dict[str, Any]]) -> dict[str, Any]:
    return {"value": value, "proof": proof}


def _acta_id_proof(parsed: ParsedPrompt, acta_id: str) -> list[dict[str, Any]]:
    for unit in parsed.units:
        for token in unit.text.split():
            if acta_id in token.translate(_AS_DIGIT):
                if unit.kind == "LINE" and len(unit.text.split()) > 1:
                    return [{"type": "WORD", "line": unit.line, "value": token}]
                return [unit.proof()]
    for unit in parsed.units:  # split by the OCR ("050201001. 01")
        if acta_id in re.sub(r"\s+", "", unit.text).translate(_AS_DIGIT):
            return [unit.proof()]
    return []


def correct_answer(prompt_text: str, printed: dict[str, Any], *, strict: bool = True) -> dict[str, Any]:
    """The answer a careful model gives: the values as printed, each citing where it is printed.

    With `strict`, a value the prompt does not show next to its label raises ValueError; without, the
    value is still answered (the model read it right) with the best proof the text offers: its label's
    line or cell, or none.
    """
    parsed = parse_prompt(prompt_text)
    stream = _Stream(parsed)
    missing: list[str] = []
    id_proof = _acta_id_proof(parsed, printed["acta_id"])
    if not id_proof:
        missing.append(f"the acta code {printed['acta_id']}")
    answer: dict[str, Any] = {"acta_id": _field(printed["acta_id"], id_proof), "rows": []}
    located = [_locate(stream, row["party"], row["votes_text"], row["votes_words"], parsed.rows)
               for row in printed["rows"]]
    claimed = {_unit_of(stream, ref) for found in located if found for refs in found for ref in refs}
    for i, row in enumerate(printed["rows"]):
        found = located[i] or _unlabelled(stream, i, row["votes_text"], row["votes_words"], claimed)
        if found is None:
            missing.append(f"row {row['party']} printing {row['votes_text']} / {row['votes_words']}")
            found = ([], [])
        answer["rows"].append({
            "party": row["party"],
            "votes": _field(int(row["votes_text"]), found[0]),
            "votes_words": _field(row["votes_words"], found[1]),
        })
    for key in TOTAL_KEYS:
        found = (_locate(stream, key, printed[f"{key}_text"], printed[f"{key}_words"], parsed.rows)
                 or _unlabelled(stream, len(PARTIES), printed[f"{key}_text"], printed[f"{key}_words"], claimed))
        if found is None:
            missing.append(f"{key} printing {printed[f'{key}_text']} / {printed[f'{key}_words']}")
            found = ([], [])
        answer[key] = _field(int(printed[f"{key}_text"]), found[0])
        answer[f"{key}_words"] = _field(printed[f"{key}_words"], found[1])
    if strict and missing:
        raise ValueError(f"the prompt does not show {'; '.join(missing[:3])}")
    return answer


def uncited_answer(printed: dict[str, Any]) -> dict[str, Any]:
    """What a model that saw only the page images answers: every value as printed, no OCR proofs."""
    def f(value: Any) -> dict[str, Any]:
        return {"value": value, "proof": []}

    answer = {"acta_id": f(printed["acta_id"]),
              "rows": [{"party": r["party"], "votes": f(r["votes"]), "votes_words": f(r["votes_words"])}
                       for r in printed["rows"]]}
    for key in TOTAL_KEYS:
        answer[key], answer[f"{key}_words"] = f(printed[key]), f(printed[f"{key}_words"])
    return answer


# --- spoiling an answer --------------------------------------------------------------------------------


def width_of(answer: dict[str, Any]) -> int:
    """How many digits the sheet pads its counts to: the words of every row count as many (0056 is CERO CERO
    CINCO SEIS); 1 when they differ (a sheet printing 56 as CINCO SEIS)."""
    counts = {len(str(row["votes_words"]["value"]).split()) for row in answer["rows"]}
    return counts.pop() if len(counts) == 1 else 1


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
