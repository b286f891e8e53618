"""Statements sent together (extraction/sql_batch.py): one query to PostgreSQL, each statement's rows back in
order, values stored as the ORM stores them, and all or nothing inside the caller's transaction."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext

from extraction import sql_batch
from extraction.models import FieldValue, ReviewEvent
from extraction.sql_batch import (
    delete_statement,
    insert_statement,
    instance_of,
    pks_set,
    select_columns,
    statements_run,
    update_of,
    update_statement,
)
from tests.support.desk_data import flagged_acta

pytestmark = pytest.mark.django_db


def _statements(acta, event: ReviewEvent) -> list:
    extraction = acta.extraction
    return [
        (f"SELECT path FROM {FieldValue._meta.db_table} WHERE extraction_id = %s ORDER BY position LIMIT 2",  # noqa: S608
         [extraction.pk]),
        update_statement(model=FieldValue, where={"extraction": extraction.pk, "path": "rows[0].votes"},
                         values={"value": 77, "corrected": True, "proofs": [{"block_id": "9", "text": "77"}]}),
        insert_statement(objs=[event], returning_pk=True),
    ]


def _event(acta) -> ReviewEvent:
    return ReviewEvent(document_id=acta.document.pk, kind=ReviewEvent.Kind.EDIT, field="rows[0].votes",
                       before=7, after={"n": 77, "words": ["SETENTA", "Y", "SIETE"]}, note="it's 100% \"quoted\"")


@pytest.mark.skipif(connection.vendor != "postgresql", reason="one query is PostgreSQL's (the suite runs on it)")
def test_it_sends_the_statements_to_postgresql_as_one_query_and_returns_each_ones_rows(users):
    acta = flagged_acta(seed=3, pages=1, filler_words=10)
    event = _event(acta)
    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        selected, updated, inserted = statements_run(statements=_statements(acta, event))
    assert len(queries.captured_queries) == 1
    assert [path for (path,) in selected] == list(
        FieldValue.objects.filter(extraction=acta.extraction).order_by("position").values_list("path", flat=True)[:2])
    assert updated == 1
    assert pks_set(objs=[event], rows=inserted)
    assert ReviewEvent.objects.filter(pk=event.pk).exists()


def test_one_by_one_the_statements_give_the_same_results(users, monkeypatch):
    # What a database without result sets of their own (SQLite, the demo's) or a server-binding cursor gets.
    monkeypatch.setattr(sql_batch, "_sends_many", lambda cursor: False)
    acta = flagged_acta(seed=3, pages=1, filler_words=10)
    event = _event(acta)
    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        selected, updated, inserted = statements_run(statements=_statements(acta, event))
    assert len(queries.captured_queries) == 3
    assert len(selected) == 2 and updated == 1 and pks_set(objs=[event], rows=inserted)


def test_the_values_are_stored_as_the_orm_stores_them(users):
    acta = flagged_acta(seed=3, pages=1, filler_words=10)
    event = _event(acta)
    with transaction.atomic():
        statements_run(statements=_statements(acta, event))
    field = FieldValue.objects.get(extraction=acta.extraction, path="rows[0].votes")
    assert (field.value, field.corrected, field.proofs) == (77, True, [{"block_id": "9", "text": "77"}])
    stored = ReviewEvent.objects.get(kind=ReviewEvent.Kind.EDIT, field="rows[0].votes")
    assert stored.after == {"n": 77, "words": ["SETENTA", "Y", "SIETE"]} and stored.before == 7
    assert stored.note == "it's 100% \"quoted\""
    assert stored.created_at is not None and stored.created_at == event.created_at  # auto_now_add, as save sets it


def test_a_statement_that_fails_undoes_the_ones_sent_with_it(users):
    acta = flagged_acta(seed=3, pages=1, filler_words=10)
    extraction = acta.extraction
    first = FieldValue.objects.filter(extraction=extraction).order_by("position").first()
    duplicate = FieldValue(extraction_id=extraction.pk, path=first.path)  # (extraction, path) is unique
    kept = ReviewEvent.objects.create(document_id=acta.document.pk, kind=ReviewEvent.Kind.CLAIM)
    with pytest.raises(IntegrityError), transaction.atomic():
        statements_run(statements=[
            update_statement(model=FieldValue, where={"extraction": extraction.pk, "path": first.path},
                             values={"value": "changed"}),
            delete_statement(model=ReviewEvent, pks=[kept.pk]),
            insert_statement(objs=[duplicate]),
        ])
    first.refresh_from_db()
    assert first.value != "changed" and ReviewEvent.objects.filter(pk=kept.pk).exists()


def test_an_insert_without_returned_keys_leaves_its_rows_unnumbered(users):
    acta = flagged_acta(seed=3, pages=1, filler_words=10)
    event = _event(acta)
    with transaction.atomic():
        (rows,) = statements_run(statements=[insert_statement(objs=[event])])
    assert rows == 1 and not pks_set(objs=[event], rows=rows) and event.pk is None


def test_an_instance_is_read_back_as_the_orm_reads_it_whatever_the_order_of_its_columns(users):
    from extraction.models import Extraction

    acta = flagged_acta(seed=3, pages=1, filler_words=10)
    names = ("started_at", "answer", "id", "reader")  # not the model's order
    sql = (f"SELECT {select_columns(model=Extraction, names=names, alias='e')} "  # noqa: S608
           f"FROM {Extraction._meta.db_table} e WHERE e.id = %s")
    (rows,) = statements_run(statements=[(sql, [acta.extraction.pk])])
    read = instance_of(model=Extraction, names=names, values=rows[0])
    stored = Extraction.objects.get(pk=acta.extraction.pk)
    assert (read.pk, read.answer, read.reader, read.started_at) == (stored.pk, stored.answer, stored.reader,
                                                                    stored.started_at)
    assert isinstance(read.answer, dict) and read.get_deferred_fields() >= {"settings", "document_id"}


def test_an_update_of_a_filter_is_the_one_the_orm_runs_and_one_nothing_can_match_changes_nothing(users):
    acta = flagged_acta(seed=3, pages=1, filler_words=10)
    fields = FieldValue.objects.filter(extraction=acta.extraction, path="rows[0].votes")
    changed, unmatchable = statements_run(statements=[
        update_of(queryset=fields, values={"value": 5}),
        update_of(queryset=FieldValue.objects.filter(pk=2**70), values={"value": 6}),  # past a bigint
    ])
    assert (changed, unmatchable) == (1, 0) and fields.get().value == 5
