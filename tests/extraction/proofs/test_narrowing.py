"""A proof citing a block that holds more than the value resolves to the words that show it, and the
value is judged on those words: never on words of another printed row, never on part of a number."""

from __future__ import annotations

from extraction.doctypes.registry import get_doctype
from extraction.ocr.blocks import BBox, BlockType, OcrBlock
from extraction.ocr.tagged_text import PromptDocument
from extraction.proofs.resolve import resolve_proofs, universal_rules
from extraction.reading.validation import run_rules
from extraction.rules.violations import RuleContext
from tests.support.pages import SQUARE

ROW_H = 0.012


def word(wid: str, text: str, left: float, top: float, parent: str, order: int) -> OcrBlock:
    return OcrBlock(page_size=SQUARE,
                    id=wid, type=BlockType.WORD, page=1, text=text, bbox=BBox(left, top, 0.01 + 0.008 * len(text), ROW_H),
                    parent=parent, order=order)


def merged_cell_page() -> tuple[PromptDocument, list[OcrBlock]]:
    """A words column whose three printed rows an engine merged into one CELL (the measured cause: the PDF
    table finder put every row of a candidate group into one cell)."""
    rows = ["CERO CINCO NUEVE", "CERO CERO SEIS", "CERO UNO DOS"]
    blocks = [OcrBlock(page_size=SQUARE, id="t", type=BlockType.TABLE, page=1, text="", bbox=BBox(0.1, 0.3, 0.8, 0.1), order=1),
              OcrBlock(page_size=SQUARE, id="c", type=BlockType.CELL, page=1, text=" ".join(rows), bbox=BBox(0.5, 0.3, 0.4, 0.05),
                       parent="t", row=1, column=2, order=2)]
    for r, text in enumerate(rows):
        top = 0.302 + r * 0.015
        line = OcrBlock(page_size=SQUARE,
                        id=f"l{r}", type=BlockType.LINE, page=1, text=text, bbox=BBox(0.5, top, 0.3, ROW_H), order=10 + r)
        blocks.append(line)
        left = 0.5
        for k, token in enumerate(text.split()):
            blocks.append(word(f"l{r}w{k}", token, left, top, line.id, 100 + 10 * r + k))
            left += blocks[-1].bbox.width + 0.004  # a word space
    return PromptDocument(text="", line_ids={}, table_ids={1: "t"}), blocks


def grounded(value, proof, prompt, blocks, *, word_numbers=True):
    ctx = RuleContext(prompt=prompt, blocks=blocks, word_numbers=word_numbers)
    answer = {"f": {"value": value, "proof": proof}}
    return [v for v in run_rules(answer, ctx, universal_rules(word_numbers=word_numbers)) if v.code == "value_grounded"] == []


CELL = [{"type": "CELL", "table": 1, "row": 1, "column": 2}]


def test_a_words_value_in_a_cell_merged_over_three_rows_is_grounded_by_its_own_row():
    prompt, blocks = merged_cell_page()
    assert grounded("CERO CERO SEIS", CELL, prompt, blocks)
    resolved = resolve_proofs({"f": {"value": "CERO CERO SEIS", "proof": CELL}},
                              RuleContext(prompt=prompt, blocks=blocks, word_numbers=True))["f"]
    # the desk boxes the three words of the second row, not the whole merged cell
    assert [r.block_id for r in resolved] == ["l1w0", "l1w1", "l1w2"] and {r.type for r in resolved} == {"WORD"}


def test_words_that_run_across_two_printed_rows_do_not_ground_a_value():
    prompt, blocks = merged_cell_page()
    # "NUEVE CERO CERO" reads 900 across the break between row 1 and row 2: nothing prints it
    assert not grounded("NUEVE CERO CERO", CELL, prompt, blocks)
    assert not grounded(59006, CELL, prompt, blocks)


def test_part_of_a_run_of_digit_words_does_not_show_a_smaller_number():
    prompt, blocks = merged_cell_page()
    # the first row spells 059: its last word alone does not show 9
    assert not grounded("NUEVE", CELL, prompt, blocks)
    assert not grounded(9, CELL, prompt, blocks)
    assert grounded(59, CELL, prompt, blocks) and grounded(6, CELL, prompt, blocks)


