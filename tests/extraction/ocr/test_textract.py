"""The Textract adapter: real recorded responses, box alignment against the page images, and the engine."""

from __future__ import annotations

import copy
import json
from collections import Counter
from pathlib import Path

import boto3
import numpy as np
import pytest
from botocore.stub import ANY, Stubber
from PIL import Image

from extraction.ocr.blocks import BBox, BlockType, OcrError, OcrPage, PageImage, SourceDocument
from extraction.ocr.geometry import PageSize
from extraction.ocr.textract import TextractEngine
from extraction.ocr.textract_json import load_textract_json, parse_textract, reading_order
from tests.support.pages import LETTER, textract_sizes
from tests.support.paths import shared_data

RESPONSES = [
    "employment-application",
    "financial-document",
    "merged-cells",
    "multi-page-tables",
    "multicol",
    "paystub",
    "twocol-header-footer",
]
IMAGES = {
    "paystub": "paystub.jpg",
    "financial-document": "financial-document.png",
    "multicol": "multicol.png",
    "twocol-header-footer": "twocol-header-footer.png",
}


def textract_data() -> Path:
    return shared_data("textract")


def raw(name: str) -> dict:
    return json.loads((textract_data() / f"{name}.textract.json").read_text())


def sizes(name: str) -> dict[int, PageSize]:
    return textract_sizes(textract_data() / f"{name}.textract.json")


_parsed: dict[str, list[OcrPage]] = {}


def parsed(name: str) -> list[OcrPage]:
    if name not in _parsed:
        _parsed[name] = parse_textract(raw(name), sizes=sizes(name))
    return _parsed[name]


def blocks(name: str, kind: BlockType) -> list:
    return [b for p in parsed(name) for b in p.blocks if b.type is kind]


# ------------------------------------------------------------------------------------------ parsing


@pytest.mark.parametrize("name", RESPONSES)
def test_every_kept_block_type_comes_out_as_often_as_in_the_json(name):
    data = raw(name)
    counts = Counter(b["BlockType"] for b in data["Blocks"])
    folded = sum(
        len(r["Ids"]) for b in data["Blocks"] if b["BlockType"] == "MERGED_CELL"
        for r in b.get("Relationships", []) if r["Type"] == "CHILD"
    )
    got = Counter(b.type for p in parsed(name) for b in p.blocks)
    for kind in ("PAGE", "LINE", "WORD", "TABLE"):
        assert got[BlockType(kind)] == counts[kind], kind
    assert got[BlockType.CELL] == counts["CELL"] - folded + counts["MERGED_CELL"]
    assert set(got) <= set(BlockType)


@pytest.mark.parametrize("name", RESPONSES)
def test_tables_keep_the_row_and_column_count_of_the_json(name):
    data = raw(name)
    by_id = {b["Id"]: b for b in data["Blocks"]}
    for table in (b for b in data["Blocks"] if b["BlockType"] == "TABLE"):
        cells = [by_id[i] for r in table["Relationships"] if r["Type"] == "CHILD" for i in r["Ids"]]
        mine = [b for b in blocks(name, BlockType.CELL) if b.parent == table["Id"]]
        assert max(c.row + c.row_span - 1 for c in mine) == max(c["RowIndex"] for c in cells)
        assert max(c.column + c.column_span - 1 for c in mine) == max(c["ColumnIndex"] for c in cells)
        covered = Counter((r, c) for b in mine for r in range(b.row, b.row + b.row_span)
                          for c in range(b.column, b.column + b.column_span))
        assert set(covered) == {(c["RowIndex"], c["ColumnIndex"]) for c in cells}
        assert max(covered.values()) == 1  # every grid slot is covered by exactly one cell


