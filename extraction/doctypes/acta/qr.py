"""The QR code of a tally sheet: its payload (the true counts), decoding it and masking it (pure).

Payload format of the published sheets: ``ACTAID!c1,c2,...,c38!N!X`` — the acta code (on the real sheets
9 digits, a dot, 2 digits: ``050201001.01``; any digits-and-dots code is accepted here), the 38 party
counts in sheet order (extraction.doctypes.acta.layout.ROWS), then two more counts. The format does not
label the two trailing counts. Decision: the first, N, is the null votes (so the QR alone gives
valid, null and total votes); the second, X, is kept as ``extra`` without a meaning — carried for
scoring, used by no rule, and not printed on generated sheets.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from pathlib import Path

import zxingcpp
from PIL import Image, ImageDraw, ImageOps

from extraction.doctypes.acta.layout import ROWS
from extraction.ocr.blocks import BBox

N_ROWS = len(ROWS)
_ACTA_ID = re.compile(r"^\d[\d.]*\d$")
# Grey rather than white so a reviewer sees that something was hidden there.
MASK_FILL = (200, 200, 200)


@dataclass(frozen=True)
class ActaTruth:
    """What the QR says: the true counts of one sheet."""

    acta_id: str
    counts: tuple[int, ...]  # 38, sheet order
    null_votes: int
    extra: int  # second trailing QR count; meaning unknown, kept for scoring only

    @property
    def valid_votes(self) -> int:
        return sum(self.counts)

    @property
    def total_votes(self) -> int:
        return self.valid_votes + self.null_votes


def format_qr_payload(truth: ActaTruth) -> str:
    counts = ",".join(str(c) for c in truth.counts)
    return f"{truth.acta_id}!{counts}!{truth.null_votes}!{truth.extra}"


def _count(text: str, what: str) -> int:
    text = text.strip()
    if not text.isdigit():
        raise ValueError(f"bad acta QR payload: {what} is {text!r}, expected a non-negative integer")
    return int(text)


def parse_qr_payload(text: str) -> ActaTruth:
    """Parse ``ACTAID!c1,...,c38!N!X``; raise ValueError saying what is wrong."""
    parts = text.strip().split("!")
    if len(parts) != 4:
        raise ValueError(f"bad acta QR payload: expected 4 fields separated by '!', found {len(parts)}")
    acta_id, counts_text, null_text, extra_text = parts
    if not _ACTA_ID.match(acta_id):
        raise ValueError(f"bad acta QR payload: acta id {acta_id!r} is not digits and dots")
    counts = counts_text.split(",")
    if len(counts) != N_ROWS:
        raise ValueError(f"bad acta QR payload: expected {N_ROWS} party counts, found {len(counts)}")
    return ActaTruth(
        acta_id=acta_id,
        counts=tuple(_count(c, f"count {i + 1} ({ROWS[i][1]})") for i, c in enumerate(counts)),
        null_votes=_count(null_text, "the null-votes count"),
        extra=_count(extra_text, "the extra count"),
    )


def _load(image: Image.Image | bytes | Path | str) -> Image.Image:
    if isinstance(image, Image.Image):
        return image
    if isinstance(image, bytes):
        return Image.open(io.BytesIO(image))
    return Image.open(Path(image))


def _variants(image: Image.Image) -> list[tuple[Image.Image, float]]:
    """The image plus cleaned-up copies (and their scale) for blurred or noisy scans."""
    gray = ImageOps.autocontrast(image.convert("L"), cutoff=1)
    up = gray.resize((gray.width * 2, gray.height * 2), Image.Resampling.LANCZOS)
    return [(image.convert("RGB"), 1.0), (gray, 1.0), (up, 2.0)]


def _find(image: Image.Image) -> list[tuple[str, list[tuple[float, float]]]]:
    """(text, corner points in pixels of ``image``) for every QR code found in any variant."""
    for variant, scale in _variants(image):
        found = zxingcpp.read_barcodes(variant, formats=zxingcpp.BarcodeFormat.QRCode)
        if found:
            result = []
            for code in found:
                p = code.position
                corners = [p.top_left, p.top_right, p.bottom_right, p.bottom_left]
                result.append((code.text, [(c.x / scale, c.y / scale) for c in corners]))
            return result
    return []


def decode_qr(image: Image.Image | bytes | Path | str) -> str | None:
    """The text of the first QR code on the page image, or None when there is none readable."""
    found = _find(_load(image))
    return found[0][0] if found else None


def mask_qr(image: Image.Image | bytes | Path | str) -> tuple[Image.Image, list[BBox]]:
    """Paint over every QR code so a model cannot read the truth; return the masked boxes (page fractions)."""
    masked = _load(image).convert("RGB")
    draw = ImageDraw.Draw(masked)
    boxes: list[BBox] = []
    for _ in range(5):  # a few passes: masking one code can let a second one be found
        found = _find(masked)
        if not found:
            break
        for _text, corners in found:
            xs = [x for x, _ in corners]
            ys = [y for _, y in corners]
            # Pad by about three modules (a code is 25-57 modules wide): covers the finder patterns'
            # edges and corner slack on a rotated scan without spilling onto printed text nearby.
            pad = 0.08 * max(max(xs) - min(xs), max(ys) - min(ys)) + 2
            left, top = max(0.0, min(xs) - pad), max(0.0, min(ys) - pad)
            right, bottom = min(masked.width, max(xs) + pad), min(masked.height, max(ys) + pad)
            draw.rectangle([left, top, right, bottom], fill=MASK_FILL)
            boxes.append(
                BBox(left / masked.width, top / masked.height,
                     (right - left) / masked.width, (bottom - top) / masked.height)
            )
    return masked, boxes
