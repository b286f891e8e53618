"""Proof resolution (id, exact word, fuzzy word, cell) and the universal proof rules on tampered answers."""

from __future__ import annotations

from decimal import Decimal

import pytest

from extraction.doctypes.acta import DOCTYPE as ACTA
from extraction.doctypes.acta.layout import DIGIT_WORDS, PARTIES
from extraction.ocr.blocks import BBox, BlockType, OcrBlock
from extraction.ocr.tagged_text import PromptDocument
from extraction.proofs.grounding import supports
from extraction.proofs.resolve import resolve_field, resolve_proofs, universal_rules
from extraction.reading.context import reading_context
from extraction.reading.validation import make_validator, run_rules
from extraction.rules.violations import RuleContext
from tests.support.pages import SQUARE

# --- a small document built by hand: lines with words, and one table ---------------------------------


def line_blocks(block_id: str, text: str, *, top: float, page: int = 1, order: int = 0) -> list[OcrBlock]:
    line = OcrBlock(
        page_size=SQUARE,
        id=block_id, type=BlockType.LINE, page=page, text=text, bbox=BBox(0.1, top, 0.8, 0.02), order=order
    )
    words = [
        OcrBlock(
            page_size=SQUARE,
            id=f"{block_id}w{i}",
            type=BlockType.WORD,
            page=page,
            text=w,
            bbox=BBox(0.1 + 0.05 * i, top, 0.04, 0.02),
            parent=block_id,
            order=order * 100 + i,
        )
        for i, w in enumerate(text.split())
    ]
    return [line, *words]


def cell(table: str, row: int, column: int, text: str, **kw) -> OcrBlock:
    return OcrBlock(
        page_size=SQUARE,
        id=f"{table}r{row}c{column}",
        type=BlockType.CELL,
        page=1,
        text=text,
        bbox=BBox(0.1 * column, 0.5 + 0.03 * row, 0.1, 0.03),
        parent=table,
        row=row,
        column=column,
        **kw,
    )


@pytest.fixture(scope="module")
def doc() -> tuple[PromptDocument, list[OcrBlock]]:
    blocks = [
        *line_blocks("a", "Invoice 42183017 date 20/03/2023", top=0.05, order=1),
        *line_blocks("b", "Temperature 4°C Thuiskopieheffing 3.50", top=0.08, order=2),
        *line_blocks("c", "Total EUR 1.234,56", top=0.11, order=3),
        *line_blocks("d", "Reference XJ-7781 Due 1,234.56 USD", top=0.14, order=4),
        OcrBlock(page_size=SQUARE, id="t", type=BlockType.TABLE, page=1, text="", bbox=BBox(0.1, 0.5, 0.8, 0.2), order=5),
        cell("t", 1, 1, "Item"),
        cell("t", 1, 2, "Qty"),
        cell("t", 1, 3, "Amount"),
        cell("t", 2, 1, "Chair"),
        cell("t", 2, 2, "2"),
        cell("t", 2, 3, "140.00"),
        cell("t", 3, 1, "Oil"),
        cell("t", 3, 2, "1"),
        cell("t", 3, 3, "0.90"),
        cell("t", 4, 1, "Total (both)", column_span=2),
        cell("t", 4, 3, "140.90"),
        OcrBlock(
            page_size=SQUARE,
            id="bare", type=BlockType.LINE, page=2, text="Owner Ana Pérez 1/3", bbox=BBox(0.1, 0.1, 0.8, 0.02)
        ),
    ]
    prompt = PromptDocument(
        text="(rendered elsewhere)", line_ids={1: "a", 2: "b", 3: "c", 4: "d", 5: "bare"}, table_ids={1: "t"}
    )
    return prompt, blocks


def resolve_one(doc, *proof):
    prompt, blocks = doc
    return resolve_proofs({"f": {"value": "x", "proof": list(proof)}}, RuleContext(prompt=prompt, blocks=blocks))["f"]