@pytest.mark.parametrize("name", RESPONSES)
def test_parents_link_words_to_lines_lines_and_tables_to_pages_and_cells_to_tables(name):
    for page in parsed(name):
        by_id = {b.id: b for b in page.blocks}
        (page_block,) = [b for b in page.blocks if b.type is BlockType.PAGE]
        for b in page.blocks:
            assert b.page == page.number
            expected = {
                BlockType.PAGE: None, BlockType.LINE: BlockType.PAGE, BlockType.TABLE: BlockType.PAGE,
                BlockType.WORD: BlockType.LINE, BlockType.CELL: BlockType.TABLE,
            }[b.type]
            assert (by_id[b.parent].type if b.parent else None) is expected, b
            assert b.confidence is None or 0.0 <= b.confidence <= 1.0
            assert 0.0 <= b.bbox.left <= b.bbox.right <= 1.0 and 0.0 <= b.bbox.top <= b.bbox.bottom <= 1.0
        for line in (b for b in page.blocks if b.type is BlockType.LINE):
            words = [w.text for w in page.blocks if w.parent == line.id]
            assert " ".join(words) == line.text
        assert page_block.id in {b["Id"] for b in raw(name)["Blocks"]}  # Textract's ids are kept
        assert sorted(b.order for b in page.blocks) == list(range(len(page.blocks)))


def test_confidence_is_scaled_from_percent_to_a_fraction():
    data = raw("paystub")
    first_line = next(b for b in data["Blocks"] if b["BlockType"] == "LINE")
    mine = next(b for b in blocks("paystub", BlockType.LINE) if b.id == first_line["Id"])
    assert mine.confidence == pytest.approx(first_line["Confidence"] / 100)


def test_cell_text_is_built_from_its_child_words():
    cells = {(c.row, c.column): c.text for c in blocks("paystub", BlockType.CELL)}
    earnings = [c for c in blocks("paystub", BlockType.TABLE) if c.text.startswith("Earnings")]
    assert len(earnings) == 1
    cells_of_table = [c for c in blocks("paystub", BlockType.CELL) if c.parent == earnings[0].id]
    mine = {(c.row, c.column): c.text for c in cells_of_table}
    assert mine[(2, 1)] == "Regular" and mine[(2, 4)] == "320.00" and mine[(6, 4)] == "$ 452.43"
    assert cells  # the grid is not empty


def test_merged_cells_are_folded_into_one_spanning_cell_in_the_invoice():
    cells = blocks("merged-cells", BlockType.CELL)
    monday = [c for c in cells if c.text == "Monday, February 28, 2022" and c.row_span > 1]
    assert len(monday) == 1  # (the same date also stands, unmerged, in the "Start Date" table)
    assert (monday[0].row, monday[0].column, monday[0].row_span, monday[0].column_span) == (3, 1, 2, 1)
    merged_ids = {b["Id"] for b in raw("merged-cells")["Blocks"] if b["BlockType"] == "MERGED_CELL"}
    assert merged_ids <= {c.id for c in cells}
    folded = {
        i for b in raw("merged-cells")["Blocks"] if b["BlockType"] == "MERGED_CELL"
        for r in b["Relationships"] for i in r["Ids"]
    }
    assert not folded & {c.id for c in cells}  # the covered child cells are gone
    total_row = [c for c in cells if c.parent == monday[0].parent and c.row == 9 and c.column == 1]
    assert total_row[0].column_span == 3 and total_row[0].text == ""


def test_merged_cells_in_the_financial_document_carry_their_children_text():
    cells = blocks("financial-document", BlockType.CELL)
    spans = {(c.row, c.column): c for c in cells if c.row_span * c.column_span > 1}
    assert set(spans) == {(1, 1), (2, 2), (8, 1)}
    assert spans[(2, 2)].column_span == 5 and spans[(2, 2)].text == "(in millions of SDRs)"
    assert spans[(8, 1)].column_span == 6 and spans[(8, 1)].text == "(in millions of U.S. dollars)"
    assert spans[(1, 1)].row_span == 2 and spans[(1, 1)].text == ""


