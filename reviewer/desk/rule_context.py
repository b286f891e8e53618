"""A document's rule context for the desk's edits, its OCR side built once per process.

Every edit runs every rule again over the whole answer; what the rules read besides the answer (the pages'
blocks, the prompt's short ids, the block index, proofs already resolved, the acta's visual rows) depends on
the document's blocks only, and rebuilding it took most of an edit's time. So it is kept here, per document,
and reused while the blocks stay the same.

Why a kept context can not be stale: stored blocks are never changed in place; a re-read deletes the
document's pages (and with them their blocks) and stores new rows with new primary keys
(`pipeline.document_read`). Every use first reads the count and the first and last primary key of the
document's blocks (one query) and compares them, with the document's creation time, the extraction and its
type, to the kept entry's; any difference builds the context afresh. Proofs resolved for one answer stay valid
for the next: `RuleContext.cache` holds only what the blocks decide (the validation loop already shares one
context across its rounds).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from extraction.doctypes.base import DocumentType
from extraction.models import Block, Document, Extraction
from extraction.ocr.tagged_text import PromptDocument
from extraction.pipeline.extract import ocr_pages_of
from extraction.reading.context import INPUT_MODES, reading_context
from extraction.reading.prompt import render_prompt
from extraction.rules.violations import RuleContext
from extraction.sql_batch import Statement, statements_run

KEPT_DOCUMENTS = 16  # documents whose context a process keeps (a reviewer works on one at a time)
MAX_MEMO = 20_000  # per-field results (resolved proofs, verdicts) kept for one document before it is built afresh


@dataclass
class _Kept:
    key: tuple
    prompt: PromptDocument
    blocks: list
    cache: dict[str, Any]


_kept: OrderedDict[int, _Kept] = OrderedDict()
_lock = threading.Lock()


# Every edit asks this; written out, it skips most of what the ORM spends building the same aggregate.
# The names are the model's own; the document id is a parameter.
_BLOCKS_SEEN = (f"SELECT COUNT(*), MIN({Block._meta.pk.column}), MAX({Block._meta.pk.column}) "  # noqa: S608
                f"FROM {Block._meta.db_table} WHERE {Block._meta.get_field('document').column} = %s")


def blocks_seen_statement(*, document_id: int) -> Statement:
    """The read that tells whether a kept context still holds (`document_rule_context`'s `blocks_seen`),
    to send with others (`sql_batch`)."""
    return _BLOCKS_SEEN, [document_id]


def _key(*, document: Document, extraction: Extraction, doctype_name: str, input_mode: str,
         blocks_seen: tuple | None) -> tuple:
    if blocks_seen is None:
        ((blocks_seen,),) = statements_run(statements=[blocks_seen_statement(document_id=document.pk)])
    n, first, last = blocks_seen
    return (document.created_at, extraction.pk, doctype_name, input_mode, n, first, last)


def extraction_input_mode(extraction: Extraction) -> str:
    """What the extraction's reader was given (`reading_context.INPUT_MODES`), as its run recorded it."""
    mode = (extraction.settings or {}).get("input") or "text"
    return mode if mode in INPUT_MODES else "text"


def document_rule_context(*, document: Document, extraction: Extraction, doctype: DocumentType,
                          blocks_seen: tuple | None = None) -> RuleContext:
    """The rule context of the document's stored blocks, as the extraction's run read them (its input mode:
    `reading_context`), kept per document and built afresh whenever its blocks, extraction or type differ
    from the kept one's. `blocks_seen`: the row of `blocks_seen_statement`, when the caller read it."""
    input_mode = extraction_input_mode(extraction)
    key = _key(document=document, extraction=extraction, doctype_name=doctype.name, input_mode=input_mode,
               blocks_seen=blocks_seen)
    with _lock:
        kept = _kept.get(document.pk)
        if kept is not None and (kept.key != key or len(kept.cache.get("resolved", ())) > MAX_MEMO):
            kept = None
        if kept is not None:
            _kept.move_to_end(document.pk)
    if kept is None:
        pages = ocr_pages_of(document=document)
        kept = _Kept(key=key, prompt=render_prompt(pages), blocks=[b for p in pages for b in p.blocks], cache={})
        with _lock:
            _kept[document.pk] = kept
            _kept.move_to_end(document.pk)
            while len(_kept) > KEPT_DOCUMENTS:
                _kept.popitem(last=False)
    return reading_context(doctype=doctype, input_mode=input_mode, prompt=kept.prompt, blocks=kept.blocks,
                           cache=kept.cache)


def rule_contexts_forget() -> None:
    """Drop every kept context (tests; a process that wants its memory back)."""
    with _lock:
        _kept.clear()
