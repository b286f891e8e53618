"""Test data for audits, dashboards, re-runs and exports, built with the ORM directly (no rendering, no OCR).

`make_doc` writes a finished document with one extraction: its rounds (each a list of broken rule codes),
an acta-shaped answer with one proof per field, FieldValues, usage and processing time.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

from django.utils import timezone

from extraction.doctypes.acta.layout import PARTIES
from extraction.models import Batch, Document, Extraction, FieldValue, Round, Violation
from extraction.rules.answers import iter_fields

TOTALS = ("valid_votes", "null_votes", "total_votes")


def acta_answer(counts: list[int], *, null: int = 2) -> dict:
    def proved(value):
        return {"value": value, "proof": [{"type": "LINE", "id": 1}]}

    valid = sum(counts)
    answer = {"acta_id": proved("170703046.05"),
              "rows": [{"party": p, "votes": proved(c), "votes_words": proved(str(c))} for p, c in zip(PARTIES, counts,
                                                                                                        strict=True)]}
    for key, value in (("valid_votes", valid), ("null_votes", null), ("total_votes", valid + null)):
        answer[key] = proved(value)
        answer[f"{key}_words"] = proved(str(value))
    return answer


def truth_of(counts: list[int], *, null: int = 2) -> dict:
    valid = sum(counts)
    return {"acta_id": "170703046.05", "counts": list(counts), "null_votes": null, "extra": 0,
            "valid_votes": valid, "total_votes": valid + null}


def counts_for(seed: int) -> list[int]:
    return [(seed * 7 + i * 3) % 40 for i in range(len(PARTIES))]


def make_batch(name: str = "dash", doctype: str = "acta") -> Batch:
    return Batch.objects.create(name=name, doctype=doctype, ocr_engine="pdf-text")


def make_doc(
    batch: Batch,
    *,
    name: str | None = None,
    status: str = "passed",
    review_status: str = "unreviewed",
    rounds: list[list[str]] | None = None,
    stop_reason: str | None = None,
    counts: list[int] | None = None,
    truth: dict | None = None,
    tokens: tuple[int, int] = (0, 0),
    cost: str = "0",
    seconds: float | None = 10.0,
    settings: dict | None = None,
    reader: str = "template",
    extraction: bool = True,
    model_answer: dict | None = None,
) -> Document:
    """A finished document; `rounds` lists the rule codes each round broke (default: one clean round)."""
    n = Document.objects.count() + 1
    now = timezone.now()
    started = now - timedelta(seconds=seconds) if seconds is not None else None
    doc = Document.objects.create(
        batch=batch, filename=name or f"doc-{n}.pdf", sha256=f"{n:064d}", kind="pdf", page_count=1, status=status,
        review_status=review_status, truth=truth, processing_started_at=started,
        processed_at=now if seconds is not None else None, original=f"batches/{batch.id}/originals/doc-{n}.pdf",
    )
    if not extraction:
        return doc
    rounds = rounds if rounds is not None else [[]]
    answer = acta_answer(counts if counts is not None else counts_for(n))
    if stop_reason is None:
        stop_reason = "passed" if not rounds[-1] else "exhausted"
    best = len(rounds) if stop_reason == "passed" else 1
    ext = Extraction.objects.create(
        document=doc, doctype=batch.doctype, reader=reader, stop_reason=stop_reason, best_round=best, answer=answer,
        prompt_tokens=tokens[0], completion_tokens=tokens[1], cost=Decimal(cost), finished_at=now,
        settings=settings or {"model": "", "input": "ocr", "max_rounds": 1},
    )
    for number, codes in enumerate(rounds, start=1):
        parsed = model_answer if (model_answer is not None and number == best) else answer
        Round.objects.create(extraction=ext, number=number, state=Round.State.COMPLETED, parsed=parsed,
                             violations=[{"code": c, "message": c, "fields": [_field_of(c)]} for c in codes])
    FieldValue.objects.bulk_create([
        FieldValue(extraction=ext, path=path, position=i, value=node["value"], model_value=node["value"],
                   proofs=[{"block_id": "1", "page": 1, "type": "LINE", "text": f"line of {path}", "method": "id",
                            "score": 1.0, "bbox": {"left": 0.1, "top": 0.01 * i, "width": 0.5, "height": 0.01}}])
        for i, (path, node) in enumerate(iter_fields(answer))
    ])
    if stop_reason != "passed":
        Violation.objects.bulk_create([Violation(extraction=ext, code=c, message=c, fields=[_field_of(c)])
                                       for c in rounds[best - 1]])
    return doc


def _field_of(code: str) -> str:
    """Which field a fake violation names: 'row_digits_words_mismatch' -> rows[4].votes, else valid_votes."""
    return "rows[4].votes" if code.startswith("row") else "valid_votes"


