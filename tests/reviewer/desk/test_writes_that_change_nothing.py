"""Issue 28, the desk's writes: a take or edit that changes nothing records nothing, a proof citing a word twice
reads it twice, a typed value keeps no proof from the page."""

from __future__ import annotations

import pytest

from extraction.models import Block, Document, FieldValue, ReviewEvent, Violation
from reviewer.desk import services as review
from sheetgen.generate import spell_digits
from tests.support.desk_data import flagged_acta

pytestmark = pytest.mark.django_db


def _words_with_a_repeat(acta) -> list[Block]:
    """Three of the words spelling another row's count, the first and last reading the same ("CERO UNO
    CERO" of "CERO UNO DOS CERO"): not one run of the page, so nothing widens the cited words."""
    for line in Block.objects.filter(document=acta.document, type="LINE").order_by("order"):
        words = list(Block.objects.filter(parent=line, type="WORD").order_by("order"))[-4:]
        texts = [w.text for w in words]
        if any(texts == spell_digits(str(c).zfill(4)).split() for c in acta.counts) and texts[0] == texts[3]:
            return [words[0], words[1], words[3]]
    raise AssertionError("no row spells a count whose first and last words read the same")


def test_a_proof_citing_a_repeated_word_reads_every_cited_word_in_page_order(users):
    acta = flagged_acta(seed=101)
    path = f"rows[{acta.wrong_row}].votes_words"
    words = _words_with_a_repeat(acta)
    picked = " ".join(w.text for w in words)
    result = review.field_take_from_page(document_id=acta.document.id, user=users["reviewer"], path=path,
                                         block_ids=[w.pk for w in words], expected_version=acta.document.version)
    assert result.value == picked
    fv = FieldValue.objects.get(extraction=acta.extraction, path=path)
    assert [p["block_id"] for p in fv.proofs] == [str(w.pk) for w in words]
    assert " ".join(p["text"] for p in fv.proofs) == picked  # the proof reads what the value says


def test_taking_the_value_a_field_holds_is_no_edit_and_taking_it_again_records_nothing(users):
    acta = flagged_acta(seed=102)
    path = "rows[0].votes"
    fv = FieldValue.objects.get(extraction=acta.extraction, path=path)
    own = [int(p["block_id"]) for p in fv.proofs]
    review.field_take_from_page(document_id=acta.document.id, user=users["reviewer"], path=path, block_ids=own,
                                expected_version=acta.document.version, only_if_changed=True)
    after = FieldValue.objects.get(extraction=acta.extraction, path=path)
    assert after.value == fv.value and not after.corrected  # same value, same boxes: not "corrected"
    assert [p["block_id"] for p in after.proofs] == [p["block_id"] for p in fv.proofs]
    assert not ReviewEvent.objects.filter(document=acta.document, field=path, kind="edit").exists()
    events = ReviewEvent.objects.filter(document=acta.document, field=path).count()
    with pytest.raises(review.Unchanged):  # the same take again: the field already cites exactly that
        review.field_take_from_page(document_id=acta.document.id, user=users["reviewer"], path=path,
                                    block_ids=own, expected_version=acta.document.version + 1,
                                    only_if_changed=True)
    assert ReviewEvent.objects.filter(document=acta.document, field=path).count() == events
    assert Document.objects.get(pk=acta.document.pk).version == acta.document.version + 1


def test_typing_again_the_value_a_reviewer_typed_records_nothing_and_changes_nothing(users):
    acta = flagged_acta(seed=103)
    path = "rows[0].votes"
    value = FieldValue.objects.get(extraction=acta.extraction, path=path).value + 5
    review.field_edit(document_id=acta.document.id, user=users["reviewer"], path=path, raw_value=str(value),
                      expected_version=acta.document.version, only_if_changed=True)
    with pytest.raises(review.Unchanged):
        review.field_edit(document_id=acta.document.id, user=users["reviewer"], path=path, raw_value=str(value),
                          expected_version=acta.document.version + 1, only_if_changed=True)
    assert ReviewEvent.objects.filter(document=acta.document, field=path).count() == 1
    assert Document.objects.get(pk=acta.document.pk).version == acta.document.version + 1


def test_a_typed_value_is_recorded_as_typed_with_the_proof_it_replaces(users):
    acta = flagged_acta(seed=104)
    path = f"rows[{acta.wrong_row}].votes_words"
    proofs = FieldValue.objects.get(extraction=acta.extraction, path=path).proofs
    review.field_edit(document_id=acta.document.id, user=users["reviewer"], path=path, raw_value=acta.true_words,
                      expected_version=acta.document.version)
    fv = FieldValue.objects.get(extraction=acta.extraction, path=path)
    assert fv.value == acta.true_words and fv.corrected
    event = ReviewEvent.objects.get(document=acta.document, kind="edit", field=path)
    assert event.note == "typed by the reviewer"
    assert [p["block_id"] for p in event.proof_before] == [p["block_id"] for p in proofs]
    assert not Violation.objects.filter(extraction=acta.extraction, code__in=review.GROUNDING_CODES).exists()


def test_typing_the_value_the_model_read_records_nothing_and_leaves_the_field_uncorrected(users):
    acta = flagged_acta(seed=105)
    path = "rows[0].votes"
    fv = FieldValue.objects.get(extraction=acta.extraction, path=path)
    with pytest.raises(review.Unchanged):
        review.field_edit(document_id=acta.document.id, user=users["reviewer"], path=path, raw_value=str(fv.value),
                          expected_version=acta.document.version, only_if_changed=True)
    after = FieldValue.objects.get(extraction=acta.extraction, path=path)
    assert after.value == fv.value and not after.corrected
    assert not ReviewEvent.objects.filter(document=acta.document, field=path).exists()
    assert Document.objects.get(pk=acta.document.pk).version == acta.document.version
