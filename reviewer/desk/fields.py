"""The fields of a document as people read them: each field's value, label, proofs, rules and notes, as plain
data. The desk's pages, the audit's and the API's answers are built from these, so they say the same thing."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import quote

from django.conf import settings

from extraction.doctypes.base import FieldLabels, field_labels
from extraction.doctypes.registry import UnknownDocumentType, get_doctype
from extraction.doctypes.selectors import extraction_doctype
from extraction.models import Document, Extraction
from extraction.rules.involved import field_and_holders
from reviewer.desk import selectors
from reviewer.desk import services as review


def fid(path: str) -> str:
    """An HTML id for a field path ('rows[3].votes' -> 'f-rows-3-votes')."""
    return "f-" + re.sub(r"[^A-Za-z0-9]+", "-", path).strip("-")


# --- labels ------------------------------------------------------------------------------------------


def labels_for(extraction: Extraction | None, groups=None) -> FieldLabels:
    """path -> label for people, from the document type (paths it does not name read as words)."""
    if extraction is None or not isinstance(extraction.answer, dict):
        return FieldLabels()
    if groups is None:
        try:
            groups = get_doctype(extraction.doctype, extraction.doctype_version).field_groups(extraction.answer)
        except UnknownDocumentType:
            return FieldLabels()
    return field_labels(groups)


def in_words(text: str, paths, labels: FieldLabels) -> str:
    """A rule's message with the field paths it names replaced by their labels, and their keys written alone
    by their own labels; a path inside a longer word ('date' in 'dated') is left alone. The stored message
    (what the model is told) keeps the paths."""
    paths = sorted(set(paths or []), key=len, reverse=True)
    for path in paths:
        if path and path in text:
            text = re.sub(rf"(?<![\w.\]]){re.escape(path)}(?![\w\[])", lambda m, p=path: labels.of(p), text)
    # a rule may name the field by its key alone ('votes_words cite a line of party PFV'): a key no person
    # writes (it has an underscore) reads as the field's own label, its column's in a table ('votes in words')
    for path in paths:
        key = path.rpartition(".")[2]
        if "_" in key and "[" not in key and key in text:
            own = labels.of(path).rpartition(": ")[2]
            text = re.sub(rf"(?<![\w.\]]){re.escape(key)}(?![\w\[])", lambda m, w=own: w, text)
    return text


# --- the fields pane ---------------------------------------------------------------------------------


def boxes_attr(proofs: list[dict]) -> str:
    """'page:left,top,width,height;...' for the page pane's JavaScript to draw."""
    out = []
    for p in proofs or []:
        b = p.get("bbox")
        if b:
            out.append(f"{int(p.get('page') or 1)}:{b['left']:.5f},{b['top']:.5f},{b['width']:.5f},{b['height']:.5f}")
    return ";".join(out)


def typed_values(*, extraction: Extraction, fields: dict, paths) -> dict[str, tuple[int | None, str, bool]]:
    """The fields among `paths` whose value a reviewer typed (not taken from the page), by path: (who typed
    it: their id and name, and whether the field's proof is still the one of the value it replaced). Read from
    the review events since the extraction ran; one query, none when no field was corrected."""
    from extraction.models import ReviewEvent

    corrected = [p for p in paths if (fv := fields.get(p)) is not None and fv.corrected]
    if not corrected or extraction.document_id is None:
        return {}
    events = ReviewEvent.objects.filter(document_id=extraction.document_id, field__in=corrected,
                                        kind__in=(ReviewEvent.Kind.EDIT, ReviewEvent.Kind.PROOF))
    if extraction.started_at is not None:  # a run's start: events before it were about another reading
        events = events.filter(created_at__gte=extraction.started_at)
    events = events.order_by("created_at", "id").values_list("field", "kind", "note", "user_id", "user__username")
    out: dict[str, tuple[int | None, str, bool]] = {}
    for path, kind, note, user_id, username in events:
        if kind == ReviewEvent.Kind.EDIT:
            if note == review.TYPED:
                out[path] = (user_id, username or "a reviewer", True)
            else:  # taken from the page: the value has its own proof now
                out.pop(path, None)
        elif path in out:  # the proof was moved by hand: the box is no longer the old value's
            out[path] = (*out[path][:2], False)
    return out


def _typed_note(typed: tuple[int | None, str, bool] | None, user, has_proof: bool) -> tuple[str, str] | None:
    """What the proof head says of a typed value, in the words of the person reading it."""
    if typed is None:
        return None
    user_id, name, old = typed
    who = "You typed this value" if user is not None and user_id == user.pk else f"Typed by {name}"
    if not has_proof:
        return ("info typed", f"{who}; it was not taken from the page, so it has no proof box.")
    if old:
        return ("old", f"{who}; it was not taken from the page. The box shows the old proof, where the value it "
                       "replaced was read.")
    return ("info typed", f"{who}; its proof was then picked on the page by hand.")


def _notes(fv, label: str, value: Any, ungrounded: list, can_edit: bool,
           typed: tuple[str, str] | None = None) -> list[tuple[str, str]]:
    notes = [typed] if typed else []
    if value is not None and (fv is None or not fv.proofs):
        hint = " Pick its text on the page (click a word or line, or Shift-drag a box) to give it one." if can_edit else ""
        notes.append(("bad", f"{label} has no proof: the value was not found on the page.{hint}"))
    if fv is not None and fv.corrected:
        notes.append(("info", f"Corrected by a reviewer; the model said {json.dumps(fv.model_value, ensure_ascii=False)}."))
    for v in ungrounded:
        notes.append(("bad", f"Ungrounded: the cited text reads {json.dumps(v.found, ensure_ascii=False)}, "
                             f"which does not show {json.dumps(value, ensure_ascii=False)}."))
    return notes


