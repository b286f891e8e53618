"""`value_grounded` never contradicts itself (extraction/proofs/resolve.py, extraction/proofs/words.py): it does not fire
when the text a proof cites, read as printed, shows the value, and what it says the cited text reads never shows
the value either. Doubt about how a page's words group is never evidence that a value is wrong.

A property test over generated tally sheets on pages of any shape (tests/support/generated_pages.py), with random
values (the printed count, another row's, a slip), spellings (digits, digit words padded or not) and citations
(a value's own line or words, another row's): the generator knows which numbers each printed group of words
shows, so "shows the value" is the sheet's truth, not the code's reading."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extraction.doctypes.registry import get_doctype
from extraction.proofs.grounding import supports
from extraction.proofs.resolve import universal_rules
from extraction.reading.context import reading_context
from extraction.reading.validation import run_rules
from extraction.values.numbers import parse_digit_words
from tests.support.generated_pages import Sheet, cite, place, placements, sheets

ACTA = get_doctype("acta")
GROUNDED = universal_rules(word_numbers=True)[1]


def _spell(number: int, width: int) -> str:
    return " ".join(["CERO", "UNO", "DOS", "TRES", "CUATRO", "CINCO", "SEIS", "SIETE", "OCHO", "NUEVE"][int(d)]
                    for d in str(number).zfill(width))


def _shown(sheet: Sheet, cited: set[int], *, words: bool) -> set[int]:
    """The numbers the cited words show as printed: each printed group of digits or digit words that holds a
    cited word shows its count (a value in words is shown by digit words only)."""
    out = set()
    for item in sheet.items:
        groups = [item.words] if words else [item.digits, item.words]
        if any(cited & set(group) for group in groups):
            out.add(item.votes)
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sheet=sheets(), k=st.floats(1.5, 12.0), shape=st.integers(0, 7), data=st.data())
def test_value_grounded_never_says_a_cited_text_does_not_show_what_it_shows(sheet, k, shape, data):
    options = placements(sheet, k=k, dx=0.25, dy=0.75, cut=shape)
    placed = place(sheet, options[shape % len(options)])
    ctx = reading_context(doctype=ACTA, input_mode="text", pages=placed.pages)
    cases: list[tuple[Any, set[int], bool, dict[str, Any]]] = []
    answer: dict[str, Any] = {"rows": []}
    for n, item in enumerate(sheet.items[:38]):
        source = sheet.items[data.draw(st.sampled_from([n, n, (n + 1) % 38, (n + 5) % 38]), label="cited row")]
        number = data.draw(st.sampled_from([item.votes, source.votes, item.votes + 1, max(item.votes - 10, 0)]),
                           label="value")
        in_words = data.draw(st.booleans(), label="in words")
        part = source.words if in_words else source.digits
        if data.draw(st.booleans(), label="cite both"):
            part = source.digits + source.words
        cited = sorted(data.draw(st.sets(st.sampled_from(part), min_size=1), label="cited words"))
        by = data.draw(st.sampled_from(["line", "word"]), label="cited by")
        value: Any = _spell(number, data.draw(st.sampled_from([1, 3]))) if in_words else number
        node = {"value": value, "proof": cite(placed, ctx.prompt, cited, by=by)}
        answer["rows"].append({"party": item.key, "votes": node})
        # a LINE shows every group it prints; WORDs the groups they are part of
        lines = {b.parent for p in placed.pages for b in p.blocks if b.id in {placed.block_of[i] for i in cited}}
        shown_words = cited if by == "word" else {
            i for i, block in enumerate(placed.block_of)
            if any(b.id == block and b.parent in lines for p in placed.pages for b in p.blocks)}
        cases.append((value, set(shown_words), in_words, node))
    broken = {v.fields[0]: v for v in run_rules(answer, ctx, [GROUNDED])}
    for n, (value, cited, in_words, _) in enumerate(cases):
        number = parse_digit_words(value) if in_words else value
        violation = broken.get(f"rows[{n}].votes")
        if number in _shown(sheet, cited, words=in_words):
            assert violation is None, (value, violation)
        if violation is not None and not str(violation.found).endswith("…"):
            assert not supports(value, str(violation.found), word_numbers=True), violation.message
