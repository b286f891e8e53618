"""What the desk shows, built from the stored rows: the fields pane, the triage of broken rules, the page.

Everything a field click needs (its label, its proof boxes, its notes) is written on the field's link, so
highlighting a proof costs no request; the page pane carries the page's WORD and LINE boxes so that a
reviewer can take a value from the page.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from functools import lru_cache
from html import escape
from typing import Any

from django.conf import settings
from django.urls import get_script_prefix, reverse
from django.utils.safestring import SafeString, mark_safe

from extraction.doctypes.base import FieldLabels, field_labels, lower_first
from extraction.doctypes.registry import UnknownDocumentType
from extraction.doctypes.selectors import extraction_doctype
from extraction.models import Document, Extraction, Page
from extraction.rules.involved import field_and_holders, involved_paths
from extraction.states import ReviewStatus, Status
from reviewer.desk import presence, selectors
from reviewer.desk import services as review
from reviewer.desk.events import event_words
from reviewer.desk.fields import (
    boxes_attr,
    cell_maker,
    fid,
    field_items,
    in_words,
    labels_for,
    least_sure,
    rules_by_field,
    typed_values,
)
from reviewer.desk.permissions import desk_permissions
from reviewer.whole_numbers import whole_number

# What a document's state means to a person on the desk (the pill): (css class, words).
_DECIDED = {ReviewStatus.VERIFIED.value: "verified", ReviewStatus.CORRECTED.value: "corrected",
            ReviewStatus.REJECTED.value: "rejected"}


def display_status(document: Document) -> tuple[str, str]:
    """The pill: a flagged document a reviewer decided shows the decision, not 'flagged'."""
    if document.status == Status.FLAGGED.value:
        if document.review_status in _DECIDED:
            return _DECIDED[document.review_status], _DECIDED[document.review_status]
        return "flagged", "needs review"
    return document.status, document.status


# --- the desk page and its panes --------------------------------------------------------------------


def selection(violations: list, items: dict[str, dict], *, path: str | None, violation_id: str | None
              ) -> tuple[list[dict], Any, str | None]:
    """The fields whose proofs are highlighted: one field, or every field a rule involves."""
    wanted = whole_number(violation_id)
    if wanted is not None:
        violation = next((v for v in violations if v.id == wanted), None)
        if violation is not None:
            return [items[p] for p in involved_paths(violation.fields, items)], violation, None
    if path and path in items:
        return [items[path]], None, path
    return [], None, None


def stage_context(*, pages: dict[int, Page], chosen: list[dict], page_number: int | None) -> dict[str, Any]:
    """The page to show (the first page of the selection's proofs unless asked) and its layers."""
    proof_pages = sorted({n for it in chosen for n in it["proof_pages"]})
    if page_number not in pages:
        page_number = proof_pages[0] if proof_pages else (min(pages) if pages else None)
    page = pages.get(page_number) if page_number else None
    return {
        "page": page, "pages": pages, "page_number": page_number, "proof_pages": proof_pages,
        "ocr_layer": ocr_layer(page) if page else "", "proof_rects": proof_rects(page, chosen) if page else "",
    }


def desk_context(*, user, document: Document, field: str | None = None, violation: str | None = None,
                 page: int | None = None, with_page: bool = False, editing: str | None = None,
                 edit_error: str | None = None, edit_raw: str | None = None, focus: str | None = None,
                 decision_error: str | None = None, note: str = "", show_note: bool = False,
                 current: Extraction | None = None, fields: dict | None = None,
                 stored: list | None = None) -> dict[str, Any]:
    """Everything the desk shows; the page pane (its pages and blocks) only for the whole page. `current`,
    `fields` and `stored`: the document's current extraction, its FieldValues by path and its Violation rows
    (labelled), when the caller holds them as stored (an edit just saved them)."""
    extraction = current if current is not None else Extraction.objects.current_for(document)
    if current is not None and stored is not None:
        violations = stored
    else:
        violations = selectors.desk_violations(extraction=extraction) if extraction else []
    perms = desk_permissions(user=user, document=document)
    groups, labels, items = field_items(document, extraction, violations, can_edit=perms["can_edit"],
                                        fields=fields if current is not None else None, user=user)
    chosen, selected_violation, selected_path = selection(violations, items, path=field, violation_id=violation)
    stage = stage_context(pages=selectors.document_pages(document=document), chosen=chosen,
                          page_number=page) if with_page else {}
    bars = _bars(document=document, extraction=extraction, violations=violations, labels=labels,
                 shorts={path: it["short"] for path, it in items.items()},
                 unsure=((path, it["label"], it["fv"]) for path, it in items.items()), perms=perms)
    # where the first broken rule says to look: the field the desk opens on (only when the page is opened)
    lead = bars["triage"][0]["items"][0]["first"] if with_page and bars["triage"] else ""
    return {
        **bars,
        "groups": groups, "items": items, **stage,
        "selected_field": items.get(selected_path) if selected_path else None, "selected_path": selected_path,
        "selected_violation": selected_violation,
        "editing": editing, "edit_error": edit_error, "edit_raw": edit_raw,
        "focus_path": focus or field, "lead_path": lead, "decision_error": decision_error, "note": note, "show_note": show_note,
        "others": presence.presence_others(document_id=document.id, user=user) if with_page else [],
    }


_JUDGED = (ReviewStatus.VERIFIED.value, ReviewStatus.CORRECTED.value)


def _bars(*, document: Document, extraction: Extraction | None, violations: list, labels: FieldLabels,
          shorts: dict[str, str], unsure, perms: dict[str, Any]) -> dict[str, Any]:
    """What the status bar and the triage show, for the whole desk and after an edit alike. `shorts`: each
    field's own label by path, in page order; `unsure`: (path, label, FieldValue) in page order."""
    pill_class, pill_text = display_status(document)
    return {
        "document": document, "extraction": extraction, "violations": violations, "labels": labels,
        "triage": triage(violations, labels, shorts),
        # a document people verified or corrected has had every field looked at: none is left to doubt
        "least_sure": [] if document.review_status in _JUDGED else least_sure(unsure), **perms,
        "pill_class": pill_class, "pill_text": pill_text, **_urls(document), "poll_seconds": settings.DESK_POLL_SECONDS,
        "held": document.claimed_by_id if review.claim_is_live(document) else "",
    }


def field_context(*, user, document: Document, path: str) -> dict[str, Any]:
    """What one field's cell or edit form needs, without building the whole desk."""
    extraction = Extraction.objects.current_for(document)
    violations = selectors.desk_violations(extraction=extraction) if extraction else []
    perms = desk_permissions(user=user, document=document)
    _, _, items = field_items(document, extraction, violations, can_edit=perms["can_edit"], only=path, user=user)
    return {"document": document, "item": items.get(path), **perms, **_urls(document)}


# The desk's own addresses as the context names them: the status bar and every cell link to them.
_DESK_URLS = {"desk_url": "desk_document", "edit_url": "desk_edit", "history_url": "desk_history",
              "verify_url": "desk_verify", "reject_url": "desk_reject", "claim_url": "desk_claim",
              "release_url": "desk_release", "send_back_url": "desk_send_back"}


def _urls(document: Document) -> dict[str, str]:
    """The desk's own addresses for this document, reversed once per process (an edit's response shows ten)."""
    return dict(_desk_urls(document.id, get_script_prefix()))


@lru_cache(maxsize=1024)
def _desk_urls(document_id: int, prefix: str) -> tuple[tuple[str, str], ...]:
    """Kept by the script prefix too: reversing reads it, and it is the deployment's, not the document's."""
    return (*((key, reverse(name, args=[document_id])) for key, name in _DESK_URLS.items()),
            ("queue_url", reverse("queue")), ("next_url", reverse("queue_next")))


def edit_context(*, user, edited: review.EditResult, path: str) -> dict[str, Any] | None:
    """What an edit's response shows: the edited cell, every other cell whose value, rules or notes now read
    otherwise (`changed_items`, out of band), the triage and the status bar. None when the fields pane itself
    changed shape (a row label, a column or a field came or went): then the whole pane goes back.

    Only the cells the edit changed are built: the edited one, those whose value differs, and those of the
    fields a rule involves that is broken now and was not before, or the other way, as far as cells show it
    (`_rule_in_cells`: a sum's message changes with every edit of a row it adds up, but its forty cells show
    only that it is broken), when what such a cell shows of its rules (`_rules_shown`) differs. Fields other
    than the edited one keep their FieldValues and labels, so nothing else can make their cells differ."""
    document, extraction, fields = edited.document, edited.extraction, edited.fields or {}
    try:
        doctype = extraction_doctype(extraction=extraction, batch=document.batch)
    except UnknownDocumentType:
        return None
    groups, groups_before = doctype.field_groups(extraction.answer), doctype.field_groups(edited.answer_before)
    infos = {fi.path: fi for g in groups for fi in g.fields}
    if path not in infos or _shape(groups) != _shape(groups_before):
        return None
    values_before = {fi.path: fi.value for g in groups_before for fi in g.fields}
    now, then = Counter(map(_rule_in_cells, edited.stored)), Counter(map(_rule_in_cells, edited.stored_before))
    named = {name for key in (now - then) + (then - now) for name in key[2]}
    labels = field_labels(groups)
    perms = desk_permissions(user=user, document=document)
    rules_now, rules_then = rules_by_field(edited.stored), rules_by_field(edited.stored_before)
    # Another field keeps its FieldValue and label: its cell reads otherwise only through its value or
    # what it shows of its rules, so only those are compared (a mended sum sends forty cells).
    sent = [fi for p, fi in infos.items()
            if (p == path or fi.value != values_before[p]
                or (not field_and_holders(p).isdisjoint(named)
                    and _rules_shown(rules_now(p), p) != _rules_shown(rules_then(p), p)))]
    # The edit says how the edited value came: its events are read back only after a moved proof
    known = {"typed": {path: (user.pk, user.get_username(), True)}, "taken": {}}.get(edited.how)
    typed = typed_values(extraction=extraction, fields=fields,
                         paths=[fi.path for fi in sent if known is None or fi.path != path])
    if known is not None:
        typed.update(known)
    cell = cell_maker(edited.stored, labels=labels, fields=fields, can_edit=perms["can_edit"], user=user,
                       typed=typed)
    items = {fi.path: cell(fi) for fi in sent}
    return {
        **_bars(document=document, extraction=extraction, violations=edited.stored, labels=labels,
                shorts={p: fi.label for p, fi in infos.items()},
                unsure=((p, labels.get(p, fi.label), fields.get(p)) for p, fi in infos.items()), perms=perms),
        "oob": True, "notice": "", "focus_path": path, "edited_item": items.pop(path),
        "changed_items": list(items.values()),
    }


def _rule_in_cells(v) -> tuple:
    """What the cells of the fields a broken rule involves read of it (`cell_maker`): the rest of it (its
    message, what it expected) is for the triage."""
    found = json.dumps(v.found, sort_keys=True, default=str) if v.code == "value_grounded" else None
    return (v.code, v.label, tuple(v.fields or ()), found)


def _shape(groups: list) -> list:
    """What the fields pane is made of apart from the cells' contents: groups, columns, rows, fields, labels."""
    return [(g.name, g.is_table, list(g.columns), list(g.row_labels), [(fi.path, fi.label) for fi in g.fields],
             [[fi.path for fi in row] for row in g.rows]) for g in groups]


def _rules_shown(rules: list, path: str) -> tuple:
    """What the cell of the field at `path` shows of the broken rules involving it (`cell_maker`): their
    labels, and what each `value_grounded` of the field itself found (its notes quote it)."""
    return (sorted({v.label for v in rules}),
            [v.found for v in rules if v.code == "value_grounded" and path in (v.fields or [])])


def find_item(groups: list[dict], path: str) -> dict | None:
    """The item of `path` in the fields pane's groups."""
    for g in groups:
        for f in g["fields"]:
            if f["path"] == path:
                return f
        for row in g["rows"]:
            for f in row["cells"]:
                if f["path"] == path:
                    return f
    return None


def chosen_field(*, document: Document, path: str | None) -> list[dict]:
    """One field's proof boxes and pages (one FieldValue read), for another page of the document."""
    if not path:
        return []
    extraction = Extraction.objects.current_for(document)
    fv = selectors.field_value(extraction=extraction, path=path) if extraction else None
    if fv is None:
        return []
    return [{"path": path, "boxes": boxes_attr(fv.proofs),
             "proof_pages": sorted({int(p.get("page") or 1) for p in fv.proofs or []})}]


def history_context(*, document: Document) -> dict[str, Any]:
    """The document's runs and review events, with field paths in words."""
    history = selectors.document_history(document=document)
    labels = labels_for(history["extractions"][0] if history["extractions"] else None)
    for e in history["extractions"]:
        for r in e.round_list:
            r.changes = [(labels.of(path), path, before, after) for path, before, after in r.changes]
    for ev in history["events"]:
        ev.field_label, ev.before_words, ev.after_words = event_words(ev, labels)
    return {"document": document, **history, "pill": display_status(document)}


# --- the triage of broken rules ----------------------------------------------------------------------


def triage(violations: list, labels: FieldLabels, shorts: dict[str, str]) -> list[dict]:
    """Broken rules grouped by rule, the most specific first: a rule that names one or two fields says
    where to look; a sum over forty fields only says that something is off. Within a group, page order.
    `shorts`: every field's own label (its column's, in a table) by path, in page order."""
    order = {path: i for i, path in enumerate(shorts)}
    grouped: dict[str, list] = defaultdict(list)
    for v in violations:
        grouped[v.code].append(v)
    out = []
    for code, vs in grouped.items():
        entries, kinds = [], Counter()
        for v in vs:
            involved = involved_paths(v.fields, shorts)
            # where to look first: the field the rule is checked against (a sum's total), else a field the rule
            # names itself, else the first field of the list it names
            named = [p for p in involved if p in (v.fields or [])]
            first = v.subject if v.subject and v.subject in involved else (
                min(named or involved, key=lambda p: order.get(p, 0)) if involved else "")
            if first:
                kinds[shorts[first]] += 1
            entries.append({
                "id": v.id, "message": in_words(v.message, v.fields, labels), "fields": "|".join(v.fields or []),
                "involved": "|".join(involved),  # the browser selects these: it never works them out itself
                "first": first, "first_id": fid(first) if first else "", "label": labels.of(first) if first else "",
                "position": order.get(first, len(order)),
            })
        entries.sort(key=lambda e: e["position"])
        spread = sum(max(1, len(v.fields or [])) for v in vs) / len(vs)
        out.append({
            "code": code, "label": vs[0].label, "count": len(vs), "items": entries, "spread": spread,
            "kinds": [f"{lower_first(kind)} ×{n}" if n > 1 else lower_first(kind) for kind, n in kinds.most_common()],
        })
    out.sort(key=lambda g: (g["spread"] > 2, -g["count"], g["code"]))
    return out


# --- the page ----------------------------------------------------------------------------------------


def _n(value: float) -> str:
    return f"{value:.1f}"


def ocr_layer(page: Page) -> SafeString:
    """The page's LINE and WORD boxes as SVG rects in page pixels (lines under words), built without the
    template engine: a dense page has thousands of words and the page must stay fast to serve."""
    w, h = page.width, page.height
    lines, words = [], []
    for pk, kind, text, left, top, width, height, parent in selectors.page_blocks(page=page):
        attrs = (f'data-b="{pk}" data-t="{escape(text, quote=True)}" x="{_n(left * w)}" y="{_n(top * h)}" '
                 f'width="{_n(width * w)}" height="{_n(height * h)}"')
        if kind == "WORD":
            words.append(f'<rect class="w" data-l="{parent or ""}" {attrs}/>')
        else:
            lines.append(f'<rect class="l" {attrs}/>')
    return mark_safe("".join(lines) + "".join(words))  # noqa: S308 - every text is escaped above


def proof_rects(page: Page, items: list[dict]) -> SafeString:
    """The selected fields' proof boxes on this page, for the first paint: the JavaScript then draws every
    field's boxes, hidden, and shows a selection's by a class."""
    w, h = page.width, page.height
    out = []
    for it in items:
        for part in it["boxes"].split(";") if it["boxes"] else []:
            number, _, box = part.partition(":")
            if int(number) != page.number:
                continue
            left, top, width, height = (float(x) for x in box.split(","))
            old = " old" if it.get("old_proof") else ""
            out.append(f'<rect class="proof-box on{old}" data-path="{escape(it["path"], quote=True)}" '
                       f'x="{_n(left * w)}" y="{_n(top * h)}" width="{_n(width * w)}" height="{_n(height * h)}" '
                       'vector-effect="non-scaling-stroke"/>')
    return mark_safe("".join(out))  # noqa: S308 - paths are escaped above, numbers are ours
