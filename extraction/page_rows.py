"""A page's words in the rows they are printed on, and the numbers those rows print (pure).

The words with their boxes are the truth about a page (docs/DESIGN.md, "Blocks and proofs"); an engine's
lines, tables and cells are guesses at its structure that differ from layout to layout (a table finder may merge
a whole group of rows into one cell; a count may be printed one digit per box). What proofs and rules read of a
page is therefore read here, from the words alone:

- A page row is the words that sit level with each other once the page's skew is taken out
  (`extraction.ocr.layout.visual_rows`), across the whole page: a cell an engine merged over several printed
  rows holds words of several page rows, and a label and the values printed beside it share one.
- A number is the run of words of one row that print it, whatever separates its digits. Numerals join the
  thousands groups that follow them after a word space ('1 234,56'). Plain digits join across a gap, a box
  rule or a pipe when they are evenly spaced and close: the boxes of a comb, one digit per box or per cell, or
  letter-spaced digits ('0 5 5' is 55, and '01 4' is 14 where the OCR joined two boxes). Digits far apart, or
  spaced unevenly (two neighbouring columns), stay separate numbers. Spanish digit words join while they stand
  close; a column gutter ends them.

Every tolerance is a ratio of the words' own heights, so it holds at any print size or resolution.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from extraction.numbers import digit_words, fold
from extraction.ocr.blocks import BBox, OcrBlock
from extraction.ocr.layout import RULE_GLYPHS, estimate_skew, skew_of_quads, visual_rows

__all__ = ["PageRows", "Run", "page_skew", "token_kind"]

# A comb's boxes are about as wide as they are tall and hold digits of most of their height, so their pitch
# is one to two digit heights; letter-spaced digits stand closer. Digits further apart than this are in
# different columns.
FAR_PITCH = 2.5
# A gap between digits is even when it is within this ratio of the run's pitch so far: a box drawn, or read by
# an OCR engine, a little wider than its neighbours still is; a neighbouring column, a cell's padding and a
# rule away, is not set at the pitch of the digits beside it.
EVEN = 1.5
# Lone digits closer than this (a letter space, a thin comb box) are one number whatever their pitch: an OCR
# engine's boxes of one spaced number are often uneven by more than EVEN allows.
NEAR = 1.0
# A digit's advance is about half the height of its word box (0.45-0.55 in common fonts), taken generously.
GLYPH = 0.6
# Digit words of one number stand a word space apart (a third of a height); a column gutter is wider than this.
FAR_WORDS = 3.0

_GROUP = re.compile(r"\d{3}(?:[.,]\d+)?[^\w]*")  # a thousands group: '234' or '234,56' (and a trailing sign)
_LEAD = re.compile(r"[^\d]*\d{1,3}")  # the group before it: '1', '$1', '12'
_EDGE = ".,;:()"


# Letters an OCR engine reads for the digits they look like, inside a word that is mostly digits ('00S' for
# 005, '0SS2' for 0552): such a word is read as the number its digits and look-alikes print.
_LOOKALIKE = str.maketrans({"O": "0", "o": "0", "D": "0", "I": "1", "l": "1", "S": "5", "s": "5", "B": "8",
                            "Z": "2"})


def _plain_digits(text: str) -> str | None:
    """The digits a word prints, box rules and edge punctuation left out and look-alike letters read as
    digits where at least half of it are digits; None when it is not a word of plain digits."""
    core = "".join(c for c in text.strip(_EDGE) if c not in RULE_GLYPHS)
    if core.isdigit():
        return core
    read = core.translate(_LOOKALIKE)
    return read if read.isdigit() and 2 * sum(c.isdigit() for c in core) >= len(core) else None


def token_kind(text: str) -> str:
    """'digits' for a word of plain digits ('0056', '5', '0|5' with a box rule read into it, '00S' with a
    look-alike letter), 'numeral' for any other word holding a digit ('$4.11', '1.234,56', 'n°562044387'),
    'word' for a spelled digit word, 'rule' for a ruled line an engine read as text ('|'), '' for anything
    else."""
    t = text.strip(_EDGE)
    core = "".join(c for c in t if c not in RULE_GLYPHS)
    if not core:
        return "rule" if t else ""
    if _plain_digits(text) is not None:
        return "digits"
    if any(c.isdigit() for c in core):
        return "numeral"
    return "word" if digit_words(core) is not None else ""


def _digits(text: str) -> str:
    return _plain_digits(text) or ""


@dataclass(frozen=True)
class Run:
    """The words of one page row that print one number, and the text to read it by: numerals joined without
    what separates them, digit words with single spaces."""

    words: tuple[OcrBlock, ...]
    text: str
    kind: str  # "digits" (numerals) or "words" (digit words)
    row: int


def _char_centres(w: OcrBlock) -> tuple[tuple[float, float, float | None], ...]:
    """Where the characters of a word of plain digits stand, read two ways, each as (first character's
    centre, last character's centre, pitch inside the word or None): tiled, each character an equal share of
    the word's box (how an OCR engine cuts a word from its line, how a text layer's advances tile a word);
    and flush, each character one digit wide at the word's ends (a word an OCR engine made of several boxes
    of a comb, whose width holds the gaps between them)."""
    n = max(len(_digits(w.text)), 1)
    out = []
    for glyph in (w.bbox.width / n, min(w.bbox.width / n, GLYPH * w.bbox.height)):
        first, last = w.bbox.left + glyph / 2, w.bbox.right - glyph / 2
        out.append((first, last, (last - first) / (n - 1) if n > 1 else None))
    return tuple(out)


class _Chain:
    """A run being built. Its kind: 'digits' while every word is plain digits (it may go on across an even
    gap), 'numeral' once a word holds a separator or a thousands group joined (only groups follow then),
    'word' for digit words. The pitches of its digits are kept for each reading of `_char_centres`."""

    def __init__(self, word: OcrBlock, kind: str):
        self.words = [word]
        self.kind = kind
        self.pitches: tuple[list[float], ...] = tuple(
            [inner] if inner and kind == "digits" else [] for _, _, inner in _char_centres(word))

    def takes(self, w: OcrBlock, kind: str) -> str | None:
        """How `w` carries the run on: 'group' (a thousands group), 'even' (digits at the run's pitch),
        'word' (a digit word), or None when it starts something else."""
        last = self.words[-1]
        height = max(last.bbox.height, w.bbox.height)
        if self.kind == "word":
            return "word" if kind == "word" and w.bbox.left - last.bbox.right <= FAR_WORDS * height else None
        if kind not in ("digits", "numeral"):
            return None
        gap = w.bbox.left - last.bbox.right
        if _LEAD.fullmatch(last.text) and _GROUP.fullmatch(w.text) and 0 <= gap <= _char_width(last, w):
            return "group"  # a thousands group after a word space (never a word printed over another)
        if self.kind != "digits" or kind != "digits":
            return None
        if len(_digits(last.text)) == len(_digits(w.text)) == 1 and 0 <= gap <= NEAR * height:
            return "even"  # lone digits a letter space apart: an OCR engine's boxes jitter more than that
        for pitches, mine, before in zip(self.pitches, _char_centres(w), _char_centres(last), strict=True):
            across = mine[0] - before[1]
            known = pitches + ([mine[2]] if mine[2] else [])
            if 0 < across <= FAR_PITCH * height and (not known or 1 / EVEN <= across * len(known) / sum(known) <= EVEN):
                return "even"
        return None

    def add(self, w: OcrBlock, how: str) -> None:
        if how == "even":
            for pitches, mine, before in zip(self.pitches, _char_centres(w), _char_centres(self.words[-1]),
                                             strict=True):
                pitches.append(mine[0] - before[1])
                if mine[2]:
                    pitches.append(mine[2])
        elif how == "group":
            self.kind = "numeral"
        self.words.append(w)

    def run(self, row: int) -> Run:
        if self.kind == "word":
            return Run(tuple(self.words), " ".join(w.text for w in self.words), "words", row)
        text = "".join(_digits(w.text) if token_kind(w.text) == "digits" else w.text.strip(_EDGE) for w in self.words)
        return Run(tuple(self.words), text, "digits", row)


def _char_width(a: OcrBlock, b: OcrBlock) -> float:
    chars = len(a.text) + len(b.text)
    return (a.bbox.width + b.bbox.width) / chars if chars else 0.0


def numeric_runs(row: Sequence[OcrBlock], index: int = 0) -> list[Run]:
    """The runs of one page row (its words left to right) that print a number; a ruled line read as text
    neither ends a run nor belongs to it."""
    runs: list[Run] = []
    chain: _Chain | None = None
    for w in row:
        kind = token_kind(w.text)
        if kind == "rule":
            continue
        how = chain.takes(w, kind) if chain is not None else None
        if how is not None:
            chain.add(w, how)
            continue
        if chain is not None:
            runs.append(chain.run(index))
        chain = _Chain(w, kind) if kind else None
    if chain is not None:
        runs.append(chain.run(index))
    return runs


def page_skew(lines: Sequence[OcrBlock], words: Sequence[OcrBlock]) -> float:
    """A page's slope (dy per dx): from the engine's turned line boxes where it drew them for most of the
    page's lines (a detector that read the whole page), else from the words (neighbouring words of a line
    chain reliably, lines a gutter apart do not). A few turned boxes are not the page's: a born-digital page
    whose stamp the OCR read in its image has the stamp's slope there, not the page's."""
    quads = [b.polygon for b in lines if b.polygon]
    skew = skew_of_quads(quads) if 2 * len(quads) > len(lines) else None
    if skew is None:
        skew = estimate_skew([_box(w.bbox) for w in words]) if words else 0.0
    return skew


def _box(b: BBox) -> tuple[float, float, float, float]:
    return b.left, b.top, b.right, b.bottom


def _fold_token(text: str) -> str:
    return "".join(c for c in fold(text) if c.isalnum())


class PageRows:
    """The words of one page grouped into page rows (top to bottom, each left to right), the numbers each
    row prints, and where a label (a row's name, such as a party) stands."""

    def __init__(self, words: Sequence[OcrBlock], *, skew: float = 0.0):
        groups = visual_rows([_box(w.bbox) for w in words], skew=skew)
        self.rows: list[list[OcrBlock]] = [[words[i] for i in row] for row in groups]
        self.row_of: dict[str, int] = {w.id: r for r, row in enumerate(self.rows) for w in row}
        self.runs: list[Run] = [run for r, row in enumerate(self.rows) for run in numeric_runs(row, r)]
        self._run_of: dict[str, Run] = {w.id: run for run in self.runs for w in run.words}
        self._folded: list[list[str]] | None = None
        self._labels: dict[tuple[str, ...], list[tuple[int, float, float]]] = {}

    def run_of(self, word_id: str) -> Run | None:
        """The number a word is part of, if any."""
        return self._run_of.get(word_id)

    def runs_of(self, words: Iterable[OcrBlock]) -> list[Run]:
        """The runs that any of `words` belongs to, in reading order (row, then left to right)."""
        seen: dict[int, Run] = {}
        for w in words:
            run = self._run_of.get(w.id)
            if run is not None:
                seen.setdefault(id(run), run)
        return sorted(seen.values(), key=lambda r: (r.row, r.words[0].bbox.left))

    def by_row(self, words: Iterable[OcrBlock]) -> list[list[OcrBlock]]:
        """`words` grouped by their page row, rows top to bottom, each left to right."""
        rows: dict[int, list[OcrBlock]] = {}
        for w in words:
            rows.setdefault(self.row_of.get(w.id, -1), []).append(w)
        return [sorted(rows[r], key=lambda w: w.bbox.left) for r in sorted(rows)]

    def labels(self, label: str) -> list[tuple[int, float, float]]:
        """Where `label` is printed: (row, left, right) of every run of words that reads it, compared
        without case, accents or punctuation; words the OCR ran together ('ELCAMBIO') count too."""
        want = tuple(t for t in (_fold_token(x) for x in label.split()) if t)
        if not want:
            return []
        if want not in self._labels:
            if self._folded is None:
                self._folded = [[_fold_token(w.text) for w in row] for row in self.rows]
            found = []
            n, joined = len(want), "".join(want)
            for r, (row, folded) in enumerate(zip(self.rows, self._folded, strict=True)):
                for i in range(len(row)):
                    if tuple(folded[i:i + n]) == want:
                        found.append((r, row[i].bbox.left, row[i + n - 1].bbox.right))
                    elif n > 1 and folded[i] == joined:
                        found.append((r, row[i].bbox.left, row[i].bbox.right))
            self._labels[want] = found
        return self._labels[want]

