"""Tally sheets laid out in points and placed on pages of any shape, for the property tests of page geometry
(pure: no Django).

A sheet's words are set the way a printer sets them, in points from the content's top left: the acta code, then
each of the 38 parties (docs/DESIGN.md) and the three totals, every item a label, its count in digits and the
same count in digit words, in one of the conventions printed forms use (digits plain, zero-padded, one per ruled
box or letter-spaced; words after or before the digits; the words on the next line, or the name alone on its
line with its figures under it; leaders of dots, dashes or underscores; one block or two side by side). A
`Placement` then puts those words on a page: with a margin, moved, on a taller or wider page, turned to
landscape, on a strip just wider than the print, scaled as a whole, or cut over two pages between items. The
words' boxes in fractions of that page are what an OCR engine would hand over, and from there the production
path reads them (`extraction.ocr.lines.build_page_lines`, the prompt, the rules).

Where a word's geometry in points is the same, every reading of it must be the same: that is what the tests
hold, over every placement.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from extraction.doctypes.acta.layout import CANDIDATES, DIGIT_WORDS, PARTIES, TOTAL_KEYS
from extraction.ocr.blocks import BBox, BlockType, OcrPage
from extraction.ocr.geometry import PageSize
from extraction.ocr.lines import EngineWord, build_page_lines
from extraction.ocr.tagged_text import PromptDocument

TOTAL_LABELS = {"valid_votes": "VOTOS VALIDOS", "null_votes": "VOTOS NULOS", "total_votes": "TOTAL VOTOS"}
LEADERS = {"dots": ".", "dashes": "-", "underscores": "_"}


@dataclass(frozen=True)
class Style:
    """How a sheet is printed (lengths in points)."""

    size: float  # the font size
    advance: float  # a character's advance, as a share of the size
    ascent: float  # a word box's height, as a share of the size
    pitch: float  # the line pitch, as a share of the size
    space: float  # a word space, as a share of the size (a third of an em to a monospaced character)
    numbers: str  # plain | padded | comb | spaced
    comb_pitch: float  # comb: box pitch, as a share of the size
    digit_gap: float  # spaced: the gap between digits, as a share of the size
    order: str  # digits-words | words-digits
    structure: str  # same-line | next-line | name-alone
    indent: float  # next-line and name-alone: the second line's indent, in characters
    leader: str  # none | dots | dashes | underscores
    blocks: int  # 1 or 2 blocks of items side by side
    headings: bool  # a heading line per candidate above its parties


@dataclass(frozen=True)
class Word:
    text: str
    x0: float
    y0: float
    x1: float
    y1: float


@dataclass(frozen=True)
class Item:
    """One printed item: a party's row or a total, with the indices of its words."""

    key: str  # the party, or the total's key
    votes: int
    digits_text: str  # as printed: '056'
    words_text: str  # 'CERO CINCO SEIS'
    label: tuple[int, ...]
    digits: tuple[int, ...]
    words: tuple[int, ...]


@dataclass(frozen=True)
class Sheet:
    words: tuple[Word, ...]
    items: tuple[Item, ...]
    code: str
    code_word: int
    width: float  # the content's extent
    height: float
    cuts: tuple[float, ...]  # y between two items' lines, where the sheet may be cut over two pages


@dataclass
class _Setter:
    style: Style
    words: list[Word] = field(default_factory=list)

    @property
    def height(self) -> float:
        return self.style.ascent * self.style.size

    def width_of(self, text: str) -> float:
        return len(text) * self.style.advance * self.style.size

    def put(self, text: str, x: float, y: float) -> tuple[int, float]:
        """A word at x on the line whose top is y; its index and where it ends."""
        end = x + self.width_of(text)
        self.words.append(Word(text, x, y, end, y + self.height))
        return len(self.words) - 1, end

    def phrase(self, text: str, x: float, y: float) -> tuple[tuple[int, ...], float]:
        out = []
        for token in text.split():
            i, x = self.put(token, x, y)
            out.append(i)
            x += self.style.space * self.style.size
        return tuple(out), x - self.style.space * self.style.size

    def number(self, digits: str, x: float, y: float) -> tuple[tuple[int, ...], float]:
        s = self.style
        if s.numbers in ("plain", "padded"):
            i, end = self.put(digits, x, y)
            return (i,), end
        out = []
        for d in digits:
            if s.numbers == "comb":  # one digit centred in each box of a comb
                box = s.comb_pitch * s.size
                i, _ = self.put(d, x + (box - self.width_of(d)) / 2, y)
                x += box
            else:
                i, end = self.put(d, x, y)
                x = end + s.digit_gap * s.size
            out.append(i)
        return tuple(out), x


def _spelled(digits: str) -> str:
    return " ".join(DIGIT_WORDS[int(d)] for d in digits)


