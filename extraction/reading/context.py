"""The one place that builds what rules read besides the answer (pure): a document's reading as a RuleContext.

A run of the loop, a re-read without the database and a reviewer's edit on the desk must judge an answer
alike: the same prompt ids, the same blocks, proofs checked exactly when the model read the OCR text, numbers
read the document type's way, a field's row found by the type's label. Each builds its context here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from extraction.ocr.blocks import OcrBlock, OcrPage
from extraction.ocr.tagged_text import PromptDocument
from extraction.reading.prompt import render_prompt
from extraction.rules.violations import RuleContext

if TYPE_CHECKING:
    from extraction.doctypes.base import DocumentType

__all__ = ["INPUT_MODES", "reading_context"]

# What the reader was given: the OCR text (`text`), page images (`vision`), both (`hybrid`), or the OCR read
# by the type's own offline reader without a model (`ocr`). Only a reader of the text can cite its ids.
INPUT_MODES = ("text", "vision", "hybrid", "ocr")
_READS_TEXT = frozenset({"text", "hybrid", "ocr"})


def reading_context(*, doctype: DocumentType, input_mode: str, pages: Sequence[OcrPage] = (),
                    prompt: PromptDocument | None = None, blocks: list[OcrBlock] | None = None,
                    cache: dict[str, Any] | None = None) -> RuleContext:
    """The context of a document read in `input_mode`: from its `pages`, or from the `prompt` and `blocks`
    already built from them. `cache` is a kept context's derived data (the desk keeps it per document)."""
    if input_mode not in INPUT_MODES:
        raise ValueError(f"unknown input mode {input_mode!r}; known: {', '.join(INPUT_MODES)}")
    if prompt is None:
        prompt = render_prompt(list(pages))
    if blocks is None:
        blocks = [b for p in pages for b in p.blocks]
    return RuleContext(prompt=prompt if input_mode in _READS_TEXT else None, page_prompt=prompt, blocks=blocks,
                       word_numbers=doctype.word_numbers, row_anchor=doctype.row_anchor,
                       cache={} if cache is None else cache)
