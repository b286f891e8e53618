"""Text printed inside the images of a born-digital page: a letterhead, a stamp, company data pasted as a
picture. The text layer does not hold it, so the `auto` engine OCRs those images and adds their lines.

An image is read when it is tall enough to hold a line of the page's own text (measured on the page, not
fixed); what the OCR finds is placed on the page in page fractions, and words that the text layer already
has at the same place (text drawn over an image) are not added twice.
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

import pymupdf

from extraction.ocr.blocks import BBox, BlockType, OcrBlock, OcrEngine, OcrPage, PageImage, SourceDocument

RENDER_DPI = 200  # images are often small on the page: read them finer than whole pages
_MIN_LINES = 1.5  # an image must be at least this many text lines tall to hold readable text


def _median_text_height(blocks: list[OcrBlock]) -> float | None:
    """The median height of the page's words, in fractions of the page's height."""
    heights = sorted(b.bbox.height for b in blocks if b.type is BlockType.WORD and b.bbox.height > 0)
    return heights[len(heights) // 2] if heights else None


def _overlap(a: BBox, b: BBox) -> float:
    w = min(a.right, b.right) - max(a.left, b.left)
    h = min(a.bottom, b.bottom) - max(a.top, b.top)
    area = a.width * a.height
    return 0.0 if w <= 0 or h <= 0 or area <= 0 else (w * h) / area


def image_regions(page: pymupdf.Page, blocks: list[OcrBlock]) -> list[BBox]:
    """The boxes (page fractions, as shown) of the images on a page that are tall enough to hold text."""
    share = _median_text_height(blocks)
    if share is None:
        return []
    width, height = page.rect.width or 1.0, page.rect.height or 1.0
    text_height = share * height  # points, as the image's rect: both sides are compared in one unit
    regions = []
    for info in page.get_image_info():
        rect = (pymupdf.Rect(info["bbox"]) * page.rotation_matrix).normalize() & page.rect
        if rect.is_empty:
            continue
        if rect.height >= _MIN_LINES * text_height and rect.width >= 2 * text_height:
            regions.append(BBox(rect.x0 / width, rect.y0 / height, rect.width / width, rect.height / height))
    return regions


def add_embedded_text(page: pymupdf.Page, ocr_page: OcrPage, engine: OcrEngine) -> OcrPage:
    """`ocr_page` (read from the text layer) with the LINE and WORD blocks that `engine` reads in the page's
    images appended; unchanged when the page has no image worth reading."""
    regions = image_regions(page, ocr_page.blocks)
    if not regions:
        return ocr_page
    existing = [b for b in ocr_page.blocks if b.type is BlockType.WORD]
    page_id = next((b.id for b in ocr_page.blocks if b.type is BlockType.PAGE), None)
    added: list[OcrBlock] = []
    order = max((b.order for b in ocr_page.blocks), default=0)
    width, height = page.rect.width, page.rect.height
    page_size = next((b.page_size for b in ocr_page.blocks if b.type is BlockType.PAGE), None)
    with tempfile.TemporaryDirectory(prefix="proofdesk-images-") as tmp:
        for k, region in enumerate(regions, start=1):
            clip = pymupdf.Rect(region.left * width, region.top * height, region.right * width, region.bottom * height)
            pix = page.get_pixmap(clip=clip, dpi=RENDER_DPI, alpha=False)
            if _is_barcode(pix):
                continue  # a QR or bar code holds no printed text to cite, only a wasted OCR run
            path = Path(tmp) / f"image-{k}.png"
            pix.save(path)
            read = engine.read(SourceDocument(path=path, kind="image",
                                              pages=[PageImage(1, path, pix.width, pix.height)]))
            found = [b for p in read for b in p.blocks if b.type in (BlockType.LINE, BlockType.WORD)]
            prefix = f"p{ocr_page.number}-i{k}-"
            kept_lines: set[str] = set()
            for block in sorted(found, key=lambda b: b.order):
                box = _place(block.bbox, region)
                if block.type is BlockType.WORD:
                    if block.parent not in kept_lines:
                        continue
                    parent = prefix + block.parent
                elif any(_overlap(w.bbox, box) > 0.5 for w in existing):
                    continue  # the text layer already holds this line (text drawn over the image)
                else:
                    kept_lines.add(block.id)
                    parent = page_id
                order += 1
                added.append(replace(block, id=prefix + block.id, page=ocr_page.number, bbox=box, parent=parent,
                                     order=order, polygon=[_point(x, y, region) for x, y in block.polygon or []]
                                     or None, page_size=page_size))
    return replace(ocr_page, blocks=[*ocr_page.blocks, *added])


def _is_barcode(pix: pymupdf.Pixmap) -> bool:
    """Whether most of the image is one bar code (zxing-cpp finds it in milliseconds)."""
    import zxingcpp
    from PIL import Image

    image = Image.frombytes("RGB", (pix.width, pix.height), pix.samples)
    for code in zxingcpp.read_barcodes(image):
        pos = code.position
        xs = [pos.top_left.x, pos.top_right.x, pos.bottom_left.x, pos.bottom_right.x]
        ys = [pos.top_left.y, pos.top_right.y, pos.bottom_left.y, pos.bottom_right.y]
        if (max(xs) - min(xs)) * (max(ys) - min(ys)) >= 0.4 * pix.width * pix.height:
            return True
    return False


def _place(box: BBox, region: BBox) -> BBox:
    return BBox(region.left + box.left * region.width, region.top + box.top * region.height,
                box.width * region.width, box.height * region.height)


def _point(x: float, y: float, region: BBox) -> tuple[float, float]:
    return region.left + x * region.width, region.top + y * region.height
