"""Proof resolution and the two universal proof rules (pure).

A proof names a LINE or TABLE by the short id of the prompt, a WORD through its LINE and its text, a CELL
through its TABLE, row and column. Resolution finds the OcrBlocks: the cited id first; for a WORD the exact
text among the line's words, then a fuzzy match among them, then among the words of the line's page; for a
CELL the cell at (row, column), checked against the value it claims to hold. Then the words that show the
value (extraction/proofs/words.py): a number as the words of its page row print it (extraction/ocr/page_rows.py),
and where the cited block shows the value more than once, the occurrence on the row of the field's label
(`RuleContext.anchor`). The loop, the desk's boxes and picks and the annotated page all resolve here.

Every document type gets two rules: `proof_found` (a value has a proof that resolves) and
`value_grounded` (the cited text supports the value).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pydantic
from rapidfuzz import fuzz

from extraction.ocr.blocks import OcrBlock
from extraction.ocr.tagged_text import PromptDocument
from extraction.proofs.blocks import BlockIndex, ResolvedProof, resolved
from extraction.proofs.grounding import supports
from extraction.proofs.refs import CellProof, LineProof, ProofRef, TableProof, WordProof
from extraction.proofs.words import narrow_to_words, on_label_row, page_rows
from extraction.rules.answers import iter_fields
from extraction.rules.violations import Rule, RuleContext, Violation
from extraction.values.numbers import fold

__all__ = [
    "FUZZY_MIN",
    "block_index",
    "describe_proof",
    "resolve_field",
    "resolve_path",
    "resolve_proof",
    "resolve_proofs",
    "universal_rules",
]

FUZZY_MIN = 80  # rapidfuzz ratio (0..100) for a loose WORD/CELL reference to count as found

_REF = pydantic.TypeAdapter(ProofRef)


def _norm(text: str) -> str:
    return " ".join(fold(text).split()).strip(".,;:")


def _match_spans(value: str, words: list[OcrBlock], *, allow_fuzzy: bool, every: bool = False) -> list[list[OcrBlock]]:
    """Runs of consecutive words that read `value`: the first exact one (every exact one with `every`), else
    (optionally) the best fuzzy run; each word with the score it was found by."""
    target = _norm(value)
    if not target or not words:
        return []
    size = len(target.split())
    squashed = target.replace(" ", "")
    sizes = sorted({max(1, size - 1), size, size + 1})
    exact: list[list[OcrBlock]] = []
    for n in sizes:
        for i in range(len(words) - n + 1):
            span = words[i : i + n]
            text = _norm(" ".join(w.text for w in span))
            if text == target or (n != size and text.replace(" ", "") == squashed):
                exact.append(span)
                if not every:
                    return exact
    if exact or not allow_fuzzy or len(squashed) < 3:
        return exact  # a fuzzy match on one or two characters would find anything
    best: tuple[float, list[OcrBlock]] = (0.0, [])
    for n in sizes:
        for i in range(len(words) - n + 1):
            span = words[i : i + n]
            score = fuzz.ratio(target, _norm(" ".join(w.text for w in span)))
            if score > best[0]:
                best = (score, span)
    return [best[1]] if best[0] >= FUZZY_MIN else []


def _match_span(value: str, words: list[OcrBlock], *, allow_fuzzy: bool) -> list[ResolvedProof]:
    """The run of consecutive words that reads `value`: exact first, then (optionally) the best fuzzy run."""
    spans = _match_spans(value, words, allow_fuzzy=allow_fuzzy)
    return _as_found(spans[0], value) if spans else []


def _as_found(span: list[OcrBlock], value: str) -> list[ResolvedProof]:
    target, text = _norm(value), _norm(" ".join(w.text for w in span))
    if text == target or text.replace(" ", "") == target.replace(" ", ""):
        return [resolved(w, w.text, "exact", 1.0) for w in span]
    return [resolved(w, w.text, "fuzzy", fuzz.ratio(target, text) / 100) for w in span]


def _resolve_word(ref: WordProof, prompt: PromptDocument, index: BlockIndex, ctx: RuleContext,
                  anchor: str | None) -> list[ResolvedProof]:
    line = index.by_id.get(prompt.line_ids.get(ref.line, ""))
    if line is not None:
        words = index.words_of(line.id)
        if words:
            found = _match_span(ref.value, words, allow_fuzzy=True)
            if found:
                return found
        else:  # an engine without WORD blocks: the line itself holds the word
            target, text = _norm(ref.value), _norm(line.text)
            if target and target in text:
                return [resolved(line, line.text, "exact", 1.0)]
            score = fuzz.partial_ratio(target, text) if len(target) >= 3 else 0
            if score >= FUZZY_MIN:
                return [resolved(line, line.text, "fuzzy", score / 100)]
        pages = [line.page]
    else:
        pages = sorted(index.words_by_page)
    for page in pages:
        spans = _match_spans(ref.value, index.words_by_page.get(page, []), allow_fuzzy=True, every=True)
        if spans:
            # the occurrence on the field's own row; found away from the cited line: never better than fuzzy
            span = on_label_row(spans, page_rows(index, page, ctx), anchor)
            return [replace(f, method="fuzzy", score=min(f.score, 0.99)) for f in _as_found(span, ref.value)]
    return []


def _resolve_cell(ref: CellProof, prompt: PromptDocument, index: BlockIndex) -> list[ResolvedProof]:
    table = index.by_id.get(prompt.table_ids.get(ref.table, ""))
    if table is None:
        return []
    cell = index.cell_at(table.id, ref.row, ref.column)
    if ref.value is None or not ref.value.strip():
        return [resolved(cell, index.text_of(cell), "id", 1.0)] if cell else []
    target = _norm(ref.value)
    if cell is not None:
        text = index.text_of(cell)
        if _norm(text) == target or target in _norm(text):
            return [resolved(cell, text, "id", 1.0)]
        score = fuzz.ratio(target, _norm(text))
        if score >= FUZZY_MIN:
            return [resolved(cell, text, "id", score / 100)]
    # The model may have miscounted rows or columns: look for the value in the other cells of the table.
    cells = index.cells_of(table.id)
    for c in cells:
        text = index.text_of(c)
        if _norm(text) == target:
            return [resolved(c, text, "exact", 1.0)]
    if len(target.replace(" ", "")) >= 3:
        scored = [(fuzz.ratio(target, _norm(index.text_of(c))), c) for c in cells]
        if scored:
            score, best = max(scored, key=lambda s: s[0])
            if score >= FUZZY_MIN:
                return [resolved(best, index.text_of(best), "fuzzy", score / 100)]
    # The addressed cell exists but holds something else: it is found; grounding will judge the value.
    return [resolved(cell, index.text_of(cell), "id", 0.0)] if cell else []


def resolve_proof(ref: Any, *, prompt: PromptDocument, index: BlockIndex, ctx: RuleContext,
                  anchor: str | None = None) -> list[ResolvedProof]:
    """The blocks one proof item points at (several for a WORD value spanning words); [] if none. A WORD
    looked for away from its line is taken on the row of `anchor`, the label of the field's row."""
    if not isinstance(ref, LineProof | TableProof | WordProof | CellProof):
        try:
            ref = _REF.validate_python(ref)
        except pydantic.ValidationError:
            return []
    if isinstance(ref, LineProof | TableProof):
        ids = prompt.line_ids if isinstance(ref, LineProof) else prompt.table_ids
        block = index.by_id.get(ids.get(ref.id, ""))
        return [resolved(block, index.text_of(block), "id", 1.0)] if block else []
    if isinstance(ref, WordProof):
        return _resolve_word(ref, prompt, index, ctx, anchor)
    return _resolve_cell(ref, prompt, index)