def field_items(document: Document, extraction: Extraction | None, violations: list, *, can_edit: bool,
                fields: dict | None = None, only: str | None = None, user=None
                ) -> tuple[list[dict], dict[str, str], dict[str, dict]]:
    """The schema's groups with each field's value, rules, proofs and notes; the labels; the items by path.
    With `only`, just that field's item (one FieldValue read): an edit form needs no more. `user`: who reads
    the desk (a value they typed says "You")."""
    answer = extraction.answer if extraction is not None else None
    if extraction is None or not answer:
        return [], {}, {}
    try:
        doctype = extraction_doctype(extraction=extraction, batch=document.batch)
    except UnknownDocumentType:
        return [], {}, {}
    groups_raw = doctype.field_groups(answer)
    labels = field_labels(groups_raw)
    if only is not None:
        fv = selectors.field_value(extraction=extraction, path=only)
        fields = {only: fv} if fv is not None else {}
    fields = fields if fields is not None else selectors.desk_fields(extraction=extraction)
    by_path: dict[str, dict] = {}
    make = cell_maker(violations, labels=labels, fields=fields, can_edit=can_edit, user=user,
                       typed=typed_values(extraction=extraction, fields=fields, paths=fields))

    def item(fi) -> dict:
        by_path[fi.path] = out = make(fi)
        return out

    if only is not None:
        for group in groups_raw:
            for fi in group.fields:
                if fi.path == only:
                    return [], labels, {only: item(fi)}
        return [], labels, {}
    groups = []
    for group in groups_raw:
        groups.append({
            "name": group.name, "is_table": group.is_table, "columns": group.columns,
            "fields": [item(fi) for fi in group.fields] if not group.is_table else [],
            "rows": [{"label": label, "cells": [item(fi) for fi in row]}
                     for label, row in zip(group.row_labels, group.rows, strict=False)],
        })
    return groups, labels, by_path


def cell_maker(violations: list, *, labels: FieldLabels, fields: dict, can_edit: bool, user=None,
                typed: dict | None = None):
    """A function building one field's item (what its cell shows) from the rows given here. What a cell reads
    of a broken rule is `_rule_in_cells`, and of the rules involving it `_rules_shown`: an edit's response
    compares only those. `typed`: `typed_values` of the fields built."""
    typed = typed or {}
    rules_of = rules_by_field(violations)

    def item(fi) -> dict:
        fv = fields.get(fi.path)
        rules = rules_of(fi.path)
        label = labels.get(fi.path, fi.label)
        rule_labels = sorted({v.label for v in rules})
        ungrounded = [v for v in rules if v.code == "value_grounded" and fi.path in (v.fields or [])]
        proofs = fv.proofs if fv else []
        typed_by = typed.get(fi.path)
        notes = _notes(fv, label, fi.value, ungrounded, can_edit, _typed_note(typed_by, user, bool(proofs)))
        return {
            "path": fi.path, "id": fid(fi.path), "q": quote(fi.path, safe=""), "label": label, "short": fi.label,
            "value": fi.value, "fv": fv, "rules": rules, "rule_labels": rule_labels, "rules_text": "; ".join(rule_labels),
            "confidence": round(fv.confidence * 100) if fv and fv.confidence is not None else None,
            # how far the value can be trusted (extraction/confidence/model.py); marked when under the desk's bar
            "trust": trust_percent(fv), "trust_low": _unsure(fv),
            "no_proof": fi.value is not None and not proofs, "ungrounded": bool(ungrounded),
            "corrected": bool(fv and fv.corrected), "boxes": boxes_attr(proofs),
            # the boxes are the proof of a value since typed over: shown as old
            "old_proof": bool(typed_by and typed_by[2] and proofs),
            "proof_pages": sorted({int(p.get("page") or 1) for p in proofs or []}),
            "notes": notes, "notes_json": json.dumps(notes, ensure_ascii=False) if notes else "",
        }

    return item


def rules_by_field(violations: list):
    """A function giving the broken rules that involve a field, by its path, in the order given."""
    named = [(v, set(v.fields or [])) for v in violations]  # each rule's names, read once for every field

    def rules_of(path: str) -> list:
        holders = field_and_holders(path)
        return [v for v, names in named if not holders.isdisjoint(names)]

    return rules_of


def _unsure(fv) -> bool:
    """Under the desk's bar, and not set by a person: a corrected value is what the reviewer read, so the
    model's confidence in its own reading no longer speaks for it."""
    return bool(fv and not fv.corrected and fv.field_confidence is not None
                and fv.field_confidence < settings.DESK_LOW_CONFIDENCE)


def trust_percent(fv) -> int | None:
    """The field's confidence in whole percent, never shown as 100 (nothing is certain) nor 0."""
    if fv is None or fv.field_confidence is None:
        return None
    return min(99, max(1, round(fv.field_confidence * 100)))


def least_sure(fields, *, limit: int = 8) -> list[dict]:
    """The fields under the desk's bar, least trusted first (then in page order): where to look first.
    `fields`: (path, label, FieldValue or None) in page order."""
    low = [(fv.field_confidence, i, path, label, fv) for i, (path, label, fv) in enumerate(fields) if _unsure(fv)]
    low.sort(key=lambda entry: entry[:2])
    return [{"path": path, "label": label, "trust": trust_percent(fv)} for _, _, path, label, fv in low[:limit]]