def test_a_line_id_resolves_to_its_block_by_id(doc):
    [found] = resolve_one(doc, {"type": "LINE", "id": 3})
    assert (found.block_id, found.method, found.score, found.text) == ("c", "id", 1.0, "Total EUR 1.234,56")
    assert found.page == 1 and found.bbox == BBox(0.1, 0.11, 0.8, 0.02) and found.type == "LINE"


def test_an_unknown_id_resolves_to_nothing(doc):
    assert resolve_one(doc, {"type": "LINE", "id": 99}) == []
    assert resolve_one(doc, {"type": "TABLE", "id": 2}) == []
    assert resolve_one(doc, {"type": "NOTE", "id": 1}) == []


def test_a_word_resolves_exactly_among_the_words_of_its_line(doc):
    [found] = resolve_one(doc, {"type": "WORD", "line": 2, "value": "4°C"})
    assert (found.block_id, found.method, found.type) == ("bw1", "exact", "WORD")


def test_a_word_value_spanning_several_words_resolves_to_each_of_them(doc):
    found = resolve_one(doc, {"type": "WORD", "line": 3, "value": "EUR 1.234,56"})
    assert [f.block_id for f in found] == ["cw1", "cw2"] and {f.method for f in found} == {"exact"}


def test_a_loosely_copied_word_resolves_fuzzily_with_its_score(doc):
    [found] = resolve_one(doc, {"type": "WORD", "line": 2, "value": "Thuiskopiehefflng"})
    assert found.block_id == "bw2" and found.method == "fuzzy" and 0.8 <= found.score < 1


def test_a_word_on_the_wrong_line_is_found_among_the_words_of_its_page(doc):
    [found] = resolve_one(doc, {"type": "WORD", "line": 1, "value": "XJ-7781"})
    assert found.block_id == "dw1" and found.method == "fuzzy"


def test_a_word_that_is_nowhere_does_not_resolve(doc):
    assert resolve_one(doc, {"type": "WORD", "line": 1, "value": "Zanzibar"}) == []


def test_a_word_of_a_line_without_word_blocks_resolves_to_the_line(doc):
    [found] = resolve_one(doc, {"type": "WORD", "line": 5, "value": "Ana Perez"})
    assert found.block_id == "bare" and found.method == "exact"


def test_a_cell_resolves_by_table_row_and_column(doc):
    [found] = resolve_one(doc, {"type": "CELL", "table": 1, "row": 2, "column": 3})
    assert (found.block_id, found.method, found.text, found.type) == ("tr2c3", "id", "140.00", "CELL")
    [spanned] = resolve_one(doc, {"type": "CELL", "table": 1, "row": 4, "column": 2})
    assert spanned.block_id == "tr4c1"


def test_a_cell_whose_value_is_elsewhere_in_the_table_resolves_to_the_cell_holding_it(doc):
    [found] = resolve_one(doc, {"type": "CELL", "table": 1, "row": 2, "column": 3, "value": "0.90"})
    assert found.block_id == "tr3c3" and found.method == "exact"


def test_a_cell_whose_value_is_nowhere_still_resolves_to_the_addressed_cell_with_score_zero(doc):
    [found] = resolve_one(doc, {"type": "CELL", "table": 1, "row": 2, "column": 3, "value": "999.99"})
    assert found.block_id == "tr2c3" and found.score == 0.0


def test_a_table_resolves_with_the_text_of_its_cells(doc):
    [found] = resolve_one(doc, {"type": "TABLE", "id": 1})
    assert found.block_id == "t" and "Chair | 2 | 140.00" in found.text


