"""The truth an acta states about itself (pure): its QR code holds the true counts. Read from the first page,
kept on the document for scoring (never shown to a model), and held against answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from extraction.doctypes.acta.rules import TOTALS
from extraction.doctypes.base import TruthComparison, TruthDifference
from extraction.rules.answers import get_value
from extraction.values.numbers import as_int


def page_truth(image_path: Path) -> dict[str, Any] | None:
    """The QR's counts as stored on the document; None without a QR, ValueError when it is not an acta's."""
    from extraction.doctypes.acta.qr import decode_qr, parse_qr_payload  # zxing loads only where a page is read

    payload = decode_qr(image_path)
    if not payload:
        return None
    truth = parse_qr_payload(payload)
    return {"acta_id": truth.acta_id, "counts": list(truth.counts), "null_votes": truth.null_votes,
            "extra": truth.extra, "valid_votes": truth.valid_votes, "total_votes": truth.total_votes}


def compare_truth(answer: Any, truth: Any) -> TruthComparison | None:
    """Each party's votes and each total against the QR's (they make accuracy), and the acta code (it does
    not); None when the truth has no counts."""
    if not isinstance(truth, dict) or not isinstance(truth.get("counts"), list):
        return None
    if not isinstance(answer, dict):
        answer = {}
    rows = answer.get("rows") if isinstance(answer.get("rows"), list) else []
    out = []
    acta_id = get_value(answer, "acta_id")
    if str(acta_id).strip() != str(truth.get("acta_id")):
        out.append(TruthDifference("acta_id", acta_id, truth.get("acta_id"), scored=False))
    for i, expected in enumerate(truth["counts"]):
        found = get_value(answer, f"rows[{i}].votes")
        if as_int(found) != expected or i >= len(rows):
            party = rows[i].get("party") if i < len(rows) and isinstance(rows[i], dict) else None
            out.append(TruthDifference(f"rows[{i}].votes", found, expected, row=party or None))
    if len(rows) > len(truth["counts"]):
        out.append(TruthDifference("rows", len(rows), len(truth["counts"])))
    totals = [key for key, _ in TOTALS if key in truth]
    for key in totals:
        found = get_value(answer, key)
        if as_int(found) != truth[key]:
            out.append(TruthDifference(key, found, truth[key]))
    return TruthComparison(scored_fields=len(truth["counts"]) + len(totals), differences=out)