def test_both_pages_of_the_async_job_come_out_with_their_own_tables():
    pages = parsed("multi-page-tables")
    assert [p.number for p in pages] == [1, 2]
    for page in pages:
        tables = [b for b in page.blocks if b.type is BlockType.TABLE]
        cells = [b for b in page.blocks if b.type is BlockType.CELL]
        assert len(tables) == 2
        shapes = [
            (max(c.row for c in cells if c.parent == t.id), max(c.column for c in cells if c.parent == t.id))
            for t in tables
        ]
        assert sorted(shapes) == [(3, 3), (5, 4)]
        assert all(c.text.startswith(f"Page {page.number} - ") for c in cells if c.text)


def test_a_single_page_response_without_page_fields_is_page_one():
    assert [p.number for p in parsed("paystub")] == [1]
    assert all(p.engine == "textract" for p in parsed("paystub"))


def test_other_block_types_are_ignored():
    ids = {b.id for p in parsed("paystub") for b in p.blocks}
    other = {"KEY_VALUE_SET", "QUERY", "SIGNATURE", "LAYOUT_TEXT"}
    skipped = {b["Id"] for b in raw("paystub")["Blocks"] if b["BlockType"] in other}
    assert skipped and not ids & skipped


def _word(id_: str, text: str, left: float, top: float, width: float = 0.06, height: float = 0.012) -> dict:
    return {"Id": id_, "BlockType": "WORD", "Text": text, "Confidence": 99.0, "Page": 1,
            "Geometry": {"BoundingBox": {"Left": left, "Top": top, "Width": width, "Height": height}}}


def _line(id_: str, words: list[dict]) -> dict:
    lefts = [w["Geometry"]["BoundingBox"] for w in words]
    box = {"Left": min(b["Left"] for b in lefts), "Top": min(b["Top"] for b in lefts),
           "Width": max(b["Left"] + b["Width"] for b in lefts) - min(b["Left"] for b in lefts),
           "Height": max(b["Top"] + b["Height"] for b in lefts) - min(b["Top"] for b in lefts)}
    return {"Id": id_, "BlockType": "LINE", "Text": " ".join(w["Text"] for w in words), "Confidence": 97.0,
            "Page": 1, "Geometry": {"BoundingBox": box},
            "Relationships": [{"Type": "CHILD", "Ids": [w["Id"] for w in words]}]}


def test_a_textract_line_whose_words_lie_on_two_rows_becomes_one_line_per_row():
    # A tightly set tally sheet: Textract's line runs from one party row into the next.
    joined = [_word("w1", "PAC", 0.10, 0.100), _word("w2", "0138", 0.30, 0.101),
              _word("w3", "UNE", 0.10, 0.117), _word("w4", "0583", 0.30, 0.118)]
    single = [_word("w5", "ACTA", 0.10, 0.05), _word("w6", "03", 0.18, 0.05)]
    page = {"Id": "page", "BlockType": "PAGE", "Page": 1,
            "Geometry": {"BoundingBox": {"Left": 0, "Top": 0, "Width": 1, "Height": 1}},
            "Relationships": [{"Type": "CHILD", "Ids": ["l1", "l2"]}]}
    [ocr] = parse_textract({"Blocks": [page, _line("l1", single), _line("l2", joined), *single, *joined]},
                           sizes={1: LETTER})
    lines = {b.id: b for b in ocr.blocks if b.type is BlockType.LINE}
    assert {i: b.text for i, b in lines.items()} == {"l1": "ACTA 03", "l2": "PAC 0138", "l2-2": "UNE 0583"}
    parent = {b.text: b.parent for b in ocr.blocks if b.type is BlockType.WORD}
    assert parent == {"ACTA": "l1", "03": "l1", "PAC": "l2", "0138": "l2", "UNE": "l2-2", "0583": "l2-2"}
    assert lines["l2-2"].bbox.top == pytest.approx(0.117) and lines["l2"].bbox.bottom == pytest.approx(0.113)
    assert lines["l2-2"].confidence == lines["l2"].confidence == pytest.approx(0.97)
    orders = [b.order for b in ocr.blocks]
    assert orders == sorted(orders) and len(set(orders)) == len(orders)