def describe_proof(ref: Any) -> str:
    """'LINE 12', 'WORD "4°C" of LINE 5', 'CELL r2 c4 of TABLE 3'."""
    if not isinstance(ref, dict):
        return str(ref)
    kind = str(ref.get("type", "?")).upper()
    if kind in ("LINE", "TABLE"):
        return f"{kind} {ref.get('id')}"
    if kind == "WORD":
        return f"WORD {json.dumps(ref.get('value'), ensure_ascii=False)} of LINE {ref.get('line')}"
    if kind == "CELL":
        return f"CELL row {ref.get('row')} column {ref.get('column')} of TABLE {ref.get('table')}"
    return json.dumps(ref, ensure_ascii=False, default=str)


def block_index(ctx: RuleContext) -> BlockIndex:
    """The context's BlockIndex, built once."""
    if "block_index" not in ctx.cache:
        ctx.cache["block_index"] = BlockIndex(ctx.blocks)
    return ctx.cache["block_index"]


def _memo_key(ref: Any, value: Any, anchor: str | None) -> Any:
    """A proof, the value it must show and the label of the field's row, as a dict key: a tuple for the flat
    refs the prompt asks for (each item's type kept, so 1, 1.0 and True differ as they do in JSON), JSON for
    anything else."""
    if isinstance(ref, dict):
        try:
            key = (type(value), value, anchor, tuple((k, type(v), v) for k, v in sorted(ref.items())))
            hash(key)
            return key
        except TypeError:  # something unhashable (a list, a dict) or keys that do not sort
            pass
    return json.dumps([ref, value, anchor], sort_keys=True, default=str)


