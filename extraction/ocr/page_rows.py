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

Every tolerance is a ratio of the words' own heights, so it holds at any print size or resolution, and every
distance is measured in the page's own unit, the same on both axes (extraction/ocr/geometry.py), so it holds
on a page of any shape: A4, landscape, or a thermal strip a metre long.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import median

from extraction.ocr.blocks import OcrBlock
from extraction.ocr.geometry import Box, block_box, block_polygon
from extraction.ocr.layout import RULE_GLYPHS, estimate_skew, straightened, visual_rows
from extraction.ocr.layout import page_skew as layout_page_skew
from extraction.values.numbers import digit_words, fold

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
# The lines of one item printed over two lines are set at the form's line pitch (1.1-1.6 heights between their
# centres); a blank line between them is more than this.
ITEM_PITCH = 2.2
# A continuation line starts under its item, indented or flush, not to the left of it: a word's height of
# slack for an engine's ragged boxes.
ITEM_INDENT = 1.0

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
    'word' for a spelled digit word, 'rule' for a ruled line an engine read as text ('|') or a leader of dots,
    dashes or underscores, '' for anything else."""
    t = text.strip(_EDGE)
    core = "".join(c for c in t if c not in RULE_GLYPHS)
    if not core:
        return "rule" if t or text.strip() else ""
    if not any(c.isalnum() for c in core):
        return "rule"  # a leader ('........', '-----', '___') or a separator line between name and figures
    if _plain_digits(text) is not None:
        return "digits"
    if digit_words(core) is not None:
        return "word"  # 'CER0': a digit word with a digit read for a letter
    return "numeral" if any(c.isdigit() for c in core) else ""


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


def _char_centres(w: OcrBlock, box: Box) -> tuple[tuple[float, float, float | None], ...]:
    """Where the characters of a word of plain digits stand, read two ways, each as (first character's
    centre, last character's centre, pitch inside the word or None): tiled, each character an equal share of
    the word's box (how an OCR engine cuts a word from its line, how a text layer's advances tile a word);
    and flush, each character one digit wide at the word's ends (a word an OCR engine made of several boxes
    of a comb, whose width holds the gaps between them)."""
    n = max(len(_digits(w.text)), 1)
    out = []
    for glyph in (box.width / n, min(box.width / n, GLYPH * box.height)):
        first, last = box.x0 + glyph / 2, box.x1 - glyph / 2
        out.append((first, last, (last - first) / (n - 1) if n > 1 else None))
    return tuple(out)


class _Chain:
    """A run being built. Its kind: 'digits' while every word is plain digits (it may go on across an even
    gap), 'numeral' once a word holds a separator or a thousands group joined (only groups follow then),
    'word' for digit words. The pitches of its digits are kept for each reading of `_char_centres`."""

    def __init__(self, word: OcrBlock, kind: str, boxes: dict[str, Box]):
        self.words = [word]
        self.kind = kind
        self.boxes = boxes
        self.pitches: tuple[list[float], ...] = tuple(
            [inner] if inner and kind == "digits" else [] for _, _, inner in self._centres(word))

    def _centres(self, w: OcrBlock) -> tuple[tuple[float, float, float | None], ...]:
        return _char_centres(w, self.boxes[w.id])

    def takes(self, w: OcrBlock, kind: str) -> str | None:
        """How `w` carries the run on: 'group' (a thousands group), 'even' (digits at the run's pitch),
        'word' (a digit word), or None when it starts something else."""
        last = self.words[-1]
        mine, before = self.boxes[w.id], self.boxes[last.id]
        height = max(before.height, mine.height)
        gap = mine.x0 - before.x1
        if self.kind == "word":
            return "word" if kind == "word" and gap <= FAR_WORDS * height else None
        if kind not in ("digits", "numeral"):
            return None
        if _LEAD.fullmatch(last.text) and _GROUP.fullmatch(w.text) and 0 <= gap <= _char_width(last, before, w, mine):
            return "group"  # a thousands group after a word space (never a word printed over another)
        if self.kind != "digits" or kind != "digits":
            return None
        if len(_digits(last.text)) == len(_digits(w.text)) == 1 and 0 <= gap <= NEAR * height:
            return "even"  # lone digits a letter space apart: an OCR engine's boxes jitter more than that
        for pitches, mine, before in zip(self.pitches, self._centres(w), self._centres(last), strict=True):
            across = mine[0] - before[1]
            known = pitches + ([mine[2]] if mine[2] else [])
            if 0 < across <= FAR_PITCH * height and (not known or 1 / EVEN <= across * len(known) / sum(known) <= EVEN):
                return "even"
        return None

    def add(self, w: OcrBlock, how: str) -> None:
        if how == "even":
            for pitches, mine, before in zip(self.pitches, self._centres(w), self._centres(self.words[-1]),
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


def _char_width(a: OcrBlock, a_box: Box, b: OcrBlock, b_box: Box) -> float:
    chars = len(a.text) + len(b.text)
    return (a_box.width + b_box.width) / chars if chars else 0.0


def numeric_runs(row: Sequence[OcrBlock], index: int = 0, *, boxes: dict[str, Box] | None = None) -> list[Run]:
    """The runs of one page row (its words left to right) that print a number; a ruled line read as text
    neither ends a run nor belongs to it. `boxes`: the words' boxes in the page's unit, by id (measured from
    the words when not given)."""
    boxes = boxes if boxes is not None else {w.id: block_box(w) for w in row}
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
        chain = _Chain(w, kind, boxes) if kind else None
    if chain is not None:
        runs.append(chain.run(index))
    return runs


def page_skew(lines: Sequence[OcrBlock], words: Sequence[OcrBlock]) -> float:
    """A page's slope (dy per dx): from the engine's turned line boxes and the rows its lines form
    (layout.page_skew) where it drew them for most of the page's lines (a detector that read the whole page),
    else from the words (neighbouring words of a line chain reliably, lines a gutter apart do not). A few
    turned boxes are not the page's: a born-digital page whose stamp the OCR read in its image has the stamp's
    slope there, not the page's."""
    quads = [block_polygon(b) for b in lines if b.polygon]
    if 2 * len(quads) > len(lines):
        return layout_page_skew([block_box(b) for b in lines], quads)
    return estimate_skew([block_box(w) for w in words]) if words else 0.0


def _fold_token(text: str) -> str:
    return "".join(c for c in fold(text) if c.isalnum())


class PageRows:
    """The words of one page grouped into page rows (top to bottom, each left to right), the numbers each
    row prints, and where a label (a row's name, such as a party) stands."""

    def __init__(self, words: Sequence[OcrBlock], *, skew: float = 0.0):
        """`skew`: the page's slope in its own unit (`page_skew`). Every box here is the word's once the turn
        is taken out (layout.straightened): a column's left edge is one x down the page."""
        self.skew = skew
        measured = [straightened(block_box(w), skew) for w in words]
        self.boxes: dict[str, Box] = {w.id: b for w, b in zip(words, measured, strict=True)}
        groups = visual_rows(measured, skew=0.0)
        self.rows: list[list[OcrBlock]] = [[words[i] for i in row] for row in groups]
        self.row_of: dict[str, int] = {w.id: r for r, row in enumerate(self.rows) for w in row}
        self.runs: list[Run] = [run for r, row in enumerate(self.rows)
                                for run in numeric_runs(row, r, boxes=self.boxes)]
        self._run_of: dict[str, Run] = {w.id: run for run in self.runs for w in run.words}
        self._heads: dict[int, int | None] = {}
        self._folded: list[list[str]] | None = None
        self._labels: dict[tuple[str, ...], list[tuple[int, float, float]]] = {}

    def head_of(self, row: int) -> int | None:
        """The row that `row` continues, where a form prints one item on two lines (a party's name and digits,
        its words on the next line; a name alone, its figures below); None when it starts an item of its own.

        Read from the words' order and indentation, never from a table: a row continues the row above it when
        it starts with a number (it prints no label before its values), stands at the line pitch below it
        (ITEM_PITCH), does not start to the left of the first label of the row above (ITEM_INDENT), and prints
        only kinds of number (digits, digit words) the row above does not print already: a row of values whose
        label the OCR lost, under a row that shows both, is not another row's second line."""
        if row not in self._heads:
            self._heads[row] = self._head_of(row)
        return self._heads[row]

    def _head_of(self, row: int) -> int | None:
        if row < 1 or row >= len(self.rows):
            return None
        mine = [w for w in self.rows[row] if token_kind(w.text) != "rule"]
        above = [w for w in self.rows[row - 1] if token_kind(w.text) != "rule"]
        if not mine or self.run_of(mine[0].id) is None:
            return None
        labels = [w for w in above if self.run_of(w.id) is None]
        if not labels:
            return None
        kinds = {self.run_of(w.id).kind for w in mine if self.run_of(w.id) is not None}
        if kinds & {self.run_of(w.id).kind for w in above if self.run_of(w.id) is not None}:
            return None
        height = max(median(self.box(w).height for w in mine), median(self.box(w).height for w in above))
        if self._centre(row) - self._centre(row - 1) > ITEM_PITCH * height:
            return None
        if self.box(mine[0]).x0 < self.box(labels[0]).x0 - ITEM_INDENT * height:
            return None
        return row - 1

    def _centre(self, row: int) -> float:
        return median(self.box(w).cy for w in self.rows[row])

    def item_of(self, row: int) -> int:
        """The first row of the item `row` is printed in (itself, or the row it continues)."""
        head = self.head_of(row)
        return row if head is None else head

    def box(self, word: OcrBlock) -> Box:
        """A word's box in the page's unit, the page's turn taken out."""
        return self.boxes.get(word.id) or straightened(block_box(word), self.skew)

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
        return sorted(seen.values(), key=lambda r: (r.row, self.box(r.words[0]).x0))

    def by_row(self, words: Iterable[OcrBlock]) -> list[list[OcrBlock]]:
        """`words` grouped by their page row, rows top to bottom, each left to right."""
        rows: dict[int, list[OcrBlock]] = {}
        for w in words:
            rows.setdefault(self.row_of.get(w.id, -1), []).append(w)
        return [sorted(rows[r], key=lambda w: self.box(w).x0) for r in sorted(rows)]

    def labels(self, label: str) -> list[tuple[int, float, float]]:
        """Where `label` is printed: (row, left, right) of every run of words that reads it, left and right in
        the page's unit, compared without case, accents or punctuation; words the OCR ran together
        ('ELCAMBIO') count too."""
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
                        found.append((r, self.box(row[i]).x0, self.box(row[i + n - 1]).x1))
                    elif n > 1 and folded[i] == joined:
                        found.append((r, self.box(row[i]).x0, self.box(row[i]).x1))
            self._labels[want] = found
        return self._labels[want]