def test_a_value_printed_only_on_another_row_stays_ungrounded():
    # A vote moved between parties: the cited line is this party's, the number is the other party's.
    blocks = []
    for r, text in enumerate(["BR 0012 CERO CERO UNO DOS", "DDP 0031 CERO CERO TRES UNO"]):
        top = 0.2 + r * 0.02
        blocks.append(OcrBlock(page_size=SQUARE,
                               id=f"l{r}", type=BlockType.LINE, page=1, text=text, bbox=BBox(0.1, top, 0.6, ROW_H)))
        for k, token in enumerate(text.split()):
            blocks.append(word(f"l{r}w{k}", token, 0.1 + 0.08 * k, top, f"l{r}", 10 * r + k))
    prompt = PromptDocument(text="", line_ids={1: "l0", 2: "l1"})
    assert grounded(12, [{"type": "LINE", "id": 1}], prompt, blocks)
    assert not grounded(31, [{"type": "LINE", "id": 1}], prompt, blocks)
    assert not grounded("CERO CERO TRES UNO", [{"type": "LINE", "id": 1}], prompt, blocks)


def test_a_number_inside_a_longer_number_is_not_shown():
    blocks = [OcrBlock(page_size=SQUARE,
                       id="l", type=BlockType.LINE, page=1, text="Total 1 234,56", bbox=BBox(0.1, 0.2, 0.5, ROW_H))]
    blocks += [word("w0", "Total", 0.1, 0.2, "l", 0), word("w1", "1", 0.2, 0.2, "l", 1),
               word("w2", "234,56", 0.222, 0.2, "l", 2)]  # "1 234,56": a thousands space
    prompt = PromptDocument(text="", line_ids={1: "l"})
    assert not grounded(234.56, [{"type": "LINE", "id": 1}], prompt, blocks, word_numbers=False)


def test_a_name_that_wraps_over_two_rows_of_a_cell_is_judged_on_the_whole_cell():
    blocks = [OcrBlock(page_size=SQUARE, id="t", type=BlockType.TABLE, page=1, text="", bbox=BBox(0.1, 0.3, 0.8, 0.1)),
              OcrBlock(page_size=SQUARE,
                       id="c", type=BlockType.CELL, page=1, text="Decoded Leather Slim Cover Apple iPad Air 2 Zwart",
                       bbox=BBox(0.1, 0.3, 0.3, 0.04), parent="t", row=1, column=1)]
    for r, text in enumerate(["Decoded Leather Slim Cover", "Apple iPad Air 2 Zwart"]):
        blocks += [word(f"r{r}w{k}", t, 0.1 + 0.06 * k, 0.302 + r * 0.015, "x", 10 * r + k) for k, t in enumerate(text.split())]
    prompt = PromptDocument(text="", table_ids={1: "t"})
    first_cell = [{"type": "CELL", "table": 1, "row": 1, "column": 1}]
    assert grounded("Decoded Leather Slim Cover Apple iPad Air 2 Zwart", first_cell, prompt, blocks, word_numbers=False)


def test_the_acta_type_narrows_with_digit_words():
    assert get_doctype("acta").word_numbers


def test_digit_words_the_ocr_ran_together_still_show_their_number_and_no_other():
    # A scan's OCR lost the space between two digit words ("CUATROOCHO CUATRO" for CUATRO OCHO CUATRO).
    text = "CUATROOCHO CUATRO"
    line = OcrBlock(page_size=SQUARE, id="l", type=BlockType.LINE, page=1, text=text, bbox=BBox(0.5, 0.3, 0.3, ROW_H), order=1)
    blocks = [line, word("w0", "CUATROOCHO", 0.5, 0.3, "l", 2), word("w1", "CUATRO", 0.6, 0.3, "l", 3)]
    prompt = PromptDocument(text="", line_ids={1: "l"})
    proof = [{"type": "LINE", "id": 1}]
    assert grounded("CUATRO OCHO CUATRO", proof, prompt, blocks) and grounded(484, proof, prompt, blocks)
    assert not grounded("CUATRO CINCO CUATRO", proof, prompt, blocks) and not grounded(48, proof, prompt, blocks)


