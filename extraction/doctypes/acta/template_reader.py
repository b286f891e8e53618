"""The template reader: a deterministic, offline reader of tally sheets from OCR blocks — NO LLM.

Used when no LLM is configured, and as a baseline. It knows the sheet's content (the 38 party
rows and the three totals), not its geometry: it works on words, straightens a slightly rotated
scan using the line polygons, groups words into visual rows by vertical overlap, and on each row
splits the words into label runs (anything that is not a number) each followed by a value run
(digits and Spanish digit words). A label run is matched to a party name (exact, then fuzzy with
rapidfuzz); the value run gives the votes in digits and in words. So it works whether digits come
before or after the words, with one or two columns of candidates, and whether OCR gives a row as
one line or several. Answers are what is PRINTED, with proofs in the shape the LLM must use.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field
from typing import Any

from rapidfuzz import fuzz

from extraction.doctypes.acta.layout import DIGIT_WORDS, PARTIES
from extraction.ocr.blocks import BlockType, OcrBlock, OcrPage
from extraction.ocr.geometry import Box, block_box
from extraction.ocr.layout import straightened
from extraction.ocr.page_rows import page_skew
from extraction.ocr.tagged_text import PromptDocument

READER_LABEL = "template reader (offline, no LLM)"

TOTALS = ("valid_votes", "null_votes", "total_votes")
# The acta code as real sheets print it (docs/DESIGN.md: 9 digits, a dot, 2 digits), wherever it stands
# and whatever label precedes it. Not part of a longer run of digits or dotted groups; OCR may put a space
# around the dot or read it as a comma.
_ACTA_ID = re.compile(r"(?<![\d.,])(\d{9}) ?[.,] ?(\d{2})(?![\d]|[.,]\d)")
# Letters OCR confuses with digits inside a number.
_AS_DIGIT = str.maketrans({"O": "0", "o": "0", "D": "0", "Q": "0", "I": "1", "l": "1", "|": "1", "i": "1",
                           "S": "5", "B": "8", "Z": "2"})
_WORD_MIN_SCORE = 75.0
_LOOSE_WORD_SCORE = 60.0
_PARTY_MIN_SCORE = 66.0  # one slip in a 3-letter name (PCY for PCV); only for rows with values


@dataclass
class _Atom:
    """One OCR word placed on the (straightened) page."""

    text: str
    line: OcrBlock
    word: OcrBlock | None  # None when the engine gave no WORD blocks and the line was split by us
    x0: float
    x1: float
    y: float  # straightened vertical centre
    h: float
    kind: str = "other"  # "digits" | "word" | "garbled" (an unreadable digit word) | "other"
    value: str = ""  # normalised digits, or the digit word(s) it spells


@dataclass
class _Record:
    """A label run and the value run that follows it on the same visual row."""

    label: list[_Atom]
    values: list[_Atom] = field(default_factory=list)


def _norm(text: str) -> str:
    text = re.sub(r"[^A-Z0-9 ]", "", text.upper())
    # OCR reads a bold "VV" as "W" and "O" as "0" in names.
    return " ".join(text.replace("VV", "W").replace("0", "O").split())


def _split_digit_words(token: str, *, loose: bool = False) -> list[str] | None:
    """'CER0' -> ['CERO']; 'CEROCERODOS' -> ['CERO', 'CERO', 'DOS']; None when it is not digit words.

    ``loose`` is for a token already known to sit among digit words: one slip is then tolerated
    in a 3-letter word too ('UND' -> 'UNO'); alone, a 3-letter party (UNE) must not pass for UNO.
    """
    t = re.sub(r"[^A-Z]", "", token.upper().replace("0", "O"))
    if not t:
        return None
    best = max(DIGIT_WORDS, key=lambda w: fuzz.ratio(t, w))
    if fuzz.ratio(t, best) >= (_LOOSE_WORD_SCORE if loose else _WORD_MIN_SCORE if len(t) > 3 else 100):
        return [best]
    out, rest = [], t  # glued words, exact spelling only
    while rest:
        match = next((w for w in sorted(DIGIT_WORDS, key=len, reverse=True) if rest.startswith(w)), None)
        if match is None:
            return None
        out.append(match)
        rest = rest[len(match):]
    return out if len(out) > 1 else None


def _classify(atom: _Atom) -> None:
    raw = atom.text.strip().strip(".,:;")
    as_digits = raw.translate(_AS_DIGIT)
    if raw and as_digits.isdigit() and sum(c.isdigit() for c in raw) * 2 >= len(raw):
        atom.kind, atom.value = "digits", as_digits
        return
    words = _split_digit_words(raw)
    if words:
        atom.kind, atom.value = "word", " ".join(words)


def _atoms(page: OcrPage) -> list[_Atom]:
    """The page's words placed in its own unit (extraction/ocr/geometry.py), the page's skew
    (page_rows.page_skew) taken out."""
    lines = [b for b in page.blocks if b.type == BlockType.LINE]
    words_of: dict[str, list[OcrBlock]] = {}
    for b in page.blocks:
        if b.type == BlockType.WORD and b.parent:
            words_of.setdefault(b.parent, []).append(b)
    slope = page_skew(lines, [b for b in page.blocks if b.type == BlockType.WORD])
    atoms: list[_Atom] = []

    def place(text: str, line: OcrBlock, word: OcrBlock | None, x0: float, x1: float, top: float,
              h: float) -> None:
        box = straightened(Box(x0, top, x1, top + h), slope)
        atoms.append(_Atom(text=text, line=line, word=word, x0=box.x0, x1=box.x1, y=box.cy, h=h))

    for line in lines:
        words = words_of.get(line.id)
        if words:
            for w in words:
                box = block_box(w)
                place(w.text, line, w, box.x0, box.x1, box.y0, box.height)
            continue
        # No WORD blocks: split the line's text and share its width out by character position.
        box = block_box(line)
        n = max(len(line.text), 1)
        for m in re.finditer(r"\S+", line.text):
            x0 = box.x0 + box.width * m.start() / n
            x1 = box.x0 + box.width * m.end() / n
            place(m.group(), line, None, x0, x1, box.y0, box.height)
    for atom in atoms:
        _classify(atom)
    return atoms


def _visual_rows(atoms: list[_Atom]) -> list[list[_Atom]]:
    """Group atoms whose straightened centres lie within half a text height of the row's centre."""
    rows: list[list[_Atom]] = []
    centre = 0.0
    for atom in sorted(atoms, key=lambda a: a.y):
        if rows and abs(atom.y - centre) <= 0.5 * statistics.median(a.h for a in rows[-1] + [atom]):
            rows[-1].append(atom)
            centre = statistics.fmean(a.y for a in rows[-1])
        else:
            rows.append([atom])
            centre = atom.y
    return [sorted(r, key=lambda a: a.x0) for r in rows]


