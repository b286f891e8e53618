"""The desk's kept rule context (reviewer/desk/rule_context.py): reused while a document's blocks stay the
same, never trusted once they change or a new run exists, so an edit's verdict is always the fresh one."""

from __future__ import annotations

import dataclasses

import pytest
from django.db import transaction

from extraction.doctypes.registry import get_doctype
from extraction.models import Extraction, Page, Violation
from extraction.pipeline.extract import ocr_pages_of
from extraction.pipeline.process import blocks_save
from extraction.reading.context import reading_context
from extraction.reading.validation import make_validator
from extraction.rules.violations import RuleContext
from reviewer.desk import services as review
from reviewer.desk.rule_context import document_rule_context, rule_contexts_forget
from tests.support.desk_data import flagged_acta

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _forget():
    rule_contexts_forget()
    yield
    rule_contexts_forget()


def fresh_context(document) -> RuleContext:
    """A context built from the stored blocks now, nothing kept."""
    return reading_context(doctype=get_doctype("acta"), input_mode="ocr", pages=ocr_pages_of(document=document))


def fresh_verdict(acta, answer) -> list[tuple]:
    return sorted((v.code, v.fields) for v in make_validator(get_doctype("acta"), fresh_context(acta.document))(answer))


def verdict(violations) -> list[tuple]:
    return sorted((v.code, v.fields) for v in violations)


def reread(document, *, old: str, new: str) -> None:
    """What a re-read does (pipeline.document_read): the pages and their blocks replaced by new rows, here with
    `old` printed as `new` everywhere on the document."""
    pages = ocr_pages_of(document=document)
    stored = {p.number: p for p in Page.objects.filter(document=document)}
    with transaction.atomic():
        document.pages.all().delete()
        for ocr_page in pages:
            before = stored[ocr_page.number]
            page = Page.objects.create(document=document, number=ocr_page.number, width=before.width,
                                       height=before.height, image=before.image.name, engine="test")
            ocr_page.blocks = [dataclasses.replace(b, text=b.text.replace(old, new)) for b in ocr_page.blocks]
            blocks_save(document=document, page=page, ocr_page=ocr_page)


def test_the_context_is_kept_while_the_blocks_stay_the_same(users, django_assert_num_queries):
    acta = flagged_acta(seed=31)
    first = document_rule_context(document=acta.document, extraction=acta.extraction, doctype=get_doctype("acta"))
    with django_assert_num_queries(1):  # only the check of the blocks
        again = document_rule_context(document=acta.document, extraction=acta.extraction, doctype=get_doctype("acta"))
    assert again.cache is first.cache and again.blocks is first.blocks and again is not first


def test_edits_with_the_kept_context_store_what_a_fresh_context_decides(users):
    acta = flagged_acta(seed=32)
    doc = acta.document
    for version, (path, raw) in enumerate([("rows[0].votes", "0999"), ("rows[1].votes_words", "UNO"),
                                          ("rows[0].votes", str(acta.counts[0]))], start=doc.version):
        result = review.field_edit(document_id=doc.id, user=users["reviewer"], path=path, raw_value=raw,
                                   expected_version=version)
        acta.extraction.refresh_from_db()
        fresh = review._revalidate(document=doc, extraction=acta.extraction, answer=acta.extraction.answer,
                                   ctx=fresh_context(doc))
        assert verdict(result.violations) == verdict(fresh)
        stored = Violation.objects.filter(extraction=acta.extraction)
        assert sorted((v.code, tuple(v.fields)) for v in stored) == verdict(fresh)


def test_after_a_re_read_the_verdict_is_the_new_blocks_not_the_kept_ones(users):
    acta = flagged_acta(seed=33)
    doc, extraction = acta.document, acta.extraction
    answer = extraction.answer
    before = review._revalidate(document=doc, extraction=extraction, answer=answer)  # kept from here on
    assert verdict(before) == fresh_verdict(acta, answer)

    # same document and extraction; the first two rows' names swapped: each row's values now stand under
    # the other party's name
    for old, new in (("PSUV", "SWAP"), ("PCV", "PSUV"), ("SWAP", "PCV")):
        reread(doc, old=old, new=new)
    after = review._revalidate(document=doc, extraction=extraction, answer=answer)

    assert verdict(after) == fresh_verdict(acta, answer)
    assert verdict(after) != verdict(before)  # the kept context would have said otherwise


def test_a_new_run_gets_its_own_context(users):
    acta = flagged_acta(seed=34)
    first = document_rule_context(document=acta.document, extraction=acta.extraction, doctype=get_doctype("acta"))
    rerun = Extraction.objects.create(document=acta.document, doctype="acta", answer=acta.extraction.answer,
                                      stop_reason="exhausted")
    second = document_rule_context(document=acta.document, extraction=rerun, doctype=get_doctype("acta"))
    assert second.cache is not first.cache
