"""The offline template reader on generated tally sheets: from PDF text (fast) and from rapidocr (real)."""

from __future__ import annotations

import io
import time
from functools import cache

import numpy as np
import pymupdf
import pytest
from PIL import Image

from extraction.doctypes.acta.layout import PARTIES
from extraction.doctypes.acta.qr import mask_qr
from extraction.doctypes.acta.template_reader import READER_LABEL, read_acta
from extraction.ocr.blocks import BBox, BlockType, OcrBlock, OcrPage
from extraction.ocr.tagged_text import PromptDocument
from sheetgen.generate import (
    ERRORS,
    GeneratedActa,
    generate_acta,
    render_page,
    render_scan,
    spell_digits,
)
from sheetgen.layouts import TUNE_LAYOUTS
from tests.support.pages import SQUARE

TOTALS = ("valid_votes", "null_votes", "total_votes")


# ---------------------------------------------------------------- helpers


def prompt_for(pages: list[OcrPage]) -> PromptDocument:
    """Number the LINE blocks in page then reading order, as the prompt renderer will."""
    lines = [b for p in pages for b in sorted(p.blocks, key=lambda b: (b.bbox.top, b.bbox.left))
             if b.type == BlockType.LINE]
    return PromptDocument(text="\n".join(b.text for b in lines),
                          line_ids={i + 1: b.id for i, b in enumerate(lines)})


def read(pages: list[OcrPage]) -> dict:
    return read_acta(pages=pages, prompt=prompt_for(pages))


def pdf_page(pdf_bytes: bytes, *, with_words: bool = True, skew: float = 0.0) -> OcrPage:
    """A perfect 'OCR' from the PDF's own text (lines and words), optionally sheared like a rotated scan."""
    with pymupdf.open(stream=pdf_bytes, filetype="pdf") as doc:
        page = doc[0]
        w, h = page.rect.width, page.rect.height
        words = page.get_text("words")
    lines: dict[tuple[int, int], list] = {}
    for x0, y0, x1, y1, text, block_no, line_no, _ in words:
        lines.setdefault((block_no, line_no), []).append((x0 / w, y0 / h, x1 / w, y1 / h, text))
    blocks: list[OcrBlock] = []
    for n, parts in enumerate(lines.values()):

        def box(x0: float, y0: float, x1: float, y1: float) -> BBox:
            return BBox(x0, y0 + skew * x0, x1 - x0, y1 - y0 + skew * (x1 - x0))

        left, top = min(p[0] for p in parts), min(p[1] for p in parts)
        right, bottom = max(p[2] for p in parts), max(p[3] for p in parts)
        polygon = [(left, top + skew * left), (right, top + skew * right),
                   (right, bottom + skew * right), (left, bottom + skew * left)]
        line_id = f"p1-l{n}"
        blocks.append(OcrBlock(page_size=SQUARE, id=line_id, type=BlockType.LINE, page=1, text=" ".join(p[4] for p in parts),
                               bbox=box(left, top, right, bottom), polygon=polygon, order=n))
        if with_words:
            blocks += [OcrBlock(page_size=SQUARE, id=f"{line_id}-w{i}", type=BlockType.WORD, page=1, text=p[4],
                                bbox=box(*p[:4]), parent=line_id) for i, p in enumerate(parts)]
    return OcrPage(number=1, blocks=blocks, engine="pdf-text")


def rows_right(answer: dict, printed: dict) -> int:
    return sum(
        row["votes"]["value"] == want["votes"] and row["votes_words"]["value"] == want["votes_words"]
        for row, want in zip(answer["rows"], printed["rows"], strict=True)
    )


def totals_right(answer: dict, printed: dict) -> bool:
    return all(answer[k]["value"] == printed[k] and answer[f"{k}_words"]["value"] == printed[f"{k}_words"]
               for k in TOTALS)


# ---------------------------------------------------------------- rapidocr (slow: cached per module)


@cache
def ocr_engine():
    rapidocr = pytest.importorskip("rapidocr")
    return rapidocr.RapidOCR(params={"Global.use_cls": False, "Global.log_level": "error"})


