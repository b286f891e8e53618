"""A proof a reviewer picked on the page: how the answer cites it, in the prompt's terms, and the boxes the desk
draws for it (pure; a block is anything with an OCR block's attributes, such as the desk's Block rows)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from extraction.proofs.blocks import BlockIndex
from extraction.proofs.resolve import block_index, resolve_path
from extraction.rules.answers import get_field
from extraction.rules.violations import RuleContext

PICKED = "reviewer"  # the `method` of a proof a reviewer picked on the page


@dataclass(frozen=True)
class PickedProof:
    refs: list[dict]  # how the answer cites the picks
    boxes: list[dict]  # the words the rules read them as, else the picks themselves
    confidences: list[float]  # the OCR confidence of each box that has one


def picked_proof(blocks: Sequence[Any], *, answer: dict, path: str, located: RuleContext) -> PickedProof:
    """Cite the picked blocks as the proof of the field at `path`, setting it in `answer` (the caller's own
    copy). The boxes are the words the rules read the proof as, resolved as a model's proof is, so the desk
    shows what the rules judged; where nothing resolves, the picks."""
    line_ids = {block_id: short for short, block_id in located.prompt.line_ids.items()}
    table_ids = {block_id: short for short, block_id in located.prompt.table_ids.items()}
    index = block_index(located)
    refs = [_ref(b, line_ids=line_ids, table_ids=table_ids, index=index) for b in blocks]
    target = get_field(answer, path)
    if isinstance(target, dict):
        target["proof"] = refs
    found = resolve_path(answer, path, target, located) if isinstance(target, dict) else []
    if found:
        return PickedProof(refs=refs, boxes=[{**f.to_dict(), "method": PICKED} for f in found],
                           confidences=[c for f in found if (c := index.by_id[f.block_id].confidence) is not None])
    return PickedProof(refs=refs, boxes=[picked_box(b) for b in blocks],
                       confidences=[b.confidence for b in blocks if b.confidence is not None])


def picked_box(block: Any) -> dict:
    """The box of one picked block, as the desk draws a proof."""
    return {"block_id": str(block.pk), "page": block.page.number, "type": block.type, "text": block.text,
            "method": PICKED, "score": 1.0,
            "bbox": {"left": block.left, "top": block.top, "width": block.width, "height": block.height}}


def _ref(block: Any, *, line_ids: dict[str, int], table_ids: dict[str, int], index: BlockIndex) -> dict:
    """How the answer cites a block, in the prompt's terms (LINE and TABLE by short id, WORD through its
    LINE, CELL through its TABLE), so that the rules resolve the proof the reviewer picked as they resolve a
    model's: a word or line inside a table (the prompt shows the table, not its lines) through the cell
    holding it."""
    key = str(block.pk)
    if block.type == "LINE" and key in line_ids:
        return {"type": "LINE", "id": line_ids[key]}
    if block.type == "TABLE" and key in table_ids:
        return {"type": "TABLE", "id": table_ids[key]}
    parent = str(block.parent_id or "")
    if block.type == "CELL" and parent in table_ids and block.row is not None and block.column is not None:
        return {"type": "CELL", "table": table_ids[parent], "row": block.row, "column": block.column,
                "value": block.text}
    if block.type == "WORD" and parent in line_ids:
        return {"type": "WORD", "line": line_ids[parent], "value": block.text}
    cell = _cell_holding(block, index=index, table_ids=table_ids)
    if cell is not None:
        return {"type": "CELL", "table": table_ids[cell.parent], "row": cell.row, "column": cell.column,
                "value": block.text}
    return {"type": "WORD", "line": 0, "value": block.text}  # found by its text, on the field's row


def _cell_holding(block: Any, *, index: BlockIndex, table_ids: dict[str, int]) -> Any:
    """The smallest cell of a prompt table that holds the block's centre, or None."""
    x, y = block.left + block.width / 2, block.top + block.height / 2
    cells = [c for table in table_ids for c in index.cells_of(table)
             if c.page == block.page.number and c.bbox.left <= x <= c.bbox.right and c.bbox.top <= y <= c.bbox.bottom]
    return min(cells, key=lambda c: c.bbox.width * c.bbox.height, default=None)
