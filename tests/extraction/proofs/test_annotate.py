"""Proof boxes drawn on a page image (extraction/proofs/annotate.py)."""

from __future__ import annotations

from PIL import Image

from extraction.proofs.annotate import draw_boxes


def test_a_box_past_the_page_edge_is_clipped_or_left_out_and_the_page_still_draws():
    page = Image.new("RGB", (200, 100), "white")
    boxes = [
        {"left": 0.1, "top": 0.1, "width": 0.2, "height": 0.2},  # on the page
        {"left": 0.9, "top": 0.9, "width": 0.3, "height": 0.3},  # runs past the corner
        {"left": 0.1, "top": 1.2, "width": 0.2, "height": 0.1},  # wholly below the page
    ]
    drawn = draw_boxes(page, boxes)
    assert drawn.size == page.size
    assert drawn.getpixel((40, 20)) != (255, 255, 255)  # inside the first box
    assert drawn.getpixel((199, 99)) != (255, 255, 255)  # the clipped box reaches the corner
    assert drawn.getpixel((40, 99)) == (255, 255, 255)  # nothing drawn for the box below the page