def resolve_field(node: dict[str, Any], ctx: RuleContext, *, anchor: str | None = None) -> list[ResolvedProof]:
    """Resolve a proved field's proofs in a rule context (memoised, so rules share work).

    A cited LINE, CELL or WORD resolves to the words that show the value (see `narrow_to_words`), on the
    row of `anchor` (the label of the field's row, `RuleContext.anchor`) where the block shows the value more
    than once, so the desk boxes the value itself and `value_grounded` judges those words.
    """
    if ctx.prompt is None:
        return []
    held = ctx.answer_memo.get(id(node)) if ctx.answer_memo is not None else None
    if held is not None and held[0] is node:
        return list(held[1])
    out = _resolve_field(node, ctx, anchor)
    if ctx.answer_memo is not None:
        ctx.answer_memo[id(node)] = (node, out)
    return list(out)


def resolve_path(answer: dict[str, Any], path: str, node: dict[str, Any], ctx: RuleContext) -> list[ResolvedProof]:
    """The proofs of the field at `path` of `answer`, resolved on the row of the field's label."""
    return resolve_field(node, ctx, anchor=ctx.anchor(answer, path))


def _resolve_field(node: dict[str, Any], ctx: RuleContext, anchor: str | None) -> list[ResolvedProof]:
    """A field's proofs resolved, kept in the context by its value, proofs and row label, which alone decide
    them: each check reads the answer afresh, and after an edit every field but one reads as before. `repr`
    tells 1, 1.0 and True apart, as JSON does."""
    memo: dict[Any, list[ResolvedProof]] = ctx.cache.setdefault("resolved", {})
    key = ("field", repr(node.get("value")), repr(node.get("proof")), anchor)
    if key not in memo:
        memo[key] = _resolve_refs(node, ctx, memo, anchor)
    return memo[key]


def _resolve_refs(node: dict[str, Any], ctx: RuleContext, memo: dict[Any, list[ResolvedProof]],
                  anchor: str | None) -> list[ResolvedProof]:
    value = node.get("value")
    out: list[ResolvedProof] = []
    seen: set[str] = set()
    for ref in node.get("proof") or []:
        key = _memo_key(ref, value, anchor)
        if key not in memo:
            index = block_index(ctx)
            found = resolve_proof(ref, prompt=ctx.prompt, index=index, ctx=ctx, anchor=anchor)
            memo[key] = [w for f in found for w in narrow_to_words(f, value, index=index, ctx=ctx, anchor=anchor)]
        found_now = memo[key]
        if found_now and all(f.block_id in seen for f in found_now):
            # the same word cited again ("CERO OCHO CERO CINCO"): its next occurrence, not the first twice
            found_now = _next_occurrence(ref, value, ctx, anchor, seen) or found_now
        for found in found_now:
            if found.block_id not in seen:
                seen.add(found.block_id)
                out.append(found)
    return out


def _next_occurrence(ref: Any, value: Any, ctx: RuleContext, anchor: str | None,
                     cited: set[str]) -> list[ResolvedProof]:
    """A WORD cited again on its line: the first of its exact occurrences on that line, in reading order, that
    the proof has not cited yet (a WORD names its text, not its place, so a repeated word resolves to the
    first one each time); [] when there is none."""
    try:
        ref = ref if isinstance(ref, WordProof) else _REF.validate_python(ref)
    except pydantic.ValidationError:
        return []
    if not isinstance(ref, WordProof) or ctx.prompt is None:
        return []
    index = block_index(ctx)
    line = index.by_id.get(ctx.prompt.line_ids.get(ref.line, ""))
    if line is None:
        return []
    for span in _match_spans(ref.value, index.words_of(line.id), allow_fuzzy=False, every=True):
        if not any(w.id in cited for w in span):
            return [w for f in _as_found(span, ref.value)
                    for w in narrow_to_words(f, value, index=index, ctx=ctx, anchor=anchor)]
    return []