@pytest.mark.parametrize("name", RESPONSES)
def test_the_real_textract_lines_sit_on_one_row_each_and_are_kept(name):
    data = raw(name)
    kept = {b["Id"] for b in data["Blocks"] if b["BlockType"] == "LINE"}
    assert {b.id for b in blocks(name, BlockType.LINE)} == kept


def test_reading_order_reads_the_left_column_before_the_right_one():
    lines = [b.text for b in sorted(blocks("multicol", BlockType.LINE), key=lambda b: b.order)]
    assert lines.index("within one paragraph.") < lines.index("A horizontally separate right")
    assert lines.index("it after the left column's content.") < lines.index(
        "A final footer section restores single-column layout, and should be"
    )
    assert lines[0] == "Multi-column test document"


def test_reading_order_keeps_form_labels_next_to_their_values():
    # label at left, value at right, one row each: narrow columns must not be read one after the other
    boxes = [BBox(0.1, 0.1 + 0.05 * i, 0.1, 0.02) for i in range(3)] + [
        BBox(0.5, 0.1 + 0.05 * i, 0.1, 0.02) for i in range(3)
    ]
    assert reading_order(boxes, size=LETTER) == [0, 3, 1, 4, 2, 5]


def test_reading_order_reads_wide_columns_top_to_bottom():
    left = [BBox(0.05, 0.1 + 0.05 * i, 0.4, 0.02) for i in range(3)]
    right = [BBox(0.55, 0.1 + 0.05 * i, 0.4, 0.02) for i in range(3)]
    boxes = [b for pair in zip(left, right, strict=True) for b in pair]  # row-interleaved, as Textract gives
    assert reading_order(boxes, size=LETTER) == [0, 2, 4, 1, 3, 5]


# ------------------------------------------------------------------------------------------ alignment


def _ink_share(image: np.ndarray, boxes: list[BBox]) -> float:
    """Share of boxes holding clearly more dark pixels than the page does on average."""
    height, width = image.shape
    dark = image < 0.75  # coloured text (blue, grey) is ~0.58 in luminance; paper is ~1
    page_dark = dark.mean()
    hits = []
    for b in boxes:
        x0, x1 = int(b.left * width), int(np.ceil(b.right * width))
        y0, y1 = int(b.top * height), int(np.ceil(b.bottom * height))
        if x0 < 0 or y0 < 0 or x1 > width or y1 > height or x1 <= x0 or y1 <= y0:
            hits.append(False)  # a box off the page holds no ink
            continue
        hits.append(dark[y0:y1, x0:x1].mean() > 1.5 * page_dark)
    return float(np.mean(hits))


def _overlaps(a: BBox, b: BBox) -> bool:
    return not (a.right <= b.left or b.right <= a.left or a.bottom <= b.top or b.bottom <= a.top)


@pytest.mark.parametrize("name", sorted(IMAGES))
def test_line_boxes_sit_on_ink_in_the_page_image_and_wrong_transforms_do_not(name):
    image = np.asarray(Image.open(textract_data() / IMAGES[name]).convert("L"), dtype=float) / 255
    boxes = [b.bbox for b in blocks(name, BlockType.LINE)]
    true_score = _ink_share(image, boxes)
    assert true_score >= 0.95

    # the same boxes moved three box-heights into areas no LINE claims hold (almost) no ink
    shifted = [
        BBox(b.left, b.top + dy * b.height, b.width, b.height) for b in boxes for dy in (-3, 3)
    ]
    blank = [s for s in shifted if s.top >= 0 and s.bottom <= 1 and not any(_overlaps(s, o) for o in boxes)]
    assert blank and _ink_share(image, blank) <= 0.15

    swapped = [BBox(b.top, b.left, b.width, b.height) for b in boxes]  # left/top mixed up
    flipped = [BBox(b.left, 1 - b.bottom, b.width, b.height) for b in boxes]  # y measured from the bottom
    scaled = [BBox(b.left * 0.8, b.top * 0.8, b.width * 0.8, b.height * 0.8) for b in boxes]
    for wrong in (swapped, flipped, scaled):
        assert _ink_share(image, wrong) <= true_score - 0.3