def lay_out(style: Style, counts: Sequence[int], null_votes: int, code: str) -> Sheet:
    """The sheet's words in points, from the content's top left."""
    setter = _Setter(style)
    s = style
    line = s.pitch * s.size
    space = s.space * s.size
    width = 3 if s.numbers != "plain" else 0
    valid = sum(counts)
    values = [*zip(PARTIES, counts, strict=True),
              *zip(TOTAL_KEYS, (valid, null_votes, valid + null_votes), strict=True)]
    label_chars = max(len(TOTAL_LABELS.get(k, k)) for k, _ in values) + 2
    figures_at = label_chars * s.advance * s.size
    _, end = setter.put("ACTA", 0.0, 0.0)
    code_word, _ = setter.put(code, end + space, 0.0)
    candidate_of = {p: c for c, parties in CANDIDATES for p in parties}
    per_item_lines = 1 if s.structure == "same-line" else 2
    # Items go down block by block; with two blocks, the second starts beside the first, level with it.
    half = (len(values) + 1) // 2 if s.blocks == 2 else len(values)
    items: list[Item] = []
    cuts: list[float] = []
    y_of_block = [2 * line, 2 * line]
    gutter = 6 * s.advance * s.size  # two blocks side by side: a gutter wider than a number's word spaces
    for k, (key, votes) in enumerate(values):
        block = 0 if k < half else 1
        if k == half and block == 1:
            block_x = max(w.x1 for w in setter.words[code_word + 1:]) + gutter
        x0 = block_x if block == 1 else 0.0
        y = y_of_block[block]
        candidate = candidate_of.get(key)
        first_of_candidate = candidate is not None and (k == 0 or candidate_of.get(values[k - 1][0]) != candidate)
        if s.headings and first_of_candidate:
            setter.phrase(candidate, x0, y)
            y += line
        digits = str(votes).zfill(width) if width else str(votes)
        spelled = _spelled(digits)
        label_text = TOTAL_LABELS.get(key, key)
        label, end = setter.phrase(label_text, x0, y)
        second = y + line
        indent = x0 + s.indent * s.advance * s.size
        if s.structure == "name-alone":
            at, y_figures = indent, second
        else:
            at, y_figures = x0 + figures_at, y
            if s.leader != "none":  # a word space either side of it: a leader is drawn to fit
                n = int((at - end - 2 * space) / (s.advance * s.size))
                if n >= 2:
                    setter.words.append(Word(LEADERS[s.leader] * n, end + space, y, at - space, y + setter.height))
        if s.structure == "next-line":  # the digits on the label's line, the words on the next
            number, _ = setter.number(digits, at, y)
            words, _ = setter.phrase(spelled, indent, second)
        elif s.order == "digits-words":
            number, end = setter.number(digits, at, y_figures)
            words, _ = setter.phrase(spelled, end + space, y_figures)
        else:
            words, end = setter.phrase(spelled, at, y_figures)
            number, _ = setter.number(digits, end + space, y_figures)
        items.append(Item(key, votes, digits, spelled, label, number, words))
        y_of_block[block] = y + per_item_lines * line
        if s.blocks == 1:  # two blocks side by side break their items at different heights
            cuts.append(y_of_block[block] - (line - setter.height) / 2)
    words = tuple(setter.words)
    right = max(w.x1 for w in words)
    bottom = max(w.y1 for w in words)
    return Sheet(words, tuple(items), code, code_word, right, bottom, tuple(cuts[:-1]))


styles = st.builds(
    Style,
    size=st.floats(6.0, 12.0), advance=st.floats(0.5, 0.62), ascent=st.floats(0.85, 1.2),
    pitch=st.floats(1.25, 1.7), space=st.floats(0.25, 0.6),
    numbers=st.sampled_from(["plain", "padded", "comb", "spaced"]), comb_pitch=st.floats(1.1, 1.9),
    digit_gap=st.floats(0.3, 0.8), order=st.sampled_from(["digits-words", "words-digits"]),
    structure=st.sampled_from(["same-line", "next-line", "name-alone"]), indent=st.floats(0.0, 6.0),
    leader=st.sampled_from(["none", "dots", "dashes", "underscores"]), blocks=st.sampled_from([1, 2]),
    headings=st.booleans(),
)
counts = st.lists(st.integers(0, 999), min_size=len(PARTIES), max_size=len(PARTIES))


@st.composite
def sheets(draw: Any) -> Sheet:
    code = f"{draw(st.integers(10**8, 10**9 - 1))}.{draw(st.integers(1, 99)):02d}"
    return lay_out(draw(styles), draw(counts), draw(st.integers(0, 99)), code)


# ------------------------------------------------------------------------------------------------ placing


@dataclass(frozen=True)
class Placement:
    """Pages for a sheet: each page's size and, per word index, (page number, x, y offset) in points."""

    name: str
    sizes: tuple[PageSize, ...]
    offsets: tuple[tuple[int, float, float], ...]  # per word: page, dx, dy
    scale: float = 1.0


MARGIN = 30.0


