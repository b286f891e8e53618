"""Whether documents of a type can be read with what is configured, said before anything is uploaded."""

from __future__ import annotations

from extraction.doctypes.registry import UnknownDocumentType, all_doctypes, get_doctype
from extraction.doctypes.selectors import doctype_choices
from extraction.pipeline.rerun import llm_available

__all__ = ["doctype_needs_llm", "doctypes_needing_llm"]


def doctype_needs_llm(*, name: str) -> str | None:
    """Why documents of type `name` cannot be read now (it has no offline reader and no LLM is configured),
    in words for the admin; None when they can be (or the name is no type: the form says that)."""
    try:
        doctype = get_doctype(name)
    except UnknownDocumentType:
        return None
    if doctype.offline_reader is not None or llm_available():
        return None
    offline = [d.label for d in _offline_readers()]
    instead = f", or upload under a type read without one ({', '.join(offline)})" if offline else ""
    return (f"No LLM is configured, and {doctype.label} is read only by one, so its documents could only fail: "
            f"nothing was uploaded. Set LLM_BASE_URL and LLM_MODEL (docs/CONFIGURATION.md){instead}.")


def doctypes_needing_llm(*, teams: list[int] | None = None) -> list[str]:
    """The labels of the types (of `teams`) that cannot be read now for want of an LLM (empty when one is
    configured)."""
    if llm_available():
        return []
    offline = {d.name for d in _offline_readers()}
    return [label for name, label in doctype_choices(teams=teams) if name not in offline]


def _offline_readers() -> list:
    """The types with a reader of their own. Only coded types have one: a type defined as data is read by the
    model (extraction/doctypes/defined/build.py sets none), so the check reads no defined type from the database."""
    return [d for d in all_doctypes() if d.offline_reader is not None]
