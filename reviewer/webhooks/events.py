"""The events a webhook endpoint may subscribe to (pure)."""

from __future__ import annotations

DOCUMENT_PASSED = "document.passed"
DOCUMENT_FLAGGED = "document.flagged"
DOCUMENT_FAILED = "document.failed"
DOCUMENT_REVIEWED = "document.reviewed"
BATCH_FINISHED = "batch.finished"

EVENT_TYPES = (DOCUMENT_PASSED, DOCUMENT_FLAGGED, DOCUMENT_REVIEWED, DOCUMENT_FAILED, BATCH_FINISHED)

# What each event means, for the admin choosing them.
DESCRIPTIONS = {
    DOCUMENT_PASSED: "a document passed every rule",
    DOCUMENT_FLAGGED: "a document went to the reviewers (a rule broke, or a supervisor sent it back)",
    DOCUMENT_REVIEWED: "a reviewer verified, corrected or rejected a document",
    DOCUMENT_FAILED: "a document could not be processed (with its reason)",
    BATCH_FINISHED: "no document of a batch is waiting or being processed any more",
}

# the final states of processing, each with its event
STATUS_EVENTS = {"passed": DOCUMENT_PASSED, "flagged": DOCUMENT_FLAGGED, "failed": DOCUMENT_FAILED}