def rapid_page(image: Image.Image) -> tuple[OcrPage, float]:
    """rapidocr lines and words as OcrBlocks, and the seconds it took."""
    started = time.perf_counter()
    result = ocr_engine()(np.asarray(image.convert("RGB")), return_word_box=True)
    seconds = time.perf_counter() - started
    w, h = image.size

    def box(points) -> BBox:
        xs, ys = [float(p[0]) / w for p in points], [float(p[1]) / h for p in points]
        return BBox(min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys))

    blocks: list[OcrBlock] = []
    for n, (quad, text, score, words) in enumerate(
        zip(result.boxes, result.txts, result.scores, result.word_results, strict=True)
    ):
        line_id = f"p1-l{n}"
        blocks.append(OcrBlock(page_size=SQUARE, id=line_id, type=BlockType.LINE, page=1, text=text, bbox=box(quad),
                               confidence=float(score), order=n,
                               polygon=[(float(x) / w, float(y) / h) for x, y in quad]))
        blocks += [OcrBlock(page_size=SQUARE, id=f"{line_id}-w{i}", type=BlockType.WORD, page=1, text=word, bbox=box(points),
                            confidence=float(conf), parent=line_id)
                   for i, (word, conf, points) in enumerate(words) if points is not None]
    return OcrPage(number=1, blocks=blocks, engine="rapidocr"), seconds


# (layout, scan?, errors): each sheet is OCR'd once, after masking its QR as the pipeline does.
SHEETS = {
    "classic-clean": ("classic", False, ()),
    "two-column-clean-errors": ("two-column", False, tuple(ERRORS)),
    "classic-scan-errors": ("classic", True, ("digits_words_mismatch",)),
    "two-column-scan": ("two-column", True, ()),
}


@cache
def ocr_sheet(name: str) -> tuple[GeneratedActa, OcrPage, float]:
    layout, scan, errors = SHEETS[name]
    seed = 40 + list(SHEETS).index(name)
    generated = generate_acta(seed=seed, layout=layout, errors=errors)
    if scan:
        image = Image.open(io.BytesIO(render_scan(generated.pdf_bytes, seed=seed, blur=0.9, jpeg_quality=40,
                                                  rotation_deg=1.0 if layout == "classic" else -1.0)))
    else:
        image = render_page(generated.pdf_bytes, dpi=150)
    masked, boxes = mask_qr(image)
    assert boxes, "the QR must be found and masked before OCR"
    page, seconds = rapid_page(masked)
    return generated, page, seconds


# ---------------------------------------------------------------- fast tests on the PDF's own text


def test_the_reader_says_it_is_the_offline_template_reader():
    assert READER_LABEL == "template reader (offline, no LLM)"


@pytest.mark.parametrize("layout", TUNE_LAYOUTS)  # never MEASURE_LAYOUTS: nobody tunes on them
def test_it_reads_every_row_and_total_from_perfect_text_of_each_layout(layout):
    generated = generate_acta(seed=21, layout=layout)
    answer = read([pdf_page(generated.pdf_bytes)])
    assert [row["party"] for row in answer["rows"]] == PARTIES
    assert [row["votes"]["value"] for row in answer["rows"]] == list(generated.truth.counts)
    assert rows_right(answer, generated.printed) == 38
    assert totals_right(answer, generated.printed)
    assert answer["acta_id"]["value"] == generated.truth.acta_id


def test_every_field_has_the_answer_shape():
    answer = read([pdf_page(generate_acta(seed=22, layout="classic").pdf_bytes)])
    fields = [answer["acta_id"]] + [answer[k] for t in TOTALS for k in (t, f"{t}_words")]
    fields += [row[k] for row in answer["rows"] for k in ("votes", "votes_words")]
    for field in fields:
        assert set(field) == {"value", "proof"} and field["proof"], field
    assert set(answer) == {"acta_id", "rows", *TOTALS, *(f"{t}_words" for t in TOTALS)}
    assert all(set(row) == {"party", "votes", "votes_words"} for row in answer["rows"])


def test_proofs_name_the_short_line_id_and_the_word_holding_the_digits():
    generated = generate_acta(seed=23, layout="two-column")
    page = pdf_page(generated.pdf_bytes)
    prompt = prompt_for([page])
    answer = read_acta(pages=[page], prompt=prompt)
    blocks = {b.id: b for b in page.blocks}
    psuv = answer["rows"][0]
    line_proofs = [p for p in psuv["votes"]["proof"] if p["type"] == "LINE"]
    word_proofs = [p for p in psuv["votes"]["proof"] if p["type"] == "WORD"]
    assert word_proofs == [{"type": "WORD", "line": line_proofs[0]["id"],
                            "value": generated.printed["rows"][0]["votes_text"]}]
    assert blocks[prompt.line_ids[line_proofs[0]["id"]]].text == generated.printed["rows"][0]["votes_text"]
    words_line = psuv["votes_words"]["proof"][0]
    assert blocks[prompt.line_ids[words_line["id"]]].text == generated.printed["rows"][0]["votes_words"]


