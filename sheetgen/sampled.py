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

``generate_sampled(seed, family="forms")`` draws a sheet of the second family instead (sheetgen/forms.py,
drawn by sheetgen/forms_draw.py): printed lines on a thermal strip or on paper, or a table, over one or more
pages, and ``scan_sampled`` photographs it on a table (sheetgen/photo.py) or scans it as the first family's
scanner does, page by page (a PDF of the page images when there are several). The default family, `tables`,
gives the very bytes it gave before the second family existed.
"""

from __future__ import annotations

import io
import math
import random
from dataclasses import dataclass
from typing import Any

import pymupdf
from PIL import Image

from extraction.doctypes.acta.layout import ROWS
from sheetgen.conventions import Conventions, draw_conventions, draw_scan_conventions
from sheetgen.forms import FormConventions, draw_form_conventions, draw_form_scan
from sheetgen.forms_draw import draw_form
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
from sheetgen.photo import photograph, tilt_depth
from sheetgen.sampled_draw import draw_sheet, page_size
from sheetgen.scans import degrade_scan

__all__ = ["FAMILIES", "SampledActa", "generate_sampled", "scan_sampled"]

FAMILIES = ("tables", "forms")


@dataclass(frozen=True)
class SampledActa:
    pdf_bytes: bytes
    # Exactly the structure of GeneratedActa.printed, with "layout" = "sampled-<seed>" and no errors.
    printed: dict[str, Any]
    # as drawn (the drawer may have changed blocks or size to fit the page; a form its structure, columns, pages)
    conventions: Conventions | FormConventions
    truth: ActaTruth
    family: str = "tables"

    @property
    def pages(self) -> int:
        with pymupdf.open(stream=self.pdf_bytes, filetype="pdf") as doc:
            return doc.page_count


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


def generate_sampled(seed: int, family: str = "tables") -> SampledActa:
    """A clean tally sheet whose layout is drawn, convention by convention, from the seed: one page of
    tables (`tables`), or a form or thermal strip of one or more pages (`forms`)."""
    if family == "forms":
        return _generate_form(seed)
    if family != "tables":
        raise ValueError(f"unknown family {family!r}; known: {list(FAMILIES)}")
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


def _generate_form(seed: int) -> SampledActa:
    truth, place_index = _truth(seed)
    conventions = draw_form_conventions(seed)
    printed = {**_printed(truth, conventions), "layout": f"forms-{seed}"}
    doc = pymupdf.open()
    drawn = draw_form(doc, conventions, printed, _PLACES[place_index], _qr_png(format_qr_payload(truth)))
    doc.subset_fonts()  # an embedded receipt font keeps only the glyphs it prints
    doc.set_metadata({"title": f"ACTA {truth.acta_id}", "creator": "proofdesk acta generator (forms)",
                      "creationDate": "D:20240728180000", "modDate": "D:20240728180000"})
    pdf_bytes = doc.tobytes(garbage=3, deflate=True, no_new_id=True)
    doc.close()
    return SampledActa(pdf_bytes=pdf_bytes, printed=printed, conventions=drawn, truth=truth, family="forms")


def scan_sampled(acta: SampledActa, *, seed: int) -> bytes:
    """JPEG bytes of a degraded scan of page 1, its parameters drawn from `seed` (deterministic). A sheet of
    the forms family is photographed or scanned page by page (`scan_form`)."""
    if acta.family == "forms":
        return scan_form(acta, seed=seed)
    scan = draw_scan_conventions(seed)
    page = render_page(acta.pdf_bytes, dpi=scan.dpi)
    return degrade_scan(page, seed=seed, perspective=scan.perspective, rotation=scan.rotation, lighting=scan.lighting,
                        blur=scan.blur, grain=scan.grain, jpeg_quality=scan.jpeg_quality)


def _on_the_bed(page: Image.Image, rotation: float) -> Image.Image:
    """The page on a scanner's white bed, with room around it for its skew: turned a few degrees, a long strip
    must not lose its ends' edges (the first family's pages are scanned to their own edges instead)."""
    w, h = page.size
    turn = math.radians(abs(rotation))
    mx = math.ceil(h * math.sin(turn) / 2 + w * (1 - math.cos(turn)) / 2) + 12
    my = math.ceil(w * math.sin(turn) / 2 + h * (1 - math.cos(turn)) / 2) + 12
    bed = Image.new("RGB", (w + 2 * mx, h + 2 * my), (250, 250, 250))
    bed.paste(page.convert("RGB"), (mx, my))
    return bed


def scan_form(acta: SampledActa, *, seed: int) -> bytes:
    """A scan of a forms-family sheet, its parameters drawn from `seed` (`draw_form_scan`): each page
    photographed on a table or scanned; a JPEG for one page, a PDF of the page images for several (each image
    at its true size for the drawn resolution, as a scanning app files them)."""
    scan = draw_form_scan(seed)
    with pymupdf.open(stream=acta.pdf_bytes, filetype="pdf") as doc:
        count = doc.page_count
    images = []
    for number in range(1, count + 1):
        page = render_page(acta.pdf_bytes, dpi=scan.dpi, page=number)
        page_seed = seed * 8 + number - 1
        if scan.style == "photo":
            images.append(photograph(page, scan, seed=page_seed))
        else:
            bed = _on_the_bed(page, scan.rotation)
            images.append(degrade_scan(bed, seed=page_seed, perspective=scan.perspective, rotation=scan.rotation,
                                       lighting=scan.lighting, blur=scan.blur, grain=scan.grain,
                                       jpeg_quality=scan.jpeg_quality, depth=tilt_depth(*page.size[::-1])))
    if count == 1:
        return images[0]
    out = pymupdf.open()
    for jpeg in images:
        with Image.open(io.BytesIO(jpeg)) as image:
            w, h = image.size
        page = out.new_page(width=w * 72 / scan.dpi, height=h * 72 / scan.dpi)
        page.insert_image(page.rect, stream=jpeg)
    out.set_metadata({"title": f"ACTA {acta.truth.acta_id}", "creator": "proofdesk acta scan (forms)",
                      "creationDate": "D:20240728190000", "modDate": "D:20240728190000"})
    data = out.tobytes(garbage=3, deflate=True, no_new_id=True)
    out.close()
    return data
