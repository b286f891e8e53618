"""Review events in words for the history page. Audits, field audits, re-runs and send-backs store what they
decided as small dicts ({'verdict': 'right', 'field_sample': 1, 'field': 'rows[28].votes'}); people read
sentences, with each field named as the desk names it."""

from __future__ import annotations

from typing import Any

from extraction.doctypes.base import FieldLabels

SCOPES = {"failed": "the failed documents", "flagged": "the flagged documents",
          "all": "every finished document"}
VERDICTS = {"agree": "agreed with the document", "disagree": "disagreed with the document",
            "right": "found the value right", "wrong": "found the value wrong"}
SETTINGS = (("ocr_engine", "OCR engine"), ("llm_model", "model"), ("llm_input", "input"),
            ("max_rounds", "at most {} rounds"))


def _state(d: dict) -> str:
    status, review = d.get("status"), d.get("review_status")
    if status and review and review != "unreviewed":
        return f"{status}, {review}"
    return str(status or review or "")


def _fields(paths, labels: FieldLabels) -> str:
    return "; ".join(labels.of(p) for p in paths if p)


def settings_in_words(options: dict | None) -> str:
    """A re-run's settings: 'OCR engine tesseract, model gpt-4o, input vision, at most 3 rounds'."""
    out = []
    for key, name in SETTINGS:
        value = (options or {}).get(key)
        if value not in (None, ""):
            out.append(name.format(value) if "{}" in name else f"{name} {value}")
    return ", ".join(out)


def _after(kind: str, after: dict, labels: FieldLabels) -> str:
    parts = []
    if "verdict" in after:
        verdict = VERDICTS.get(after["verdict"], str(after["verdict"]))
        if "field_sample" in after:
            parts.append(f"Field audit {after['field_sample']}: {verdict}")
        elif "sample" in after:
            parts.append(f"Audit sample {after['sample']}: {verdict}")
        else:
            parts.append(verdict[:1].upper() + verdict[1:])
    if "scope" in after:
        settings = settings_in_words(after.get("options"))
        parts.append(f"Re-run of {SCOPES.get(after['scope'], after['scope'])}, "
                     + (f"with {settings}" if settings else "with the batch's settings"))
    if after.get("fields"):
        parts.append(f"wrong: {_fields(after['fields'], labels)}")
    if after.get("status"):
        parts.append(f"now {_state(after)}")
    if after.get("rules"):
        parts.append(f"{len(after['rules'])} rule{'s' if len(after['rules']) != 1 else ''} looked at it")
    return "; ".join(parts)


def event_words(event, labels: FieldLabels) -> tuple[str, str, str]:
    """(field, before, after) of a review event as the history page shows them: a value stays itself, a dict
    of what a decision did becomes a sentence."""
    field = _fields(str(event.field).split(", "), labels) if event.field else ""
    before, after = event.before, event.after
    return field, _value_words(before, labels, before=True, kind=event.kind), \
        _value_words(after, labels, before=False, kind=event.kind)


DECISIONS = frozenset({"audit_agree", "audit_disagree", "rerun", "retry", "send_back"})


def _value_words(value: Any, labels: FieldLabels, *, before: bool, kind: str) -> Any:
    if value is None:
        return ""
    if kind not in DECISIONS or not isinstance(value, dict):
        return value  # a field's value, before or after an edit
    if before:
        return f"Was {_state(value)}" if _state(value) else ""
    return _after(kind, value, labels)
