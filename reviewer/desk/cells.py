"""A field's cell on the desk, written out in Python rather than in the template language.

The fields pane shows a hundred cells, and an edit that mends or breaks a sum sends its forty cells back: through
the template engine those cells cost more than the rest of the edit together. Every text here (the value a
model read, the labels, the notes quoting OCR text) is escaped; the value as the template engine would show it.
"""

from __future__ import annotations

from html import escape
from typing import Any

from django.template.base import render_value_in_context
from django.utils.safestring import SafeString, mark_safe


def _e(text: Any) -> str:
    return escape(str(text), quote=True)


def cell_html(f: dict[str, Any], *, context, desk_url: str, edit_url: str, can_edit: bool, oob: bool) -> SafeString:
    """The cell of the field item `f` (`presenters.desk._cell_maker`): its value linked to its proof boxes,
    its marks, and the pencil when the user may edit; `oob` for a cell an edit's response swaps in by id."""
    label, rules_text, q, cell_id = _e(f["label"]), _e(f["rules_text"]), _e(f["q"]), _e(f["id"])
    value = None if f["value"] is None else render_value_in_context(f["value"], context)
    flagged, unsure = bool(f["rules"]), f["trust_low"]
    out = [
        f'<span class="cell{" flagged" if flagged else ""}{" unsure" if unsure else ""}" id="{cell_id}"',
        ' hx-swap-oob="true">' if oob else ">",
        f'\n  <a class="field" href="{_e(desk_url)}?field={q}" data-path="{_e(f["path"])}" data-label="{label}"'
        f'\n     data-boxes="{_e(f["boxes"])}"',
        f' data-notes="{_e(f["notes_json"])}"' if f["notes_json"] else "",
        ' data-old="1"' if f.get("old_proof") else "",
        f'\n     aria-label="{label}: {"empty" if value is None else value}',
        f'; broken: {rules_text}" title="{rules_text}">' if flagged else '">',
        '\n    <span class="value">', '<em class="muted">empty</em>' if value is None else value, "</span>",
    ]
    if flagged:
        out.append('\n    <span class="mark" aria-hidden="true">⚠</span>')
    if f["no_proof"]:
        out.append('\n    <span class="tag bad">no proof</span>')
    elif f["ungrounded"]:
        out.append('\n    <span class="tag bad">ungrounded</span>')
    if f["corrected"]:
        out.append('\n    <span class="tag info">corrected</span>')
    # One figure beside the value: the trust when it is low (what a reviewer acts on), else the OCR's. A title
    # says what each means, so "100%" of clear print is never read as a sure value.
    if unsure:
        ocr = "" if f["confidence"] is None else (
            f' The OCR read its words at {_e(f["confidence"])}% confidence: clear print, not a right value.')
        out.append(f'\n    <span class="trust low" title="How far this value can be trusted, from its proof, the rules'
                   f' and the OCR: check it on the page.{ocr}">{_e(f["trust"])}% sure</span>')
    elif f["confidence"] is not None:
        out.append(f'\n    <span class="conf" title="OCR confidence: how clearly the engine read the cited words,'
                   f' not whether the value is right">OCR {_e(f["confidence"])}%</span>')
    out.append("\n  </a>")
    if can_edit:
        out.append(f'\n  <a class="edit-link" href="{_e(desk_url)}?edit={q}" hx-get="{_e(edit_url)}?field={q}"'
                   f'\n     hx-include="#doc-version" hx-target="#{cell_id}" hx-swap="outerHTML" aria-label="Edit {label}"'
                   ' title="Edit (e)" tabindex="-1">✎</a>')
    out.append("\n</span>")
    return mark_safe("".join(out))  # noqa: S308 - every text above is escaped
