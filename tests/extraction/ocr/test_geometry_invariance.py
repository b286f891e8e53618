"""The same words on a page of another shape are read alike (extraction/ocr/geometry.py): every distance is
measured in one unit on both axes, so the rows, the numbers, the items printed over two lines, the proofs and
the broken rules cannot depend on the page's shape, size or where the print stands on it.

Property tests over generated tally sheets (tests/support/generated_pages.py): each sheet is placed as printed, on a
taller and on a wider page, turned to landscape, on a strip just wider than its print, scaled, moved, and cut
over two pages between items, and everything read from it is compared with the sheet as printed."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extraction.doctypes.registry import get_doctype
from extraction.ocr.blocks import BlockType
from extraction.ocr.geometry import Box, NoPageSize, PageSize, block_box
from extraction.ocr.page_rows import PageRows, page_skew
from extraction.proofs.resolve import resolve_proofs
from extraction.reading.context import reading_context
from extraction.reading.validation import make_validator
from tests.support.generated_pages import Placed, Sheet, answer_of, place, placements, sheets

ACTA = get_doctype("acta")
PROPERTY = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _rows(placed: Placed) -> dict[str, Any]:
    """What page geometry reads from the placed words, by word index: rows, numbers and items, page by page
    in order (a sheet cut over two pages reads as the same sequence)."""
    rows, runs, heads = [], [], []
    for page in placed.pages:
        words = [b for b in page.blocks if b.type is BlockType.WORD]
        lines = [b for b in page.blocks if b.type is BlockType.LINE]
        found = PageRows(words, skew=page_skew(lines, words))
        ids = [[placed.index_of[w.id] for w in row] for row in found.rows]
        rows += ids
        runs += [(tuple(placed.index_of[w.id] for w in run.words), run.text, run.kind) for run in found.runs]
        heads += [None if found.head_of(r) is None else ids[found.head_of(r)][0] for r in range(len(found.rows))]
    return {"rows": rows, "runs": runs, "heads": heads}


def _judged(sheet: Sheet, placed: Placed, *, by: str, values: dict | None = None, proofs: dict | None = None
            ) -> dict[str, Any]:
    """The proofs (as word indices) and the broken rules of an answer to the placed sheet."""
    ctx = reading_context(doctype=ACTA, input_mode="text", pages=placed.pages)
    answer = answer_of(sheet, placed, ctx.prompt, by=by, values=values, proofs=proofs)
    resolved = {path: sorted(placed.index_of.get(f.block_id, -1) for f in found)
                for path, found in resolve_proofs(answer, ctx).items()}
    broken = sorted((v.code, v.fields, str(v.expected), str(v.found)) for v in make_validator(ACTA, ctx)(answer))
    return {"proofs": resolved, "violations": broken}


@PROPERTY
@given(sheet=sheets(), k=st.floats(1.5, 12.0), dx=st.floats(0, 1), dy=st.floats(0, 1), cut=st.integers(0, 50))
def test_rows_numbers_and_items_do_not_depend_on_the_pages_shape(sheet, k, dx, dy, cut):
    [printed, *others] = placements(sheet, k=k, dx=dx, dy=dy, cut=cut)
    expected = _rows(place(sheet, printed))
    for placement in others:
        assert _rows(place(sheet, placement)) == expected, placement.name


@PROPERTY
@given(sheet=sheets(), k=st.floats(1.5, 12.0), dx=st.floats(0, 1), dy=st.floats(0, 1), cut=st.integers(0, 50),
       by=st.sampled_from(["line", "word"]), wrong=st.integers(0, 40), slip=st.integers(1, 9))
def test_proofs_and_broken_rules_do_not_depend_on_the_pages_shape(sheet, k, dx, dy, cut, by, wrong, slip):
    # a right answer, and one with a misread count and a count cited from another row's words
    item, other = sheet.items[wrong % len(sheet.items)], sheet.items[(wrong + 1) % len(sheet.items)]
    values = {(item.key, "votes"): (item.votes + slip) % 1000}
    proofs = {(other.key, "votes_words"): wrong % len(sheet.items)}
    [printed, *others] = placements(sheet, k=k, dx=dx, dy=dy, cut=cut)
    as_printed = place(sheet, printed)
    right, spoiled = _judged(sheet, as_printed, by=by), _judged(sheet, as_printed, by=by, values=values, proofs=proofs)
    for placement in others:
        placed = place(sheet, placement)
        assert _judged(sheet, placed, by=by) == right, placement.name
        assert _judged(sheet, placed, by=by, values=values, proofs=proofs) == spoiled, placement.name


@PROPERTY
@given(sheet=sheets(), k=st.floats(1.5, 12.0), by=st.sampled_from(["line", "word"]))
def test_a_right_answer_to_a_sheet_of_any_shape_breaks_no_rule(sheet, k, by):
    for placement in placements(sheet, k=k, dx=0.5, dy=0.5, cut=0):
        assert _judged(sheet, place(sheet, placement), by=by)["violations"] == [], placement.name


def test_a_box_is_measured_in_its_pages_unit_on_both_axes():
    from tests.support.generated_pages import Word, lay_out  # noqa: F401 - the module's own words, measured

    strip = PageSize(226.0, 2400.0)
    from extraction.ocr.blocks import BBox, OcrBlock

    word = OcrBlock(id="w", type=BlockType.WORD, page=1, text="CERO", bbox=BBox(0.1, 0.5, 0.2, 0.005),
                    page_size=strip)
    assert block_box(word) == pytest.approx(Box(22.6, 1200.0, 67.8, 1212.0))
    with pytest.raises(NoPageSize, match="carries no page size"):
        block_box(OcrBlock(id="x", type=BlockType.WORD, page=1, text="UNO", bbox=BBox(0, 0, 0.1, 0.1)))
    with pytest.raises(ValueError, match="positive"):
        PageSize(0, 10)
