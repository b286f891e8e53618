"""A second engine's reading of the places the proofs cite: agrees, disagrees, or says nothing."""

from __future__ import annotations

from extraction.confidence.second_engine import page_words, second_engine_agreement
from extraction.ocr.blocks import BBox, BlockType, OcrBlock, OcrPage
from extraction.ocr.tagged_text import PromptDocument
from extraction.rules.violations import RuleContext
from tests.support.pages import SQUARE

H = 0.02


def line(lid: str, text: str, top: float) -> list[OcrBlock]:
    out = [OcrBlock(page_size=SQUARE, id=lid, type=BlockType.LINE, page=1, text=text, bbox=BBox(0.1, top, 0.5, H))]
    left = 0.1
    for i, token in enumerate(text.split()):
        out.append(OcrBlock(page_size=SQUARE, id=f"{lid}w{i}", type=BlockType.WORD, page=1, text=token,
                            bbox=BBox(left, top, 0.02 * len(token), H), parent=lid, order=i))
        left += 0.02 * len(token) + 0.01
    return out


BLOCKS = [*line("a", "VOTOS 0056", 0.2), *line("b", "CERO UNO", 0.3)]
CTX = RuleContext(prompt=PromptDocument(text="", line_ids={1: "a", 2: "b"}, table_ids={}), blocks=BLOCKS,
                  word_numbers=True)
ANSWER = {"votes": {"value": 56, "proof": [{"type": "LINE", "id": 1}]},
          "words": {"value": "CERO UNO", "proof": [{"type": "LINE", "id": 2}]},
          "empty": {"value": None, "proof": [{"type": "LINE", "id": 1}]},
          "unproved": {"value": "X", "proof": []}}


def agreement(words):
    return second_engine_agreement(answer=ANSWER, ctx=CTX, words_by_page={1: words})


def test_a_second_engine_that_reads_the_cited_place_alike_agrees():
    # its boxes are drawn a little differently; "CERO" sits a hair lower than "UNO" on the same printed line
    words = [["VOTOS", 0.1, 0.201, 0.1, H], ["0056", 0.215, 0.199, 0.08, H],
             ["CERO", 0.1, 0.303, 0.08, H], ["UNO", 0.19, 0.299, 0.06, H]]
    assert agreement(words) == {"votes": True, "words": True}


def test_a_second_engine_that_reads_another_number_or_nothing_there_disagrees():
    assert agreement([["0058", 0.215, 0.2, 0.08, H], ["UNO", 0.1, 0.3, 0.06, H], ["CERO", 0.17, 0.3, 0.08, H]]) == {
        "votes": False, "words": False}  # 58 is not 56; UNO CERO is not CERO UNO
    assert agreement([["0056", 0.7, 0.6, 0.08, H]]) == {"votes": False, "words": False}  # its words are elsewhere


def test_fields_on_pages_it_did_not_read_have_no_verdict():
    assert second_engine_agreement(answer=ANSWER, ctx=CTX, words_by_page={2: [["0056", 0.2, 0.2, 0.08, H]]}) == {}
    assert second_engine_agreement(answer=ANSWER, ctx=CTX, words_by_page={}) == {}


def test_a_page_gives_its_words_or_its_lines_where_the_engine_gave_no_words():
    page = OcrPage(number=1, blocks=BLOCKS)
    assert page_words(page)[0] == ["VOTOS", 0.1, 0.2, 0.1, H]
    lines_only = OcrPage(number=1, blocks=[b for b in BLOCKS if b.type is BlockType.LINE])
    assert [w[0] for w in page_words(lines_only)] == ["VOTOS 0056", "CERO UNO"]
