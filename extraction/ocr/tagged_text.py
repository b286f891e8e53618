"""The tagged rendering of a document that the LLM reads (pure)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class PromptDocument:
    """Text for the model plus the maps from its short ids back to OcrBlock ids.

    Only LINE and TABLE blocks carry short ids in the text (`L12`, `T3`); a WORD is
    named through its LINE and its text, a CELL through its TABLE with row/column.
    """

    text: str
    line_ids: dict[int, str] = field(default_factory=dict)  # short LINE id -> OcrBlock.id
    table_ids: dict[int, str] = field(default_factory=dict)  # short TABLE id -> OcrBlock.id