# ------------------------------------------------------------------------------------------ JSON import


def test_an_attached_json_may_be_one_response_a_list_or_bare_blocks():
    text = (textract_data() / "multi-page-tables.textract.json").read_text()
    data = json.loads(text)
    half = len(data["Blocks"]) // 2
    as_list = [{"Blocks": data["Blocks"][:half]}, {"Blocks": data["Blocks"][half:]}]
    for payload in (text, text.encode(), json.dumps(as_list), json.dumps({"Blocks": data["Blocks"]})):
        pages = load_textract_json(payload, sizes={1: LETTER, 2: LETTER})
        assert [p.number for p in pages] == [1, 2]
        assert sum(len(p.blocks) for p in pages) == sum(len(p.blocks) for p in parsed("multi-page-tables"))


@pytest.mark.parametrize(
    "payload",
    [b"\x89PNG not json", "[]", "{}", '{"Blocks": "x"}', '{"Blocks": [{"Text": "no id"}]}', '"Blocks"',
     '{"Blocks": [{"Id": "1", "BlockType": "LINE"}]}'],
)
def test_anything_that_is_not_textract_json_is_refused_with_an_ocr_error(payload):
    with pytest.raises(OcrError):
        load_textract_json(payload, sizes={1: LETTER})


# ------------------------------------------------------------------------------------------ engine


def _clients():
    creds = {"region_name": "us-east-1", "aws_access_key_id": "test", "aws_secret_access_key": "test"}
    return boto3.client("textract", **creds), boto3.client("s3", **creds)


def _response(data: dict) -> dict:
    """A recorded response as botocore's Stubber accepts it (no transport metadata)."""
    out = copy.deepcopy(data)
    out.pop("ResponseMetadata", None)
    return out


def _document(tmp_path: Path, *, kind: str, pages: int, name: str = "doc.pdf") -> SourceDocument:
    original = tmp_path / name
    original.write_bytes(b"%PDF-1.4 original bytes")
    images = []
    for n in range(1, pages + 1):
        png = tmp_path / f"page-{n}.png"
        png.write_bytes(f"png {n}".encode())
        images.append(PageImage(number=n, path=png, width=10, height=10))
    return SourceDocument(path=original, kind=kind, pages=images)


def test_an_image_is_read_with_one_synchronous_call_on_its_original_bytes(tmp_path):
    textract, s3 = _clients()
    doc = _document(tmp_path, kind="image", pages=1, name="paystub.jpg")
    with Stubber(textract) as stub:
        stub.add_response(
            "analyze_document", _response(raw("paystub")),
            {"Document": {"Bytes": doc.path.read_bytes()}, "FeatureTypes": ["TABLES"]},
        )
        pages = TextractEngine(textract, region="us-east-1", bucket=None, s3_client=s3).read(doc)
        stub.assert_no_pending_responses()
    assert [p.number for p in pages] == [1]
    assert [b.id for b in pages[0].blocks] == [b.id for b in parsed("paystub")[0].blocks]


def test_a_multi_page_pdf_goes_through_s3_and_an_async_job_with_polling_and_pagination(tmp_path):
    textract, s3 = _clients()
    doc = _document(tmp_path, kind="pdf", pages=2)
    data = _response(raw("multi-page-tables"))
    half = len(data["Blocks"]) // 2
    first = {**data, "Blocks": data["Blocks"][:half], "NextToken": "page-2-token"}
    second = {**data, "Blocks": data["Blocks"][half:]}
    naps: list[float] = []
    with Stubber(textract) as stub, Stubber(s3) as s3_stub:
        s3_stub.add_response("put_object", {}, {"Bucket": "inbox", "Key": ANY, "Body": doc.path.read_bytes()})
        stub.add_response(
            "start_document_analysis", {"JobId": "job-1"},
            {"DocumentLocation": {"S3Object": {"Bucket": "inbox", "Name": ANY}}, "FeatureTypes": ["TABLES"]},
        )
        stub.add_response("get_document_analysis", {"JobStatus": "IN_PROGRESS"}, {"JobId": "job-1"})
        stub.add_response("get_document_analysis", first, {"JobId": "job-1"})
        stub.add_response("get_document_analysis", second, {"JobId": "job-1", "NextToken": "page-2-token"})
        s3_stub.add_response("delete_object", {}, {"Bucket": "inbox", "Key": ANY})
        engine = TextractEngine(textract, region="us-east-1", bucket="inbox", s3_client=s3,
                                poll_seconds=0.5, sleep=naps.append)
        pages = engine.read(doc)
        stub.assert_no_pending_responses()
        s3_stub.assert_no_pending_responses()
    assert naps == [0.5]
    assert [p.number for p in pages] == [1, 2]
    assert [sum(b.type is BlockType.TABLE for b in p.blocks) for p in pages] == [2, 2]
    assert sum(len(p.blocks) for p in pages) == sum(len(p.blocks) for p in parsed("multi-page-tables"))