def test_resolve_proofs_covers_every_field_and_dedupes_blocks(doc):
    prompt, blocks = doc
    answer = {
        "number": {"value": "42183017", "proof": [{"type": "LINE", "id": 1}, {"type": "LINE", "id": 1}]},
        "items": [{"qty": {"value": 2, "proof": []}}],
    }
    resolved = resolve_proofs(answer, RuleContext(prompt=prompt, blocks=blocks))
    assert list(resolved) == ["number", "items[0].qty"]
    # the cited line holds more than the number: the proof is the one word that shows it
    assert [r.block_id for r in resolved["number"]] == ["aw1"] and resolved["items[0].qty"] == []
    assert resolved["number"][0].to_dict()["bbox"] == pytest.approx({"left": 0.15, "top": 0.05, "width": 0.04, "height": 0.02})
    assert resolved["number"][0].type == "WORD" and resolved["number"][0].method == "id"


# --- does the text support the value? ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1234.56, "Total EUR 1.234,56"),
        (Decimal("1234.56"), "Due 1,234.56 USD"),
        ("1.234,56", "1,234.56"),
        (56, "PSUV 0056"),
        ("2023-03-20", "date 20/03/2023"),
        ("2023-03-20", "on March 20, 2023"),
        (0.5, "a half (50%)"),
        ("1/3", "Ana Pérez 1/3"),
        ("Ana Perez", "Owner ANA PÉREZ"),
        ("Coolblue B.V.", "Coolblue BV, Weena 664"),
        ("INV/2023/03/0008", "Invoice INV/2023/03/0008"),
    ],
)
def test_numbers_dates_and_text_are_supported_whatever_their_writing(value, text):
    assert supports(value, text)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1234.65, "Total EUR 1.234,56"),
        (57, "PSUV 0056"),
        ("2023-03-21", "date 20/03/2023"),
        ("050201001.02", "ACTA 050201001.01"),
        ("Azure Interior", "Deco Addict, 77 Santa Barbara"),
    ],
)
def test_a_different_value_is_not_supported(value, text):
    assert not supports(value, text)


def test_digit_words_support_a_count_only_when_asked_and_only_when_they_say_that_number():
    text = "CERO CERO CINCO SEIS"
    assert supports(56, text, word_numbers=True) and not supports(56, text)
    assert not supports(57, text, word_numbers=True)
    assert supports("CERO CERO CINCO SEIS", "PSUV 56 CERO CERO CINCO SEIS", word_numbers=True)
    assert not supports("CERO CERO CINCO SIETE", "PSUV 56 CERO CERO CINCO SEIS", word_numbers=True)


def test_digit_words_the_ocr_ran_into_the_numeral_before_them_still_show_their_number():
    # '111UNO UNO UNO': the space between the figures and the words lost; the words say 111 all the same
    assert supports("UNO UNO UNO", "111UNO UNO UNO", word_numbers=True)
    assert supports("UNO CUATRO", "14UNO CUATRO", word_numbers=True)
    assert not supports("UNO CINCO", "14UNO CUATRO", word_numbers=True)
    assert not supports("CUATRO", "14UNO CUATRO", word_numbers=True)


def test_a_count_of_one_citing_a_line_reading_zero_is_not_supported():
    assert not supports(1, "0 CERO", word_numbers=True)
    assert not supports("UNO", "0 CERO", word_numbers=True)
    assert supports(0, "0 CERO", word_numbers=True)


# --- the universal rules -----------------------------------------------------------------------------


def test_proof_found_flags_a_value_without_proof_and_a_proof_that_points_nowhere(doc):
    prompt, blocks = doc
    answer = {
        "a": {"value": "x", "proof": []},
        "b": {"value": "y", "proof": [{"type": "LINE", "id": 42}]},
        "c": {"value": None, "proof": []},
    }
    found = [
        v
        for v in run_rules(answer, RuleContext(prompt=prompt, blocks=blocks), universal_rules())
        if v.code == "proof_found"
    ]
    assert [v.fields for v in found] == [("a",), ("b",)]
    assert "has no proof" in found[0].message and found[1].found == "LINE 42"
    assert "points at nothing" in found[1].message


