"""Writes. The transitions module is the only code that changes a Document's state."""

from extraction.services.transitions import document_fail, document_review_transition, document_transition

__all__ = ["document_fail", "document_review_transition", "document_transition"]
