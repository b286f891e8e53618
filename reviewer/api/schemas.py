"""What the API takes and gives, as pydantic schemas (they are its OpenAPI document)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from ninja import Schema
from pydantic import Field


class Problem(Schema):
    """An error (RFC 9457), served as application/problem+json."""

    type: str = "about:blank"
    title: str
    status: int
    detail: str
    instance: str
    field: str | None = Field(None, description="The request's field at fault, when one is.")
    errors: list[dict[str, str]] | None = Field(None, description="Each fault: {field, detail}.")


# --- document types -------------------------------------------------------------------------------------


class DocTypeField(Schema):
    path: str
    label: str


class DocTypeRule(Schema):
    code: str
    label: str = Field(description="The rule in people's words.")


class DocTypeVersionOut(Schema):
    version: int
    label: str
    created_at: datetime
    created_by: str | None


class DocTypeSummary(Schema):
    name: str
    label: str
    source: Literal["code", "shipped", "defined"] = Field(
        description="Where the type comes from: written in code, a definition shipped with Proofdesk, or defined in "
                    "the app by an admin (only these have versions).")
    version: int | None = Field(None, description="The live version of a type defined in the app (batches are read under it).")


class DocTypeOut(DocTypeSummary):
    fields: list[DocTypeField] = Field(description="The type's fields with their labels (tables' rows come with "
                                                   "each document).")
    editable: list[str] = Field(description="Path patterns of the fields a reviewer may correct; empty: every "
                                            "field read from the page.")
    rules: list[DocTypeRule]
    definition: dict[str, Any] | None = Field(None, description="The definition of a type defined in the app or "
                                                                "shipped as data.")
    versions: list[DocTypeVersionOut]


# --- batches --------------------------------------------------------------------------------------------


class BatchIn(Schema):
    name: str = Field(max_length=200)
    doctype: str = Field(description="A document type's name (GET /doctypes).")
    ocr_engine: str = "auto"
    max_rounds: int | None = Field(None, ge=1, le=10, description="Rounds of the validation loop.")
    llm_input: Literal["", "text", "vision", "hybrid"] = ""


class BatchProgress(Schema):
    total: int
    done: int
    queued: int
    processing: int
    passed: int
    flagged: int
    reviewed: int
    failed: int
    unsent: int = Field(description="Queued documents the task queue has not taken yet (sent again on their own).")


class BatchOut(Schema):
    id: int
    name: str
    doctype: str
    doctype_version: int | None
    ocr_engine: str
    settings: dict[str, Any]
    created_at: datetime
    progress: BatchProgress


class RerunIn(Schema):
    scope: Literal["failed", "flagged", "all"]
    llm_model: str = ""
    llm_input: str = ""
    max_rounds: int | None = None
    ocr_engine: str = ""
    newest_type: bool = Field(False, description="Run under the live version of a type defined in the app.")


class RerunOut(Schema):
    queued: list[int]
    skipped: int = Field(description="In the scope but changed state meanwhile, left alone.")


# --- documents ------------------------------------------------------------------------------------------


class DocumentSummary(Schema):
    id: int
    batch_id: int
    doctype: str
    filename: str
    status: str
    review_status: str
    version: int
    updated_at: datetime


class DocumentPage(Schema):
    items: list[DocumentSummary]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null on the last page.")


class Box(Schema):
    left: float
    top: float
    width: float
    height: float


class ProofOut(Schema):
    page: int | None
    box: Box | None = Field(description="Fractions of the page's width and height.")
    type: str | None = Field(description="What the proof cites: WORD, LINE, TABLE or CELL.")
    words: str | None = Field(description="The text of the cited words.")
    method: str | None = None


class FieldOut(Schema):
    path: str
    label: str
    value: Any
    model_value: Any
    corrected: bool
    confidence: float | None = Field(description="How far the value can be trusted (0..1).")
    ocr_confidence: float | None = Field(description="The lowest OCR confidence of the cited words (0..1).")
    proofs: list[ProofOut]


class BrokenRule(Schema):
    id: int
    code: str
    label: str = Field(description="The rule in people's words.")
    message: str = Field(description="What is wrong, with fields named by their labels.")
    fields: list[str] = Field(description="The paths of the fields the rule involves.")
    field_labels: list[str]
    expected: Any = None
    found: Any = None


class RoundOut(Schema):
    number: int
    state: str
    prompt_tokens: int
    completion_tokens: int
    cost: float
    latency_ms: int | None
    broken_rules: int


class RunOut(Schema):
    id: int
    reader: str
    doctype_version: int | None
    settings: dict[str, Any]
    stop_reason: str = Field(description="passed, stagnated, exhausted or error; empty while it runs.")
    best_round: int | None
    prompt_tokens: int
    completion_tokens: int
    cost: float
    currency: str
    rounds: list[RoundOut]


class PageOut(Schema):
    number: int
    width: int
    height: int
    image: str = Field(description="The page image (PNG).")
    annotated: str = Field(description="The page with every proof's box drawn; ?field=path or ?violation=id "
                                       "for one.")


class ClaimOut(Schema):
    user: str
    until: datetime


class DocumentOut(Schema):
    id: int
    batch_id: int
    doctype: str
    filename: str
    status: str
    review_status: str
    version: int = Field(description="Send it back with every review write: a stale one is refused (409).")
    error: str = ""
    claim: ClaimOut | None
    run: RunOut | None
    fields: list[FieldOut]
    broken_rules: list[BrokenRule]
    pages: list[PageOut]


# --- review ---------------------------------------------------------------------------------------------


class EditIn(Schema):
    field: str = Field(description="The field's path, as in `fields`.")
    value: str | None = Field(description="The value as a reviewer would type it; empty or null clears it.")
    version: int


class VerifyIn(Schema):
    version: int
    note: str = Field("", description="Required while rules still fail: why the values are right anyway.")


class RejectIn(Schema):
    version: int
    reason: str


class DecisionOut(Schema):
    id: int
    status: str
    review_status: str
    version: int


class EvaluationIn(Schema):
    version: int | None = Field(None, ge=1, description="A saved version of a type defined in the app; the live one "
                                                         "when empty.")
    llm_model: str = ""
    llm_input: str = ""
    max_rounds: int | None = Field(None, ge=1, le=10, description="Rounds of the validation loop.")
    ocr_engine: str = ""


class EvaluationArm(Schema):
    run: int
    name: str = Field(description="The version and the settings that differ from the instance's.")
    version: int | None
    documents: int
    done: int = Field(description="Documents read so far (the figures grow until `done` equals `documents`).")
    outcomes: dict[str, int] = Field(description="passed_right, false_pass, needless_review, caught, failed.")
    fields: dict[str, dict[str, Any]] = Field(description="Per field (a table's column as one): right, compared, "
                                                          "accuracy.")
    rules: dict[str, dict[str, Any]] = Field(description="Per rule: fired, right_alarms, caught, wrong, precision, "
                                                         "recall.")
    cost_per_document: str | None
    seconds_per_document: float | None


class EvaluationOut(Schema):
    id: int
    doctype: str
    done: bool
    arms: list[EvaluationArm] = Field(description="This run first, then the live version's it is compared with.")
    warnings: list[str] = Field(description="Where this run is worse than the live version, in sentences.")
