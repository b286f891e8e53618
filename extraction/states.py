"""Document state machines (pure). Services are the only code that applies these transitions."""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    QUEUED = "queued"
    PROCESSING = "processing"
    PASSED = "passed"
    FLAGGED = "flagged"
    FAILED = "failed"


class ReviewStatus(StrEnum):
    UNREVIEWED = "unreviewed"
    VERIFIED = "verified"
    CORRECTED = "corrected"
    REJECTED = "rejected"


class StopReason(StrEnum):
    PASSED = "passed"
    STAGNATED = "stagnated"
    EXHAUSTED = "exhausted"
    ERROR = "error"


FINAL_STATUSES = frozenset({Status.PASSED, Status.FLAGGED, Status.FAILED})

# Processing: which states each state may move to.
STATUS_TRANSITIONS: dict[Status, frozenset[Status]] = {
    Status.QUEUED: frozenset({Status.PROCESSING, Status.FAILED}),
    # processing -> queued is the reaper giving a stuck document back to the queue
    Status.PROCESSING: frozenset({Status.PASSED, Status.FLAGGED, Status.FAILED, Status.QUEUED}),
    # a supervisor's disagreement sends a passed document to the reviewers
    Status.PASSED: frozenset({Status.FLAGGED, Status.QUEUED}),
    Status.FLAGGED: frozenset({Status.QUEUED}),
    Status.FAILED: frozenset({Status.QUEUED}),
}

REVIEW_TRANSITIONS: dict[ReviewStatus, frozenset[ReviewStatus]] = {
    ReviewStatus.UNREVIEWED: frozenset({ReviewStatus.VERIFIED, ReviewStatus.CORRECTED, ReviewStatus.REJECTED}),
    ReviewStatus.VERIFIED: frozenset({ReviewStatus.UNREVIEWED}),
    ReviewStatus.CORRECTED: frozenset({ReviewStatus.UNREVIEWED}),
    ReviewStatus.REJECTED: frozenset({ReviewStatus.UNREVIEWED}),
}


def sources_for(target: Status) -> frozenset[Status]:
    """The states from which `target` may be reached."""
    return frozenset(s for s, targets in STATUS_TRANSITIONS.items() if target in targets)


def review_sources_for(target: ReviewStatus) -> frozenset[ReviewStatus]:
    return frozenset(s for s, targets in REVIEW_TRANSITIONS.items() if target in targets)
