"""Tally sheets in sampled layouts: every convention of the paper drawn per seed (pure).

``generate_sampled(seed)`` draws the sheet's conventions (sheetgen/conventions.py: how numbers are
printed, where the words go, how names, candidates and totals are ruled and placed, page, fills, rules,
code, header numbers, signatures, stamps, font), lays the sheet out with them (sheetgen/sampled_draw.py)
and returns the PDF, what it prints, the conventions as drawn and the truth its QR code carries. The counts
and the code come from the same draws as ``generate_acta`` (sheetgen/generate.py), so a seed prints
the same votes in a fixed layout and in its sampled one. Sheets are clean: what is printed is the truth.

``scan_sampled(acta, seed=...)`` degrades page 1 as a scanner or a phone would, with parameters drawn from
their own stream (``draw_scan_conventions(seed)``; with the sheet's own seed they are ``acta.conventions.scan``).
Everything is deterministic for a seed: the same seed gives the same bytes.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import pymupdf

from extraction.doctypes.acta.layout import ROWS
from sheetgen.conventions import Conventions, draw_conventions, draw_scan_conventions
from sheetgen.generate import (
    _PLACES,
    DEFAULT_LAYOUTS,
    ActaTruth,
    _acta_id,
    _counts,
    _qr_png,
    format_qr_payload,
    render_page,
    spell_digits,
)
from sheetgen.sampled_draw import draw_sheet, page_size
from sheetgen.scans import degrade_scan

__all__ = ["SampledActa", "generate_sampled", "scan_sampled"]


@dataclass(frozen=True)
class SampledActa:
    pdf_bytes: bytes
    # Exactly the structure of GeneratedActa.printed, with "layout" = "sampled-<seed>" and no errors.
    printed: dict[str, Any]
    conventions: Conventions  # as drawn (the drawer may have changed blocks or size to fit the page)
    truth: ActaTruth


def _truth(seed: int) -> tuple[ActaTruth, int]:
    """The truth and the place index, drawn in generate_acta's order (the layout draw included)."""
    rng = random.Random(seed)
    rng.randrange(len(DEFAULT_LAYOUTS))
    place_index = rng.randrange(len(_PLACES))
    counts, null_votes, extra = _counts(rng)
    truth = ActaTruth(acta_id=_acta_id(rng, place_index), counts=tuple(counts), null_votes=null_votes, extra=extra)
    return truth, place_index


def _printed(truth: ActaTruth, c: Conventions) -> dict[str, Any]:
    """What the sheet prints: the digits in the sheet's number style, the words spelling exactly those digits."""
    width = max(c.pad_width, len(str(truth.total_votes)))

    def digits(n: int) -> str:
        return str(n) if c.numbers == "plain" else str(n).zfill(width)

    rows = [{"party": party, "votes": votes, "votes_text": digits(votes), "votes_words": spell_digits(digits(votes))}
            for (_, party), votes in zip(ROWS, truth.counts, strict=True)]
    printed: dict[str, Any] = {"acta_id": truth.acta_id, "layout": f"sampled-{c.seed}", "errors": [], "rows": rows}
    for key, n in (("valid_votes", truth.valid_votes), ("null_votes", truth.null_votes),
                   ("total_votes", truth.total_votes)):
        printed[key], printed[f"{key}_text"], printed[f"{key}_words"] = n, digits(n), spell_digits(digits(n))
    return printed


def generate_sampled(seed: int) -> SampledActa:
    """A one-page clean tally sheet whose layout is drawn, convention by convention, from the seed."""
    truth, place_index = _truth(seed)
    conventions = draw_conventions(seed)
    printed = _printed(truth, conventions)
    doc = pymupdf.open()
    width, height = page_size(conventions)
    page = doc.new_page(width=width, height=height)
    drawn = draw_sheet(page, conventions, printed, _PLACES[place_index], _qr_png(format_qr_payload(truth)))
    # Fixed dates and no fresh file id: the same seed gives the same bytes.
    doc.set_metadata({"title": f"ACTA {truth.acta_id}", "creator": "proofdesk acta generator (sampled)",
                      "creationDate": "D:20240728180000", "modDate": "D:20240728180000"})
    pdf_bytes = doc.tobytes(garbage=3, deflate=True, no_new_id=True)
    doc.close()
    return SampledActa(pdf_bytes=pdf_bytes, printed=printed, conventions=drawn, truth=truth)


def scan_sampled(acta: SampledActa, *, seed: int) -> bytes:
    """JPEG bytes of a degraded scan of page 1, its parameters drawn from `seed` (deterministic)."""
    scan = draw_scan_conventions(seed)
    page = render_page(acta.pdf_bytes, dpi=scan.dpi)
    return degrade_scan(page, seed=seed, perspective=scan.perspective, rotation=scan.rotation, lighting=scan.lighting,
                        blur=scan.blur, grain=scan.grain, jpeg_quality=scan.jpeg_quality)
