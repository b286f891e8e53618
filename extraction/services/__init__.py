"""Writes. The transitions module is the only code that changes a Document's state."""

from extraction.services.transitions import (
    TransitionError,
    document_fail,
    document_requeue,
    document_review_transition,
    document_transition,
)

__all__ = ["TransitionError", "document_fail", "document_requeue", "document_review_transition", "document_transition"]
