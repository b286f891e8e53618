"""The review services: claims, edits that re-run the rules, verify / reject / send back, and no lost update."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from extraction.models import Document, FieldValue, ReviewEvent, Violation
from reviewer.desk import services as review
from reviewer.desk.selectors import queue_documents_open, rule_label
from tests.support.desk_data import flagged_acta

pytestmark = pytest.mark.django_db


def fresh(doc: Document) -> Document:
    return Document.objects.get(pk=doc.pk)


def codes(extraction) -> list[str]:
    return sorted(Violation.objects.filter(extraction=extraction).values_list("code", flat=True))


def test_correcting_the_words_re_runs_the_rules_and_clears_the_violation(users):
    acta = flagged_acta(seed=1)
    path = f"rows[{acta.wrong_row}].votes_words"
    assert codes(acta.extraction) == ["row_digits_words_mismatch"]
    before = FieldValue.objects.get(extraction=acta.extraction, path=path).value

    result = review.field_edit(document_id=acta.document.id, user=users["reviewer"], path=path,
                               raw_value=f"  {acta.true_words} ", expected_version=acta.document.version)

    assert result.violations == [] and codes(acta.extraction) == []
    fv = FieldValue.objects.get(extraction=acta.extraction, path=path)
    assert fv.value == acta.true_words and fv.corrected and fv.model_value == before
    acta.extraction.refresh_from_db()
    assert acta.extraction.answer["rows"][acta.wrong_row]["votes_words"]["value"] == acta.true_words
    assert acta.extraction.answer["rows"][acta.wrong_row]["votes_words"]["proof"]  # the proof is kept
    event = ReviewEvent.objects.get(document=acta.document, kind="edit")
    assert (event.user, event.field, event.before, event.after) == (users["reviewer"], path, before, acta.true_words)
    doc = fresh(acta.document)
    assert doc.version == acta.document.version + 1 and result.version == doc.version
    assert doc.claimed_by == users["reviewer"]  # editing takes the claim


def test_an_edit_that_breaks_another_rule_reports_that_rule(users):
    acta = flagged_acta(seed=2)
    review.field_edit(document_id=acta.document.id, user=users["reviewer"], path="rows[0].votes", raw_value="0999",
                      expected_version=acta.document.version)
    broken = set(codes(acta.extraction))
    assert {"row_digits_words_mismatch", "sum_valid_votes"} <= broken
    assert FieldValue.objects.get(extraction=acta.extraction, path="rows[0].votes").value == 999  # typed, not "0999"


def test_a_value_that_is_not_of_the_fields_type_is_refused_and_changes_nothing(users):
    acta = flagged_acta(seed=3)
    with pytest.raises(review.InvalidValue, match="not a valid value"):
        review.field_edit(document_id=acta.document.id, user=users["reviewer"], path="rows[0].votes",
                          raw_value="twelve", expected_version=acta.document.version)
    assert fresh(acta.document).version == acta.document.version
    assert not ReviewEvent.objects.filter(document=acta.document).exists()
    assert not FieldValue.objects.filter(extraction=acta.extraction, corrected=True).exists()


def test_a_second_save_from_the_same_version_is_refused_with_a_clear_message(users):
    acta = flagged_acta(seed=4)
    seen = acta.document.version
    review.field_edit(document_id=acta.document.id, user=users["reviewer"], path="rows[1].votes_words",
                      raw_value="CERO CERO CERO CERO", expected_version=seen)
    review.document_release(document_id=acta.document.id, user=users["reviewer"])
    with pytest.raises(review.StaleVersion, match="after you opened it"):
        review.field_edit(document_id=acta.document.id, user=users["admin"], path="rows[1].votes_words",
                          raw_value="UNO", expected_version=seen)
    assert FieldValue.objects.get(extraction=acta.extraction, path="rows[1].votes_words").value == "CERO CERO CERO CERO"


@pytest.mark.django_db(transaction=True)
def test_two_reviewers_saving_at_once_from_the_same_version_lose_no_update(users):
    acta = flagged_acta(seed=5)
    barrier = threading.Barrier(2)
    outcomes: dict[str, str] = {}

    def save(role: str, words: str) -> None:
        try:
            barrier.wait()
            review.field_edit(document_id=acta.document.id, user=users[role], path="rows[2].votes_words",
                              raw_value=words, expected_version=acta.document.version)
            outcomes[role] = words
        except review.ReviewError as err:
            outcomes[role] = type(err).__name__
        finally:
            connection.close()

    threads = [threading.Thread(target=save, args=("reviewer", "UNO UNO UNO UNO")),
               threading.Thread(target=save, args=("admin", "DOS DOS DOS DOS"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    won = [w for w in outcomes.values() if w.endswith(("UNO", "DOS"))]
    lost = [w for w in outcomes.values() if w in ("StaleVersion", "ClaimedByOther")]
    assert len(won) == 1 and len(lost) == 1, outcomes
    assert FieldValue.objects.get(extraction=acta.extraction, path="rows[2].votes_words").value == won[0]
    assert ReviewEvent.objects.filter(document=acta.document, kind="edit").count() == 1


def test_a_claim_locks_the_document_for_its_reviewer_until_it_expires(users, settings):
    acta = flagged_acta(seed=6)
    reviewer, other = users["reviewer"], users["admin"]
    review.document_claim(document_id=acta.document.id, user=reviewer)
    with pytest.raises(review.ClaimedByOther, match="reviewer is working on this document"):
        review.document_claim(document_id=acta.document.id, user=other)
    with pytest.raises(review.ClaimedByOther):
        review.field_edit(document_id=acta.document.id, user=other, path="rows[0].votes", raw_value="1",
                          expected_version=acta.document.version)
    Document.objects.filter(pk=acta.document.pk).update(
        claimed_at=timezone.now() - timedelta(minutes=settings.CLAIM_TTL_MINUTES + 1))
    assert review.document_claim(document_id=acta.document.id, user=other).claimed_by == other
    kinds = list(ReviewEvent.objects.filter(document=acta.document).values_list("kind", "user__username"))
    assert kinds == [("claim", "reviewer"), ("claim", "admin")]


def test_next_takes_the_oldest_document_nobody_holds_and_releases_the_previous_one(users):
    first, second, third = (flagged_acta(seed=s) for s in (7, 8, 9))
    review.document_claim(document_id=first.document.id, user=users["admin"])
    got = review.document_next(user=users["reviewer"])
    assert got.id == second.document.id and got.claimed_by == users["reviewer"]
    got = review.document_next(user=users["reviewer"])
    assert got.id == third.document.id
    assert fresh(second.document).claimed_by is None  # one document at a time
    assert fresh(first.document).claimed_by == users["admin"]


def test_next_filters_by_batch_and_by_rule_and_says_none_when_the_queue_is_empty(users):
    acta = flagged_acta(seed=10)
    assert review.document_next(user=users["reviewer"], rule="sum_valid_votes") is None
    assert review.document_next(user=users["reviewer"], batch_id=acta.document.batch_id + 99) is None
    got = review.document_next(user=users["reviewer"], batch_id=acta.document.batch_id,
                               rule="row_digits_words_mismatch")
    assert got.id == acta.document.id


def test_verifying_with_failing_rules_needs_the_reviewers_reason(users):
    acta = flagged_acta(seed=11)
    doc = acta.document
    with pytest.raises(review.NoteRequired, match="1 rule still fail"):
        review.document_verify(document_id=doc.id, user=users["reviewer"], expected_version=doc.version)
    assert fresh(doc).review_status == "unreviewed"
    outcome = review.document_verify(document_id=doc.id, user=users["reviewer"], expected_version=doc.version,
                                     note="The sheet's words are a poll worker's slip")
    doc = fresh(doc)
    assert outcome == "verified" and doc.review_status == "verified" and doc.claimed_by is None
    assert ReviewEvent.objects.get(document=doc, kind="verify").note == "The sheet's words are a poll worker's slip"
    assert not queue_documents_open().filter(pk=doc.pk).exists()


def test_a_corrected_document_verifies_without_a_note_and_is_marked_corrected(users):
    acta = flagged_acta(seed=12)
    result = review.field_edit(document_id=acta.document.id, user=users["reviewer"],
                               path=f"rows[{acta.wrong_row}].votes_words", raw_value=acta.true_words,
                               expected_version=acta.document.version)
    assert review.document_verify(document_id=acta.document.id, user=users["reviewer"],
                                  expected_version=result.version) == "corrected"
    with pytest.raises(review.NotEditable, match="already corrected"):
        review.field_edit(document_id=acta.document.id, user=users["reviewer"], path="rows[0].votes",
                          raw_value="1", expected_version=result.version + 2)


def test_rejecting_needs_a_reason_and_takes_the_document_out_of_the_queue(users):
    acta = flagged_acta(seed=13)
    with pytest.raises(review.NoteRequired):
        review.document_reject(document_id=acta.document.id, user=users["reviewer"],
                               expected_version=acta.document.version, reason="  ")
    review.document_reject(document_id=acta.document.id, user=users["reviewer"],
                           expected_version=acta.document.version, reason="Not an acta")
    assert fresh(acta.document).review_status == "rejected"
    assert ReviewEvent.objects.get(document=acta.document, kind="reject").note == "Not an acta"
    assert not queue_documents_open().filter(pk=acta.document.pk).exists()


def test_a_passed_document_is_read_only_until_a_supervisor_sends_it_back(users):
    acta = flagged_acta(seed=14, wrong_row=None)
    doc = acta.document
    assert doc.status == "passed"
    with pytest.raises(review.NotEditable, match="read-only unless a supervisor sends it back"):
        review.field_edit(document_id=doc.id, user=users["reviewer"], path="rows[0].votes", raw_value="1",
                          expected_version=doc.version)
    with pytest.raises(review.NoteRequired):
        review.document_send_back(document_id=doc.id, user=users["supervisor"], reason="")
    review.document_send_back(document_id=doc.id, user=users["supervisor"], reason="Row 1 looks off on the page")
    doc = fresh(doc)
    assert (doc.status, doc.review_status) == ("flagged", "unreviewed")
    assert queue_documents_open().filter(pk=doc.pk).exists()
    review.field_edit(document_id=doc.id, user=users["reviewer"], path="rows[0].votes",
                      raw_value=str(acta.counts[0]), expected_version=doc.version)
    event = ReviewEvent.objects.get(document=doc, kind="send_back")
    assert event.user == users["supervisor"] and event.before == {"status": "passed", "review_status": "unreviewed"}


def test_a_reviewed_document_can_be_sent_back_for_another_look(users):
    acta = flagged_acta(seed=15)
    review.document_reject(document_id=acta.document.id, user=users["reviewer"],
                           expected_version=acta.document.version, reason="blurred")
    review.document_send_back(document_id=acta.document.id, user=users["supervisor"], reason="it is readable")
    assert fresh(acta.document).review_status == "unreviewed"
    with pytest.raises(review.NotEditable):  # an open document is not sent back
        review.document_send_back(document_id=acta.document.id, user=users["supervisor"], reason="again")


def test_a_corrected_value_is_not_called_ungrounded_but_an_uncorrected_one_still_is(users):
    acta = flagged_acta(seed=16)
    path = f"rows[{acta.wrong_row}].votes_words"
    result = review.field_edit(document_id=acta.document.id, user=users["reviewer"], path=path,
                               raw_value=acta.true_words, expected_version=acta.document.version)
    # the page prints other words: the reviewer's correction stands as the evidence for this field
    assert "value_grounded" not in codes(acta.extraction) and result.violations == []
    # a value nobody corrected is still checked against its proof
    extraction = acta.extraction
    extraction.refresh_from_db()
    from extraction.rules.answers import set_field

    answer = set_field(extraction.answer, "rows[0].votes_words", "NUEVE NUEVE NUEVE NUEVE")
    assert any(v.code == "value_grounded" and v.fields == ("rows[0].votes_words",)
               for v in review._revalidate(document=acta.document, extraction=extraction, answer=answer))


# --- values and proofs taken from the page ---------------------------------------------------------------


def _blocks(acta, text: str, kind: str = "WORD"):
    from extraction.models import Block

    return list(Block.objects.filter(document=acta.document, type=kind, text=text).order_by("order"))


def test_a_value_taken_from_a_word_sets_value_and_proof_and_records_both(users):
    from extraction.models import FieldValue, ReviewEvent
    from tests.support.desk_data import flagged_acta

    acta = flagged_acta(seed=91)
    word = _blocks(acta, str(acta.counts[1]).zfill(4))[0]
    before = FieldValue.objects.get(extraction=acta.extraction, path="rows[0].votes")
    result = review.field_take_from_page(document_id=acta.document.id, user=users["reviewer"], path="rows[0].votes",
                                         block_ids=[word.pk], expected_version=acta.document.version)
    fv = FieldValue.objects.get(extraction=acta.extraction, path="rows[0].votes")
    assert fv.value == result.value == acta.counts[1] and fv.corrected
    assert [p["block_id"] for p in fv.proofs] == [str(word.pk)] and fv.proofs[0]["method"] == "reviewer"
    event = ReviewEvent.objects.get(document=acta.document, kind="edit")
    assert (event.before, event.after) == (before.value, acta.counts[1])
    assert event.proof_before[0]["block_id"] == before.proofs[0]["block_id"]
    assert event.proof_after[0]["block_id"] == str(word.pk)
    if acta.counts[1] != acta.counts[0]:
        assert "row_digits_words_mismatch" in {v.code for v in result.violations}  # the rules ran again


def test_moving_only_the_proof_keeps_the_value_and_checks_the_new_proof(users):
    from extraction.models import FieldValue, ReviewEvent
    from tests.support.desk_data import flagged_acta

    acta = flagged_acta(seed=92)
    header = _blocks(acta, "ACTA")[0]  # a word that shows no vote count
    value = FieldValue.objects.get(extraction=acta.extraction, path="rows[0].votes").value
    result = review.field_take_from_page(document_id=acta.document.id, user=users["reviewer"], path="rows[0].votes",
                                         block_ids=[header.pk], expected_version=acta.document.version,
                                         proof_only=True)
    assert FieldValue.objects.get(extraction=acta.extraction, path="rows[0].votes").value == value
    assert ReviewEvent.objects.get(document=acta.document, kind="proof").after == value
    # a picked proof is checked like any other: this one does not show the value
    assert any(v.code == "value_grounded" and "rows[0].votes" in v.fields for v in result.violations)


def test_blocks_of_another_document_or_a_stale_version_change_nothing(users):
    from extraction.models import FieldValue
    from tests.support.desk_data import flagged_acta

    acta, other = flagged_acta(seed=93), flagged_acta(seed=94)
    foreign = _blocks(other, "ACTA")[0]
    with pytest.raises(review.InvalidValue):
        review.field_take_from_page(document_id=acta.document.id, user=users["reviewer"], path="acta_id",
                                    block_ids=[foreign.pk], expected_version=acta.document.version)
    own = _blocks(acta, "ACTA")[0]
    with pytest.raises(review.StaleVersion):
        review.field_take_from_page(document_id=acta.document.id, user=users["reviewer"], path="acta_id",
                                    block_ids=[own.pk], expected_version=acta.document.version - 1)
    assert not FieldValue.objects.filter(extraction=acta.extraction, corrected=True).exists()


def _stored_fields(extraction) -> dict:
    from reviewer.desk.selectors import desk_fields

    return desk_fields(extraction=extraction)


@pytest.mark.parametrize("take", [False, True], ids=["typed", "taken from the page"])
@pytest.mark.parametrize("row_missing", [False, True], ids=["stored field", "field without a stored row"])
def test_the_fields_an_edit_returns_are_the_fields_as_stored(users, take, row_missing):
    acta = flagged_acta(seed=95)
    path = "rows[0].votes"
    if row_missing:
        FieldValue.objects.filter(extraction=acta.extraction, path=path).delete()
    if take:
        word = _blocks(acta, str(acta.counts[1]).zfill(4))[0]
        result = review.field_take_from_page(document_id=acta.document.id, user=users["reviewer"], path=path,
                                             block_ids=[word.pk], expected_version=acta.document.version)
    else:
        result = review.field_edit(document_id=acta.document.id, user=users["reviewer"], path=path,
                                   raw_value="17", expected_version=acta.document.version)
    assert result.fields == _stored_fields(acta.extraction)
    assert result.fields[path].corrected and result.fields[path].value == (acta.counts[1] if take else 17)
    if row_missing:
        assert FieldValue.objects.get(extraction=acta.extraction, path=path).model_value == acta.counts[0]


def test_rules_still_broken_the_same_way_keep_their_rows_and_the_desk_gets_the_rows_as_stored(users):
    acta = flagged_acta(seed=96)
    words = f"rows[{acta.wrong_row}].votes_words"
    kept = Violation.objects.get(extraction=acta.extraction, code="row_digits_words_mismatch")
    # an edit elsewhere that breaks nothing new leaves the mismatch as it was: same row, same id
    result = review.field_edit(document_id=acta.document.id, user=users["reviewer"], path="acta_id",
                               raw_value=acta.extraction.answer["acta_id"]["value"],
                               expected_version=acta.document.version)
    stored = list(Violation.objects.filter(extraction=acta.extraction))
    assert [v.pk for v in stored] == [kept.pk]
    assert [(v.pk, v.code, v.label) for v in result.stored] == [(kept.pk, kept.code, rule_label(kept.code))]
    assert [v.pk for v in result.stored_before] == [kept.pk]
    # fixing it removes the row; breaking it another way stores a new one, with its id
    result = review.field_edit(document_id=acta.document.id, user=users["reviewer"], path=words,
                               raw_value="NUEVE NUEVE NUEVE", expected_version=acta.document.version + 1)
    stored = list(Violation.objects.filter(extraction=acta.extraction))
    assert len(stored) == 1 and stored[0].pk != kept.pk and "NUEVE" in stored[0].message
    assert [(v.pk, v.message) for v in result.stored] == [(stored[0].pk, stored[0].message)]


def test_the_desk_reads_every_field_as_the_model_stores_it(db):
    # The desk's read of the fields is written out in SQL (every edit makes it): it must decode what the
    # ORM decodes, on this database, in the stored order.
    from reviewer.desk.selectors import DeskField, desk_fields

    acta = flagged_acta(seed=4)
    FieldValue.objects.filter(extraction=acta.extraction, path="acta_id").update(
        corrected=True, value={"nested": [1, 2.5, None, "ñ"]}, model_value=None, field_confidence=0.25)
    stored = FieldValue.objects.filter(extraction=acta.extraction).order_by("position")
    expected = {fv.path: DeskField(fv.path, fv.value, fv.model_value, fv.proofs, fv.confidence, fv.corrected,
                                   fv.field_confidence) for fv in stored}
    read = desk_fields(extraction=acta.extraction)
    assert list(read) == list(expected) and read == expected
    assert read["acta_id"].corrected is True and read["acta_id"].value == {"nested": [1, 2.5, None, "ñ"]}
    assert any(f.proofs for f in read.values()) and all(f.corrected is False for p, f in read.items() if p != "acta_id")