def test_value_grounded_flags_a_value_its_cited_text_does_not_show(doc):
    prompt, blocks = doc
    answer = {"total": {"value": 1243.56, "proof": [{"type": "LINE", "id": 3}]}}
    [v] = run_rules(answer, RuleContext(prompt=prompt, blocks=blocks), universal_rules())
    assert v.code == "value_grounded" and v.fields == ("total",)
    assert (
        v.message == 'total: the answer says 1243.56 but the cited text reads "Total EUR 1.234,56", '
        "which does not show that value"
    )
    assert v.expected == 1243.56 and v.found == "Total EUR 1.234,56"


def test_without_a_prompt_the_proof_rules_have_nothing_to_check():
    answer = {"total": {"value": 1, "proof": []}}
    assert run_rules(answer, RuleContext(), universal_rules()) == []


# --- tampered tally sheets ---------------------------------------------------------------------------


def words(n: int) -> str:
    return " ".join(DIGIT_WORDS[int(d)] for d in f"{n:04d}")


TRUE_VOTES = [
    50,
    6,
    0,
    3,
    1,
    0,
    12,
    0,
    2,
    0,
    1,
    0,
    0,
    30,
    4,
    0,
    1,
    0,
    0,
    7,
    0,
    0,
    1,
    0,
    0,
    0,
    0,
    0,
    0,
    2,
    0,
    1,
    0,
    40,
    5,
    9,
    0,
    1,
]
VALID, NULL = sum(TRUE_VOTES), 4


@pytest.fixture(scope="module")
def sheet() -> RuleContext:
    texts = ["ACTA 050201001.01"]
    texts += [f"{party} {v} {words(v)}" for party, v in zip(PARTIES, TRUE_VOTES, strict=True)]
    texts += [
        f"VOTOS VALIDOS {VALID} {words(VALID)}",
        f"VOTOS NULOS {NULL} {words(NULL)}",
        f"TOTAL VOTOS {VALID + NULL} {words(VALID + NULL)}",
    ]
    blocks = [b for i, t in enumerate(texts, 1) for b in line_blocks(f"L{i}", t, top=0.02 * i, order=i)]
    prompt = PromptDocument(text="", line_ids={i: f"L{i}" for i in range(1, len(texts) + 1)})
    return reading_context(doctype=ACTA, input_mode="text", prompt=prompt, blocks=blocks)


def acta_answer(votes: list[int], *, valid: int = VALID, null: int = NULL) -> dict:
    def f(value, line):
        return {"value": value, "proof": [{"type": "LINE", "id": line}]}

    n = len(PARTIES)
    return {
        "acta_id": f("050201001.01", 1),
        "rows": [
            {"party": p, "votes": f(v, i + 2), "votes_words": f(words(v), i + 2)}
            for i, (p, v) in enumerate(zip(PARTIES, votes, strict=True))
        ],
        "valid_votes": f(valid, n + 2),
        "valid_votes_words": f(words(valid), n + 2),
        "null_votes": f(null, n + 3),
        "null_votes_words": f(words(null), n + 3),
        "total_votes": f(valid + null, n + 4),
        "total_votes_words": f(words(valid + null), n + 4),
    }


def grounded_failures(answer: dict, ctx: RuleContext) -> list[str]:
    violations = make_validator(ACTA, ctx)(answer)
    return [path for v in violations if v.code == "value_grounded" for path in v.fields]


def test_the_true_reading_of_the_sheet_passes_every_rule(sheet):
    assert make_validator(ACTA, sheet)(acta_answer(TRUE_VOTES)) == []


def test_it_catches_a_value_moved_between_rows_to_make_the_sum_close(sheet):
    votes = list(TRUE_VOTES)
    votes[6], votes[13] = 0, votes[13] + votes[6]  # MEP's 12 moved onto AD: the sum still closes
    failures = grounded_failures(acta_answer(votes), sheet)
    assert {"rows[6].votes", "rows[6].votes_words", "rows[13].votes", "rows[13].votes_words"} <= set(failures)