def test_a_failed_job_raises_an_ocr_error_with_textracts_message(tmp_path):
    textract, s3 = _clients()
    doc = _document(tmp_path, kind="pdf", pages=3)
    with Stubber(textract) as stub, Stubber(s3) as s3_stub:
        s3_stub.add_response("put_object", {}, {"Bucket": "inbox", "Key": ANY, "Body": ANY})
        stub.add_response("start_document_analysis", {"JobId": "job-2"}, None)
        stub.add_response(
            "get_document_analysis", {"JobStatus": "FAILED", "StatusMessage": "Unsupported document format"},
            {"JobId": "job-2"},
        )
        s3_stub.add_response("delete_object", {}, {"Bucket": "inbox", "Key": ANY})
        engine = TextractEngine(textract, region="us-east-1", bucket="inbox", s3_client=s3, poll_seconds=0)
        with pytest.raises(OcrError, match="FAILED.*Unsupported document format"):
            engine.read(doc)
        s3_stub.assert_no_pending_responses()  # the staging copy is removed even on failure


def test_an_aws_error_is_wrapped_in_an_ocr_error_naming_the_call(tmp_path):
    textract, s3 = _clients()
    doc = _document(tmp_path, kind="pdf", pages=1)
    with Stubber(textract) as stub:
        stub.add_client_error("analyze_document", "ProvisionedThroughputExceededException", "Slow down")
        with pytest.raises(OcrError, match="AnalyzeDocument failed: ProvisionedThroughput.*: Slow down"):
            TextractEngine(textract, region="us-east-1", bucket=None, s3_client=s3).read(doc)


def test_a_job_that_never_finishes_times_out_with_an_ocr_error(tmp_path):
    textract, s3 = _clients()
    doc = _document(tmp_path, kind="pdf", pages=2)
    with Stubber(textract) as stub, Stubber(s3) as s3_stub:
        s3_stub.add_response("put_object", {}, None)
        stub.add_response("start_document_analysis", {"JobId": "job-3"}, None)
        stub.add_response("get_document_analysis", {"JobStatus": "IN_PROGRESS"}, None)
        s3_stub.add_response("delete_object", {}, None)
        engine = TextractEngine(textract, region="us-east-1", bucket="inbox", s3_client=s3, timeout_seconds=0)
        with pytest.raises(OcrError, match="did not finish"):
            engine.read(doc)


def test_without_a_bucket_a_multi_page_pdf_is_read_page_image_by_page_image(tmp_path):
    textract, s3 = _clients()
    doc = _document(tmp_path, kind="pdf", pages=2)
    with Stubber(textract) as stub:
        for n in (1, 2):
            stub.add_response(
                "analyze_document", _response(raw("employment-application")),
                {"Document": {"Bytes": f"png {n}".encode()}, "FeatureTypes": ["TABLES"]},
            )
        pages = TextractEngine(textract, region="us-east-1", bucket=None, s3_client=s3).read(doc)
    assert [p.number for p in pages] == [1, 2]
    assert {b.page for b in pages[1].blocks} == {2}
