"""A reviewer's edit changes only the fields the document type declares editable, with values of the field's
type, and a crafted POST beyond the form is refused with a message."""

from __future__ import annotations

import pytest
from django.urls import reverse

from extraction.models import Document, Extraction, ReviewEvent
from reviewer.desk import services as review
from tests.support.desk_data import flagged_acta

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("path", "raw", "says"), [
    ("rows[0].party", "MY PARTY", "cannot be corrected"),  # the printed form, not a reading
    ("rows[0].votes.value", "7", "cannot be corrected"),  # an alias of rows[0].votes
    ("rows[0]", "7", "cannot be corrected"),
    ("rows[99].votes", "7", "cannot be corrected"),
    ("rows[0].votes", "-1", "greater than or equal to 0"),
    ("valid_votes", "-5", "greater than or equal to 0"),
    ("rows[0].votes", "1.5", "not a valid value"),
], ids=["party-name", "alias-path", "a-whole-row", "no-such-row", "negative-votes", "negative-total", "fraction"])
def test_an_edit_beyond_what_the_type_declares_editable_is_refused_and_changes_nothing(users, path, raw, says):
    acta = flagged_acta(seed=11)
    before = Extraction.objects.get(pk=acta.extraction.pk).answer
    with pytest.raises(review.InvalidValue, match=says):
        review.field_edit(document_id=acta.document.id, user=users["reviewer"], path=path, raw_value=raw,
                          expected_version=acta.document.version)
    assert Extraction.objects.get(pk=acta.extraction.pk).answer == before
    assert Document.objects.get(pk=acta.document.pk).version == acta.document.version
    assert not ReviewEvent.objects.filter(document=acta.document, kind="edit").exists()


@pytest.mark.parametrize(("path", "raw", "says"), [
    ("rows[0].votes", "1" + "0" * 30, "less than or equal to 1000000000"),
    ("valid_votes", "1000000001", "less than or equal to 1000000000"),
    ("acta_id", "0" * 100_000, "at most 1000 characters; this one has 100000"),
    ("acta_id", "ACTA N° 050201001.01 " * 3, "at most 40 characters"),
    ("rows[0].votes_words", "CERO " * 300, "at most 1000 characters"),
], ids=["count-of-10^30", "total-over-a-billion", "acta-code-of-100k-chars", "acta-code-beyond-its-form",
        "words-over-1000-chars"])
def test_a_value_beyond_the_bounds_of_its_kind_is_refused_with_a_short_message_and_changes_nothing(
        users, path, raw, says):
    acta = flagged_acta(seed=14)
    before = Extraction.objects.get(pk=acta.extraction.pk).answer
    with pytest.raises(review.InvalidValue, match=says) as refused:
        review.field_edit(document_id=acta.document.id, user=users["reviewer"], path=path, raw_value=raw,
                          expected_version=acta.document.version)
    assert len(str(refused.value)) < 200  # the value is quoted cut short, never echoed whole
    assert Extraction.objects.get(pk=acta.extraction.pk).answer == before
    assert not ReviewEvent.objects.filter(document=acta.document, kind="edit").exists()


def test_the_largest_count_and_a_code_of_the_actas_form_are_still_saved(users):
    acta = flagged_acta(seed=15)
    version = acta.document.version
    for path, raw, value in (("rows[0].votes", "1000000000", 10**9), ("acta_id", "050201001.01", "050201001.01")):
        result = review.field_edit(document_id=acta.document.id, user=users["reviewer"], path=path, raw_value=raw,
                                   expected_version=version)
        assert result.value == value
        version = result.version


def test_a_count_of_10_to_the_30_posted_to_the_desk_gets_the_message_beside_the_field(users, client):
    acta = flagged_acta(seed=16)
    client.force_login(users["reviewer"])
    response = client.post(reverse("desk_edit", args=[acta.document.id]),
                           {"field": "rows[0].votes", "value": "1" + "0" * 30, "version": acta.document.version},
                           headers={"HX-Request": "true"})
    assert response.status_code == 200 and response["HX-Retarget"] == "#f-rows-0-votes"
    assert "less than or equal to 1000000000" in response.content.decode()
    assert Document.objects.get(pk=acta.document.pk).version == acta.document.version


def test_the_values_and_their_words_stay_editable(users):
    acta = flagged_acta(seed=12)
    version = acta.document.version
    for path, raw, value in (("rows[0].votes", "12", 12), ("rows[0].votes_words", "UNO DOS", "UNO DOS"),
                             ("total_votes", "0", 0), ("acta_id", "x", "x")):
        result = review.field_edit(document_id=acta.document.id, user=users["reviewer"], path=path, raw_value=raw,
                                   expected_version=version)
        assert result.value == value
        version = result.version


def test_a_crafted_edit_post_gets_a_message_and_not_an_empty_answer(users, client):
    acta = flagged_acta(seed=13)
    client.force_login(users["reviewer"])
    url = reverse("desk_edit", args=[acta.document.id])
    response = client.post(url, {"field": "rows[0].party", "value": "X", "version": acta.document.version},
                           headers={"HX-Request": "true"})
    assert response.status_code == 200 and response["HX-Retarget"] == "#desk-status"
    assert "cannot be corrected" in response.content.decode()
    # without htmx: back to the desk with the message
    response = client.post(url, {"field": "rows[0].votes.value", "value": "1", "version": acta.document.version},
                           follow=True)
    assert "cannot be corrected" in response.content.decode()