def _cut_row_page() -> tuple[PromptDocument, list[OcrBlock]]:
    """'CERO UNO CINCO' printed on one row that the engine cut into two lines at a wide gap, and the next
    row's 'CERO CERO SEIS' below it."""
    blocks = []
    for r, parts in enumerate([("CERO UNO", "CINCO"), ("CERO CERO", "SEIS")]):
        top, left = 0.3 + r * 0.015, 0.5
        for n, part in enumerate(parts):
            line_id = f"r{r}l{n}"
            words = []
            for k, token in enumerate(part.split()):
                words.append(word(f"{line_id}w{k}", token, left, top, line_id, 100 * r + 10 * n + k))
                left += words[-1].bbox.width + 0.004
            left += 0.03  # the wide gap the engine cut at
            blocks += [OcrBlock(page_size=SQUARE, id=line_id, type=BlockType.LINE, page=1, text=part, order=100 * r + 10 * n,
                                bbox=BBox.enclosing([w.bbox for w in words])), *words]
    return PromptDocument(text="", line_ids={1: "r0l0", 2: "r0l1", 3: "r1l0", 4: "r1l1"}), blocks


def test_a_number_the_engine_cut_into_two_lines_of_one_row_is_read_whole_from_either_piece():
    prompt, blocks = _cut_row_page()
    both = [{"type": "LINE", "id": 1}, {"type": "LINE", "id": 2}]
    assert grounded("CERO UNO CINCO", both, prompt, blocks) and grounded(15, both, prompt, blocks)
    # the words of the page print 15 on that row, whichever piece the proof cites; never the piece's 1
    assert grounded("CERO UNO CINCO", both[:1], prompt, blocks) and grounded(15, both[1:], prompt, blocks)
    assert not grounded("CERO UNO", both[:1], prompt, blocks) and not grounded(1, both[:1], prompt, blocks)
    # the first piece with the next row's last word: nothing prints 16
    assert not grounded("CERO UNO SEIS", [{"type": "LINE", "id": 1}, {"type": "LINE", "id": 4}], prompt, blocks)


def _group_merged_page() -> tuple[PromptDocument, list[OcrBlock]]:
    """Four party rows of one candidate as a table finder read a text layer ruled only around the group: the
    names in one cell, the digit words in one cell, the digits ruled per row. Three rows print 0."""
    rows = [("PSUV", "0012", "CERO CERO UNO DOS"), ("PCV", "0000", "CERO CERO CERO CERO"),
            ("TUPAMARO", "0000", "CERO CERO CERO CERO"), ("PPT", "0000", "CERO CERO CERO CERO")]
    blocks = [OcrBlock(page_size=SQUARE, id="t", type=BlockType.TABLE, page=1, text="", bbox=BBox(0.1, 0.3, 0.8, 0.1), order=1),
              OcrBlock(page_size=SQUARE, id="names", type=BlockType.CELL, page=1, text=" ".join(r[0] for r in rows),
                       bbox=BBox(0.1, 0.3, 0.15, 0.06), parent="t", row=1, column=1, row_span=4, order=2),
              OcrBlock(page_size=SQUARE, id="words", type=BlockType.CELL, page=1, text=" ".join(r[2] for r in rows),
                       bbox=BBox(0.5, 0.3, 0.4, 0.06), parent="t", row=1, column=3, row_span=4, order=3)]
    for r, (party, digits, words) in enumerate(rows):
        top = 0.302 + r * 0.015
        blocks.append(OcrBlock(page_size=SQUARE,
                               id=f"d{r}", type=BlockType.CELL, page=1, text=digits, bbox=BBox(0.3, top - 0.002, 0.1, 0.015),
                               parent="t", row=r + 1, column=2, order=4 + r))
        for n, (text, left) in enumerate([(party, 0.1), (digits, 0.3), (words, 0.5)]):
            line = OcrBlock(page_size=SQUARE,
                            id=f"l{r}.{n}", type=BlockType.LINE, page=1, text=text, bbox=BBox(left, top, 0.2, ROW_H),
                            order=10 + 10 * r + n)
            blocks.append(line)
            for k, token in enumerate(text.split()):
                blocks.append(word(f"l{r}.{n}w{k}", token, left, top, line.id, 100 + 10 * r + k))
                left += blocks[-1].bbox.width + 0.004
    return PromptDocument(text="", line_ids={}, table_ids={1: "t"}), blocks


