"""Every correct answer to the shared invoices passes every rule, read the way production reads a PDF
(`auto`: the text layer, plus OCR of the text inside its images), and a misread amount is still caught."""

from __future__ import annotations

import copy
from decimal import Decimal
from pathlib import Path

import pytest

from extraction.doctypes.registry import get_doctype
from extraction.ocr.blocks import PageImage, SourceDocument
from extraction.ocr.registry import get_engine
from extraction.pipeline.render import render_document
from extraction.reading.context import reading_context
from extraction.reading.prompt import render_prompt
from extraction.reading.validation import make_validator
from tests.support.invoice_answers import correct_invoice_answer, same_as_truth
from tests.support.invoice_truth import INVOICES, load_truth

pytestmark = pytest.mark.skipif(not INVOICES.is_dir(), reason=f"{INVOICES} is not here (CI has ../shared)")
NAMES = sorted(p.stem for p in INVOICES.glob("*.pdf")) if INVOICES.is_dir() else []
DOCTYPE = get_doctype("invoice")


@pytest.fixture(scope="module")
def read(tmp_path_factory):
    engine = get_engine("auto")
    cache = {}

    def read_one(name: str):
        if name not in cache:
            pdf = INVOICES / f"{name}.pdf"
            out = tmp_path_factory.mktemp(name)
            rendered = render_document(source=pdf, kind="pdf", out_dir=Path(out), dpi=150, renderer="pymupdf",
                                       max_pages=20)
            images = [PageImage(r.number, r.path, r.width, r.height) for r in rendered]
            pages = engine.read(SourceDocument(path=pdf, kind="pdf", pages=images))
            prompt = render_prompt(pages)
            blocks = [b for p in pages for b in p.blocks]
            answer = DOCTYPE.parse_answer(correct_invoice_answer(name, load_truth(name), prompt, blocks))
            ctx = reading_context(doctype=DOCTYPE, input_mode="text", prompt=prompt, blocks=blocks)
            cache[name] = answer, make_validator(DOCTYPE, ctx)
        return cache[name]

    return read_one


@pytest.mark.parametrize("name", NAMES)
def test_a_correct_answer_to_each_shared_invoice_passes_every_rule(read, name):
    answer, validate = read(name)
    assert same_as_truth(name, answer, load_truth(name)) == []  # the answer is the known one, as printed
    assert [(v.code, v.fields, v.found) for v in validate(answer)] == []


@pytest.mark.parametrize("name", NAMES)
def test_a_misread_total_on_each_shared_invoice_is_caught(read, name):
    answer, validate = read(name)
    wrong = copy.deepcopy(answer)
    wrong["total"]["value"] = float(Decimal(str(answer["total"]["value"])) + Decimal("1.00"))
    assert "value_grounded" in {v.code for v in validate(wrong)}


def test_the_issuer_printed_only_inside_an_image_is_read_and_cited(read):
    # saeco.pdf prints its company data as a picture: the text layer alone does not have it
    answer, _ = read("saeco")
    assert answer["issuer"]["value"] == "e-Luscious Nederland B.V." and answer["issuer"]["proof"]