def _continued(above: list[_Record], atom: _Atom) -> _Record | None:
    """The record of the row above that a row starting with a value continues (a form printing a party's
    figures, or its words, on the line under its name): the last one whose label starts at or before the
    value, when it holds no value of the value's kind yet."""
    for record in reversed(above):
        if record.label and record.label[0].x0 <= atom.x0 + atom.h:
            kinds = {"digits" if a.kind == "digits" else "word" for a in record.values}
            return None if ("digits" if atom.kind == "digits" else "word") in kinds else record
    return None


def _records(rows: list[list[_Atom]]) -> list[_Record]:
    records: list[_Record] = []
    above: list[_Record] = []
    for row in rows:
        current: _Record | None = None
        first = len(records)
        for i, atom in enumerate(row):
            after_words = i and row[i - 1].kind in ("word", "garbled") and row[i - 1].line is atom.line
            if atom.kind == "other" and after_words:
                # Text right after digit words, in the same OCR line, is a misread digit word, not a label.
                words = _split_digit_words(atom.text, loose=True)
                atom.kind, atom.value = ("word", " ".join(words)) if words else ("garbled", "")
            if atom.kind == "other":
                if current is None or current.values:
                    current = _Record(label=[])
                    records.append(current)
                current.label.append(atom)
            elif current is not None:
                current.values.append(atom)
            elif (record := _continued(above, atom)) is not None:
                current = record
                current.values.append(atom)
        above = records[first:]
    return records


def _label_score(record: _Record, name: str) -> float:
    """Best fuzzy score of ``name`` against the last 1..3 label words (a candidate name may precede)."""
    target = _norm(name)
    texts = [_norm(a.text) for a in record.label]
    best = 0.0
    for k in range(1, min(3, len(texts)) + 1):
        best = max(best, fuzz.ratio(" ".join(texts[-k:]), target))
    return best


def _total_key(record: _Record) -> str | None:
    label = _norm(" ".join(a.text for a in record.label))
    for key, word in (("valid_votes", "VALIDOS"), ("null_votes", "NULOS")):
        if any(fuzz.ratio(t, word) >= 80 for t in label.split()):
            return key
    if any(fuzz.ratio(t, "TOTAL") >= 80 for t in label.split()):
        return "total_votes"
    return None