def test_without_word_blocks_it_splits_lines_and_proves_with_lines_only():
    generated = generate_acta(seed=24, layout="classic")
    answer = read([pdf_page(generated.pdf_bytes, with_words=False)])
    assert rows_right(answer, generated.printed) == 38 and totals_right(answer, generated.printed)
    assert all(p["type"] == "LINE" for row in answer["rows"] for p in row["votes"]["proof"])


def test_a_whole_row_given_as_one_line_is_still_read():
    generated = generate_acta(seed=25, layout="classic")
    page = pdf_page(generated.pdf_bytes, with_words=False)
    # Merge each visual row's lines into one, as an engine may do.
    by_row: dict[float, list[OcrBlock]] = {}
    for b in page.blocks:
        by_row.setdefault(round(b.bbox.top + b.bbox.height / 2, 3), []).append(b)
    merged = []
    for n, parts in enumerate(by_row.values()):
        parts.sort(key=lambda b: b.bbox.left)
        text = "   ".join(b.text for b in parts)
        merged.append(OcrBlock(page_size=SQUARE, id=f"m{n}", type=BlockType.LINE, page=1, text=text,
                               bbox=BBox.enclosing([b.bbox for b in parts])))
    answer = read([OcrPage(number=1, blocks=merged)])
    assert rows_right(answer, generated.printed) >= 36
    assert answer["valid_votes"]["value"] == generated.printed["valid_votes"]


@pytest.mark.parametrize("skew", [0.05, -0.05])
@pytest.mark.parametrize("layout", TUNE_LAYOUTS)  # never MEASURE_LAYOUTS: nobody tunes on them
def test_a_rotated_page_is_straightened_from_line_polygons(layout, skew):
    generated = generate_acta(seed=26, layout=layout)
    # A slope of 0.05 drifts several row heights across the page: unstraightened, rows mix.
    answer = read([pdf_page(generated.pdf_bytes, skew=skew)])
    assert rows_right(answer, generated.printed) == 38 and totals_right(answer, generated.printed)


def test_an_unreadable_row_reads_none_with_the_party_line_as_proof():
    generated = generate_acta(seed=27, layout="two-column")
    page = pdf_page(generated.pdf_bytes)
    digits = generated.printed["rows"][1]["votes_text"]  # PCV
    pcv = next(b for b in page.blocks if b.type == BlockType.LINE and b.text == "PCV")
    drop = {b.id for b in page.blocks
            if b.text == digits and abs(b.bbox.top - pcv.bbox.top) < 0.01 and b.bbox.left < 0.5}
    page.blocks = [b for b in page.blocks if b.id not in drop and b.parent not in drop]
    answer = read([page])
    row = answer["rows"][1]
    assert row["votes"]["value"] is None
    assert row["votes_words"]["value"] == generated.printed["rows"][1]["votes_words"]
    assert rows_right(answer, generated.printed) == 37


def test_an_empty_page_gives_none_everywhere():
    answer = read([OcrPage(number=1)])
    assert answer["acta_id"] == {"value": None, "proof": []}
    assert all(row["votes"]["value"] is None for row in answer["rows"])
    assert answer["total_votes"]["value"] is None


def test_ocr_slips_in_digits_and_words_are_normalised():
    generated = generate_acta(seed=28, layout="classic")
    page = pdf_page(generated.pdf_bytes)
    for b in page.blocks:
        if b.type == BlockType.WORD and b.text == "CERO":
            b.text = "CER0"
        elif b.type == BlockType.WORD and b.text.isdigit() and b.text.startswith("0"):
            b.text = "O" + b.text[1:]
    answer = read([page])
    assert rows_right(answer, generated.printed) == 38 and totals_right(answer, generated.printed)


# ---------------------------------------------------------------- real OCR (rapidocr), QR masked first


@pytest.mark.parametrize("name", ["classic-clean", "two-column-clean-errors"])
def test_on_a_clean_render_rapidocr_rows_and_totals_are_read(name):
    generated, page, _ = ocr_sheet(name)
    answer = read([page])
    assert rows_right(answer, generated.printed) >= 36
    assert totals_right(answer, generated.printed)
    assert answer["acta_id"]["value"] == generated.truth.acta_id


@pytest.mark.parametrize("name", ["classic-scan-errors", "two-column-scan"])
def test_on_a_degraded_scan_most_rows_and_the_totals_are_read(name):
    generated, page, _ = ocr_sheet(name)
    answer = read([page])
    assert rows_right(answer, generated.printed) >= 34
    assert totals_right(answer, generated.printed)