def placements(sheet: Sheet, *, k: float, dx: float, dy: float, cut: int) -> list[Placement]:
    """The sheet on pages of many shapes: `k` stretches a page's blank space or scales it all, `dx`/`dy`
    (0..1) move the print within a larger page, `cut` picks where a long sheet is cut over two pages."""
    w, h, m = sheet.width + 2 * MARGIN, sheet.height + 2 * MARGIN, MARGIN
    n = len(sheet.words)

    def one(name: str, size: tuple[float, float], x: float, y: float, scale: float = 1.0) -> Placement:
        return Placement(name, (PageSize(*size),), tuple((1, x, y) for _ in range(n)), scale)

    out = [
        one("as printed", (w, h), m, m),
        one("taller", (w, h * k), m, m),
        one("wider", (w * k, h), m, m),
        one("landscape", (max(w, h) * 1.3, h), m, m),
        one("a strip", (sheet.width + 8, (sheet.height + 8) * k), 4, 4),
        one("scaled", (w * k, h * k), m * k, m * k, scale=k),
        one("moved", (w * 2, h * 2), m + dx * w, m + dy * h),
    ]
    if sheet.cuts:
        at = sheet.cuts[cut % len(sheet.cuts)]
        offsets = tuple((1, m, m) if word.y1 <= at else (2, m, m - at) for word in sheet.words)
        out.append(Placement("over two pages", (PageSize(w, at + 2 * m), PageSize(w, h - at)), offsets))
    return out


@dataclass
class Placed:
    pages: list[OcrPage]
    block_of: list[str]  # word index -> its WORD block id
    index_of: dict[str, int]  # WORD block id -> word index


def place(sheet: Sheet, placement: Placement) -> Placed:
    """The sheet's words on the placement's pages, read from there as an engine's words are."""
    pages, block_of = [], [""] * len(sheet.words)
    for number, size in enumerate(placement.sizes, start=1):
        mine = [i for i, (p, _, _) in enumerate(placement.offsets) if p == number]
        engine_words = []
        for i in mine:
            word, (_, dx, dy), k = sheet.words[i], placement.offsets[i], placement.scale
            x0, y0, x1, y1 = word.x0 * k + dx, word.y0 * k + dy, word.x1 * k + dx, word.y1 * k + dy
            engine_words.append(EngineWord(text=word.text, confidence=1.0, bbox=BBox(
                x0 / size.width, y0 / size.height, (x1 - x0) / size.width, (y1 - y0) / size.height)))
        built = build_page_lines(number, engine_words, size=size, scanned=False)
        for i, block_id in zip(mine, built.word_ids, strict=True):
            block_of[i] = block_id
        pages.append(OcrPage(number=number, blocks=built.blocks, engine="generated"))
    return Placed(pages, block_of, {b: i for i, b in enumerate(block_of)})


# ------------------------------------------------------------------------------------------------ answers


def cite(placed: Placed, prompt: PromptDocument, indices: Sequence[int], *, by: str) -> list[dict[str, Any]]:
    """Proofs of the words `indices` as a model writes them: their LINEs, or each as a WORD of its LINE."""
    short = {block: s for s, block in prompt.line_ids.items()}
    parent = {b.id: b.parent for p in placed.pages for b in p.blocks if b.type is BlockType.WORD}
    text = {b.id: b.text for p in placed.pages for b in p.blocks if b.type is BlockType.WORD}
    out: list[dict[str, Any]] = []
    for i in indices:
        block = placed.block_of[i]
        line = short.get(parent[block])
        if line is None:
            continue
        ref = {"type": "LINE", "id": line} if by == "line" else {"type": "WORD", "line": line, "value": text[block]}
        if ref not in out:
            out.append(ref)
    return out


def answer_of(sheet: Sheet, placed: Placed, prompt: PromptDocument, *, by: str,
              values: dict[tuple[str, str], Any] | None = None,
              proofs: dict[tuple[str, str], int] | None = None) -> dict[str, Any]:
    """The acta answer a careful reader gives, citing each value where it is printed; `values` replaces
    values ((item key, 'votes' or 'votes_words') -> value) and `proofs` cites another item's words for one."""
    values, proofs = values or {}, proofs or {}
    by_key = {item.key: item for item in sheet.items}

    def field_of(item: Item, part: str) -> dict[str, Any]:
        source = sheet.items[proofs[item.key, part]] if (item.key, part) in proofs else item
        value = values.get((item.key, part), item.votes if part == "votes" else item.words_text)
        cited = source.digits if part == "votes" else source.words
        return {"value": value, "proof": cite(placed, prompt, cited, by=by)}

    answer: dict[str, Any] = {
        "acta_id": {"value": sheet.code, "proof": cite(placed, prompt, [sheet.code_word], by="line")},
        "rows": [{"party": p, "votes": field_of(by_key[p], "votes"), "votes_words": field_of(by_key[p], "votes_words")}
                 for p in PARTIES],
    }
    for key in TOTAL_KEYS:
        answer[key] = field_of(by_key[key], "votes")
        answer[f"{key}_words"] = field_of(by_key[key], "votes_words")
    return answer