class _Proofs:
    """Proof references for atoms: the LINE's short id, or, for a line the prompt renders inside a
    table (the pdf-text engine finds tables), the CELL that holds the word."""

    def __init__(self, prompt: PromptDocument, pages: list[OcrPage]):
        self.short = {block_id: short for short, block_id in prompt.line_ids.items()}
        table_short = {block_id: short for short, block_id in prompt.table_ids.items()}
        self.cells: list[tuple[OcrBlock, int]] = [
            (b, table_short[b.parent])
            for page in pages for b in page.blocks
            if b.type == BlockType.CELL and b.parent in table_short
        ]

    def _cell(self, atom: _Atom) -> dict[str, Any] | None:
        box = (atom.word or atom.line).bbox
        cx, cy = box.left + box.width / 2, box.top + box.height / 2
        for cell, table in self.cells:
            c = cell.bbox
            if cell.page == atom.line.page and c.left <= cx <= c.right and c.top <= cy <= c.bottom:
                return {"type": "CELL", "table": table, "row": cell.row, "column": cell.column}
        return None

    def lines(self, atoms: list[_Atom]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for a in atoms:
            short = self.short.get(a.line.id)
            item = {"type": "LINE", "id": short} if short is not None else self._cell(a)
            if item is not None and item not in out:
                out.append(item)
        return out

    def words(self, atoms: list[_Atom]) -> list[dict[str, Any]]:
        return [{"type": "WORD", "line": self.short[a.line.id], "value": a.word.text}
                for a in atoms if a.word is not None and a.line.id in self.short]


def _field(value: Any, proof: list[dict[str, Any]]) -> dict[str, Any]:
    return {"value": value, "proof": proof}


def _values(record: _Record | None, proofs: _Proofs) -> tuple[dict[str, Any], dict[str, Any]]:
    """(digits field as int, words field as str) from a record's value run."""
    if record is None:
        return _field(None, []), _field(None, [])
    digits = [a for a in record.values if a.kind == "digits"]
    words = [a for a in record.values if a.kind in ("word", "garbled")]
    number = int("".join(a.value for a in digits)) if digits else None
    # Without digits, the party label is the only proof there is.
    digit_proof = proofs.lines(digits) + proofs.words(digits) if digits else proofs.lines(record.label)
    votes = _field(number, digit_proof)
    # One unreadable word makes the whole spelled number unreadable: a partial one would be wrong.
    garbled = any(a.kind == "garbled" for a in record.values)
    spelled = None if garbled else " ".join(a.value for a in words) or None
    return votes, _field(spelled, proofs.lines(words))


def _acta_id(atoms: list[_Atom], proofs: _Proofs) -> dict[str, Any]:
    """The first code of the real form in reading order (top to bottom, then left to right), read from
    each OCR line's text so a label glued to it ("CODIGO:050201001.01") or none at all makes no difference."""
    lines: dict[str, list[_Atom]] = {}
    for atom in sorted(atoms, key=lambda a: (a.y, a.x0)):
        lines.setdefault(atom.line.id, []).append(atom)
    for line_atoms in lines.values():
        line = line_atoms[0].line
        for match in _ACTA_ID.finditer(line.text.translate(_AS_DIGIT)):
            code = f"{match.group(1)}.{match.group(2)}"
            # The words that print the code (a WORD proof only when one word holds all of it).
            words = [a for a in line_atoms if a.word is not None and code in a.text.translate(_AS_DIGIT)]
            return _field(code, proofs.lines(line_atoms[:1]) + proofs.words(words[:1]))
    return _field(None, [])


def read_acta(*, pages: list[OcrPage], prompt: PromptDocument) -> dict[str, Any]:
    """Read a tally sheet from OCR pages into the acta answer shape (values as PRINTED, with proofs).

    Shape: {"acta_id", "rows": [{"party", "votes", "votes_words"}] x 38 in sheet order,
    "valid_votes", "valid_votes_words", "null_votes", "null_votes_words", "total_votes",
    "total_votes_words"}; every field is {"value": ..., "proof": [...]}; unreadable -> value None.
    """
    proofs = _Proofs(prompt, pages)
    atoms: list[_Atom] = []
    records: list[_Record] = []
    for page in pages:
        page_atoms = _atoms(page)
        atoms += page_atoms
        records += _records(_visual_rows(page_atoms))

    totals: dict[str, _Record] = {}
    for record in records:
        key = _total_key(record) if record.values else None
        if key and key not in totals:
            totals[key] = record
    party_records = [r for r in records if r not in totals.values()]

    # Assign records to parties: best score first, each record and party used once. Records with
    # values win ties over bare labels (a candidate name bar, a header word).
    scored = []
    for ri, record in enumerate(party_records):
        for pi, party in enumerate(PARTIES):
            score = _label_score(record, party)
            if score == 100 or (score >= _PARTY_MIN_SCORE and record.values):
                scored.append((score, bool(record.values), -ri, pi, ri))
    scored.sort(reverse=True)
    by_party: dict[int, _Record] = {}
    used: set[int] = set()
    for _score, _has_values, _neg, pi, ri in scored:
        if pi not in by_party and ri not in used:
            by_party[pi] = party_records[ri]
            used.add(ri)

    rows = []
    for pi, party in enumerate(PARTIES):
        votes, votes_words = _values(by_party.get(pi), proofs)
        rows.append({"party": party, "votes": votes, "votes_words": votes_words})
    answer: dict[str, Any] = {"acta_id": _acta_id(atoms, proofs), "rows": rows}
    for key in TOTALS:
        answer[key], answer[f"{key}_words"] = _values(totals.get(key), proofs)
    return answer