def test_a_value_a_merged_cell_shows_on_several_rows_resolves_to_the_fields_own_row():
    from extraction.doctypes.acta.rules import row_proof_party
    from extraction.reading.context import reading_context

    prompt, blocks = _group_merged_page()
    acta = get_doctype("acta")
    words_cell = [{"type": "CELL", "table": 1, "row": 1, "column": 3}]
    answer = {"rows": [{"party": p, "votes": {"value": int(d), "proof": [{"type": "CELL", "table": 1, "row": r + 1,
                                                                          "column": 2}]},
                        "votes_words": {"value": w, "proof": words_cell}}
                       for r, (p, d, w) in enumerate([("PSUV", "0012", "CERO CERO UNO DOS"),
                                                       ("PCV", "0000", "CERO CERO CERO CERO"),
                                                       ("TUPAMARO", "0000", "CERO CERO CERO CERO"),
                                                       ("PPT", "0000", "CERO CERO CERO CERO")])]}
    ctx = reading_context(doctype=acta, input_mode="text", prompt=prompt, blocks=blocks)
    assert run_rules(answer, ctx, [row_proof_party, *universal_rules(word_numbers=True)]) == []
    # the boxes are PPT's own words, not the first row of the cell that reads the same (PCV's)
    ppt = resolve_proofs(answer, ctx)["rows[3].votes_words"]
    assert [f.block_id for f in ppt] == [f"l3.2w{k}" for k in range(4)]
    # a vote moved onto PPT's row from PSUV's is still told: only PSUV's row prints 12
    answer["rows"][3]["votes_words"]["value"] = "CERO CERO UNO DOS"
    [broken] = run_rules(answer, ctx, [row_proof_party])
    assert (broken.fields, broken.found) == (("rows[3].votes_words",), "PSUV")


def test_a_row_whose_label_the_ocr_garbled_is_no_evidence_of_another_partys_row():
    """Two blocks side by side: AD's row on the left, UNTC's on the right with its name read 'UNTC2'. UNTC's
    cited 41 has AD's name before it on the page row, but its own row's label stands between."""
    from extraction.doctypes.acta.rules import row_proof_party
    from extraction.reading.context import reading_context

    blocks, left = [], 0.05
    for n, text in enumerate(["AD", "11", "UNO UNO", "EDMUNDO GONZALEZ", "UNTC2", "41", "CUATRO UNO"]):
        line = OcrBlock(page_size=SQUARE, id=f"l{n}", type=BlockType.LINE, page=1, text=text, bbox=BBox(left, 0.4, 0.08, ROW_H),
                        order=10 * n)
        blocks.append(line)
        for k, token in enumerate(text.split()):
            blocks.append(word(f"l{n}w{k}", token, left, 0.4, line.id, 10 * n + k + 1))
            left += blocks[-1].bbox.width + 0.004
        left += 0.05
    prompt = PromptDocument(text="", line_ids={n + 1: f"l{n}" for n in range(7)})
    answer = {"rows": [{"party": "UNTC", "votes": {"value": 41, "proof": [{"type": "LINE", "id": 6}]},
                        "votes_words": {"value": "CUATRO UNO", "proof": [{"type": "LINE", "id": 7}]}},
                       {"party": "AD", "votes": {"value": 41, "proof": [{"type": "LINE", "id": 6}]},
                        "votes_words": {"value": "UNO UNO", "proof": [{"type": "LINE", "id": 3}]}}]}
    ctx = reading_context(doctype=get_doctype("acta"), input_mode="text", prompt=prompt, blocks=blocks)
    # UNTC's own values: no other party's name is their row's label; AD's votes read off UNTC's row are not told
    # either, since nothing on that row names a party: only evidence makes a rule fire
    assert run_rules(answer, ctx, [row_proof_party]) == []