def test_on_a_clean_sheet_the_read_values_are_the_qr_truth():
    generated, page, _ = ocr_sheet("classic-clean")
    answer = read([page])
    read_counts = [row["votes"]["value"] for row in answer["rows"]]
    assert sum(a == b for a, b in zip(read_counts, generated.truth.counts, strict=True)) >= 36
    assert answer["total_votes"]["value"] == generated.truth.total_votes


@pytest.mark.parametrize("name", ["two-column-clean-errors", "classic-scan-errors"])
def test_on_a_sheet_with_errors_the_reader_reports_what_is_printed_not_the_truth(name):
    generated, page, _ = ocr_sheet(name)
    answer = read([page])
    printed, truth = generated.printed, generated.truth
    wrong = next(i for i, row in enumerate(printed["rows"])
                 if row["votes_words"] != spell_digits(row["votes_text"]))
    assert answer["rows"][wrong]["votes_words"]["value"] == printed["rows"][wrong]["votes_words"]
    assert answer["rows"][wrong]["votes"]["value"] == truth.counts[wrong]
    if "sum_mismatch" in printed["errors"]:
        assert answer["valid_votes"]["value"] == printed["valid_votes"] != truth.valid_votes
    if "total_mismatch" in printed["errors"]:
        assert answer["total_votes"]["value"] == printed["total_votes"]
        valid, null = answer["valid_votes"]["value"], answer["null_votes"]["value"]
        assert answer["total_votes"]["value"] != valid + null


def test_rows_inside_a_table_found_by_the_text_layer_are_cited_by_cell_and_pass_every_rule(tmp_path):
    from extraction.doctypes.registry import get_doctype
    from extraction.ocr.blocks import SourceDocument
    from extraction.ocr.pdf_text import PdfTextEngine
    from extraction.reading.context import reading_context
    from extraction.reading.prompt import render_prompt
    from extraction.reading.validation import make_validator

    generated = generate_acta(seed=5, layout="classic")
    pdf = tmp_path / "acta.pdf"
    pdf.write_bytes(generated.pdf_bytes)
    pages = PdfTextEngine().read(SourceDocument(pdf, "pdf", []))
    prompt = render_prompt(pages)
    assert prompt.table_ids, "the classic layout is a table the text layer engine detects"
    answer = read_acta(pages=pages, prompt=prompt)
    assert any(p["type"] == "CELL" for row in answer["rows"] for p in row["votes"]["proof"])
    assert all(row["votes"]["proof"] for row in answer["rows"])
    doctype = get_doctype("acta")
    violations = make_validator(doctype, reading_context(doctype=doctype, input_mode="ocr", pages=pages))(
        doctype.parse_answer(answer)
    )
    assert violations == []


# ---------------------------------------------------------------- the acta code, wherever it is printed


def lines_page(texts: list[str]) -> OcrPage:
    blocks = [OcrBlock(page_size=SQUARE,
                       id=f"l{i}", type=BlockType.LINE, page=1, text=t, bbox=BBox(0.1, 0.05 + 0.04 * i, 0.6, 0.02),
                       order=i) for i, t in enumerate(texts)]
    return OcrPage(number=1, blocks=blocks)


@pytest.mark.parametrize("printed", ["CODIGO: 050201001.01", "CODIGO:050201001.01", "Nº 050201001.01",
                                     "050201001.01", "MESA 01   181103005.01", "COD. ACTA O50201001.01",
                                     "050201001 .01", "050201001,01"])
def test_it_finds_the_code_after_any_label_or_none(printed):
    page = lines_page(["CONSEJO NACIONAL ELECTORAL", "ESTADO: ZULIA  MUNICIPIO: MARACAIBO", printed, "PSUV 0012"])
    found = read([page])["acta_id"]
    want = "181103005.01" if "181103005" in printed else "050201001.01"
    assert found["value"] == want
    assert found["proof"] and found["proof"][0]["type"] == "LINE"


@pytest.mark.parametrize("printed", ["201301006.01.1.0001", "TEL 0261.7412345", "12050201001.01", "050201001.011"])
def test_a_longer_or_shorter_dotted_number_is_not_taken_for_the_code(printed):
    assert read([lines_page(["ACTA DE ESCRUTINIO", printed])])["acta_id"]["value"] is None


def test_the_first_code_in_reading_order_is_taken():
    page = lines_page(["050201001.01", "PSUV 0012", "181103005.01"])
    assert read([page])["acta_id"]["value"] == "050201001.01"