def resolve_proofs(answer: dict[str, Any], ctx: RuleContext) -> dict[str, list[ResolvedProof]]:
    """Every proved field of the answer -> the blocks its proofs point at (an empty list when none)."""
    return {path: resolve_path(answer, path, node, ctx) for path, node in iter_fields(answer)}


# --- the two universal rules -------------------------------------------------------------------------


def _has_value(value: Any) -> bool:
    return value is not None and not (isinstance(value, str) and not value.strip())


def _proof_found(answer: dict[str, Any], ctx: RuleContext) -> list[Violation]:
    if ctx.prompt is None:  # the model saw no tagged text: nothing it could have cited
        return []
    out = []
    for path, node in iter_fields(answer):
        if not _has_value(node.get("value")):
            continue
        refs = node.get("proof") or []
        if not refs:
            out.append(
                Violation(
                    code="proof_found",
                    fields=(path,),
                    expected="at least one proof",
                    found="no proof",
                    message=f"{path}: the value {json.dumps(node['value'], ensure_ascii=False)} has no "
                    "proof; cite the LINE, WORD, CELL or TABLE it was read from",
                )
            )
        elif not resolve_path(answer, path, node, ctx):
            cited = "; ".join(describe_proof(r) for r in refs)
            out.append(
                Violation(
                    code="proof_found",
                    fields=(path,),
                    expected="a proof that exists in the document",
                    found=cited,
                    message=f"{path}: its proof ({cited}) points at nothing in the document; cite ids that "
                    "appear in the text and copy WORD values exactly",
                )
            )
    return out


def _shorten(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _grounded(value: Any, found: list[ResolvedProof], *, word_numbers: bool) -> bool:
    """The words a proof narrowed to show the value by construction; a number is never shown by a block
    whose words all failed to show it (its text would join numbers of several rows); anything else is
    judged on the cited text."""
    if any(f.shows_value for f in found):
        return True
    text = " ".join(f.text for f in found if f.shows_value is not False)
    return bool(text) and supports(value, text, word_numbers=word_numbers)


def _quoted(found: list[ResolvedProof]) -> str:
    """What a value_grounded violation says the cited text reads: exactly what was judged. A number's blocks
    as they were read, each apart (" | ": a number is not read across two cited blocks); other values' text
    as one."""
    if any(f.reading is not None for f in found):
        return " | ".join(f.reading if f.reading is not None else f.text for f in found)
    return " ".join(f.text for f in found)


def _value_grounded_rule(*, word_numbers: bool) -> Rule:
    def value_grounded(answer: dict[str, Any], ctx: RuleContext) -> list[Violation]:
        if ctx.prompt is None:
            return []
        out = []
        # Kept beside the resolutions, by what alone decides it: a check after an edit meets every other
        # field as it was. None: shown (or no proof, which proof_found reports); else the cited text.
        memo = ctx.cache.setdefault("resolved", {})
        for path, node in iter_fields(answer):
            value = node.get("value")
            if not _has_value(value):
                continue
            anchor = ctx.anchor(answer, path)
            key = ("grounded", word_numbers, repr(value), repr(node.get("proof")), anchor)
            if key not in memo:
                found = resolve_field(node, ctx, anchor=anchor)
                memo[key] = (None if not found or _grounded(value, found, word_numbers=word_numbers)
                             else _quoted(found))
            text = memo[key]
            if text is None:
                continue
            shown = json.dumps(value, ensure_ascii=False)
            out.append(
                Violation(
                    code="value_grounded",
                    fields=(path,),
                    expected=value if isinstance(value, int | float | str) else shown,
                    found=_shorten(text),
                    message=f'{path}: the answer says {shown} but the cited text reads "{_shorten(text)}", '
                    "which does not show that value",
                )
            )
        return out

    return value_grounded


def universal_rules(*, word_numbers: bool = False) -> list[Rule]:
    """The proof rules every document type gets, after its own rules."""
    return [_proof_found, _value_grounded_rule(word_numbers=word_numbers)]