def test_it_catches_an_all_zero_answer(sheet):
    answer = acta_answer([0] * len(PARTIES), valid=0, null=0)
    failures = set(grounded_failures(answer, sheet))
    nonzero = [i for i, v in enumerate(TRUE_VOTES) if v]
    assert {f"rows[{i}].votes" for i in nonzero} <= failures
    assert {"valid_votes", "null_votes", "total_votes"} <= failures
    assert not any(f"rows[{i}].votes" in failures for i, v in enumerate(TRUE_VOTES) if v == 0)


def test_it_catches_a_vote_shifted_between_two_parties_of_the_same_candidate(sheet):
    votes = list(TRUE_VOTES)
    votes[0], votes[1] = votes[0] - 1, votes[1] + 1  # PSUV -> PCV, both Maduro: totals unchanged
    answer = acta_answer(votes)
    violations = make_validator(ACTA, sheet)(answer)
    assert {v.code for v in violations} == {"value_grounded"}  # arithmetic alone cannot see it
    assert set(grounded_failures(answer, sheet)) == {
        "rows[0].votes",
        "rows[0].votes_words",
        "rows[1].votes",
        "rows[1].votes_words",
    }


def test_it_catches_a_one_read_from_a_line_that_says_zero(sheet):
    votes = list(TRUE_VOTES)
    votes[2], votes[0] = 1, votes[0] - 1
    answer = acta_answer(votes)
    assert "rows[2].votes" in grounded_failures(answer, sheet)


def test_a_field_changed_in_place_between_two_checks_is_resolved_again(sheet):
    # Within one check the rules share each field's resolved proofs; nothing of that answer outlives it.
    answer = acta_answer(list(TRUE_VOTES))
    assert grounded_failures(answer, sheet) == [] and sheet.answer_memo is None
    first, second = answer["rows"][0]["votes"], answer["rows"][1]["votes"]
    first["proof"], second["proof"] = second["proof"], first["proof"]  # the same dicts, each citing the other's line
    assert {"rows[0].votes", "rows[1].votes"} <= set(grounded_failures(answer, sheet))


def test_a_hyphen_inside_a_code_is_not_a_minus_sign():
    assert supports(7781, "Reference XJ-7781") and supports(-5, "balance -5.00")


def test_an_identifier_with_digits_is_grounded_by_its_verbatim_text_not_read_as_a_number():
    from extraction.proofs.grounding import supports

    assert supports("P-0001", "PROPERTY DEED P-0001")
    assert not supports("P-0007", "PROPERTY DEED P-0001")
    assert not supports("56", "0 CERO")


def test_a_currency_code_is_grounded_by_the_symbol_printed_on_the_page():
    from extraction.proofs.grounding import supports

    assert supports("EUR", "Totaal € 717,97")
    assert supports("USD", "Total $4.11")
    assert supports("SEK", "Summa 1 200 kr")
    assert not supports("EUR", "Total $4.11")
    assert not supports("SEK", "KRAKOW office")
    assert not supports("ZAR", "R 100")  # a lone letter shows nothing
    assert supports("INR", "Room Charges Rs 1939") and supports("INR", "Discount of Rs. -40.00")
    assert not supports("INR", "COLOURS 12")


def test_fields_citing_the_same_proof_share_a_resolution_only_for_the_same_value(sheet):
    # Resolutions are kept across checks by a field's value and proofs: 1, 1.0 and True are different values.
    proof = [{"type": "LINE", "id": 1}]
    nodes = [{"value": v, "proof": [dict(p) for p in proof]} for v in (1, 1.0, True, 1)]
    resolved = [resolve_field(node, sheet) for node in nodes]
    keys = {k for k in sheet.cache["resolved"] if isinstance(k, tuple) and k[0] == "field"}
    assert {("field", shown, repr(proof), None) for shown in ("1", "1.0", "True")} <= keys
    assert resolved[0] == resolved[3]
