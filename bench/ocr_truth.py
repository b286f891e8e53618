"""Accuracy of an OCR reading against known truth, for bench/ocr_engines.py (pure: no engine, no timing).

- Tally sheets (sheetgen/): per party row, whether its votes in digits ("0056") were read as one word,
  and whether its votes in words ("CERO CERO CINCO SEIS") were read as one run of a line. Each printed
  row is matched at most once (a multiset), so a number read once does not count for two rows that print it.
- Invoices: characters of the PDF text layer's words that the OCR of the PNG read as a whole word (the
  PDF's own text is the truth of what the page prints).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from extraction.ocr.blocks import BlockType, OcrPage

_EDGE = re.compile(r"^[^\w]+|[^\w]+$")


def _token(text: str) -> str:
    return _EDGE.sub("", text).upper()


@dataclass
class RowScore:
    rows: int = 0
    digits: int = 0
    words: int = 0

    def add(self, other: RowScore) -> None:
        self.rows += other.rows
        self.digits += other.digits
        self.words += other.words


def page_words(pages: list[OcrPage]) -> list[str]:
    return [b.text for p in pages for b in p.blocks if b.type is BlockType.WORD]


def page_lines(pages: list[OcrPage]) -> list[str]:
    return [b.text for p in pages for b in p.blocks if b.type is BlockType.LINE]


def acta_rows_right(*, words: list[str], lines: list[str], printed: dict) -> RowScore:
    """Digits and words right per party row of a generated sheet (`printed` as generate_acta returns it)."""
    rows = printed["rows"]
    found = Counter(_token(w) for w in words)
    digits = 0
    for row in rows:
        if found[row["votes_text"]] > 0:
            found[row["votes_text"]] -= 1
            digits += 1
    # Longest phrases first, so "CERO CINCO" cannot use up the end of another row's "CERO CERO CINCO".
    texts = [" " + " ".join(_token(w) for w in line.split()) + " " for line in lines]
    spelled = 0
    for phrase in sorted((" " + row["votes_words"] + " " for row in rows), key=len, reverse=True):
        for index, text in enumerate(texts):
            if phrase in text:
                texts[index] = text.replace(phrase, " | ", 1)
                spelled += 1
                break
    return RowScore(rows=len(rows), digits=digits, words=spelled)


def characters_right(*, truth_words: list[str], words: list[str]) -> tuple[int, int]:
    """(characters of truth words read as whole words, all characters of truth words)."""
    found = Counter(_token(w) for w in words)
    right = total = 0
    for word in (_token(w) for w in truth_words):
        if not word:
            continue
        total += len(word)
        if found[word] > 0:
            found[word] -= 1
            right += len(word)
    return right, total
