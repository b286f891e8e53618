"""Several SQL statements sent to the database as one query: one round trip to PostgreSQL instead of one each.

A desk edit writes to four tables and reads back the ids of the rule verdicts it stored; on PostgreSQL each
statement sent alone waits for the server's answer before the next goes. psycopg's client-side-binding cursor
(Django's default for PostgreSQL) sends a query of several statements over the simple protocol and hands back
each statement's result as a set of its own (`nextset`), so the statements go together. Any other database,
or a cursor binding on the server (`server_side_binding`), runs them one by one with the same results.

The statements are written from the models' own names and their fields' own conversions (`get_db_prep_save`),
so a value is stored as the ORM would store it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.core.exceptions import EmptyResultSet
from django.db import connections
from django.db.models import Model, QuerySet
from django.db.models.sql import UpdateQuery

Statement = tuple[str, list]


def statements_run(*, statements: Sequence[Statement], using: str = "default") -> list[list[tuple] | int]:
    """Run the statements in order, in the caller's transaction; each one's rows, or for a statement that
    returns none, the number of rows it changed."""
    connection = connections[using]
    with connection.cursor() as cursor:
        out = []
        if _sends_many(cursor) and len(statements) > 1:
            cursor.execute("; ".join(sql for sql, _ in statements), [p for _, params in statements for p in params])
            for _ in statements:
                out.append(_result(cursor))
                cursor.nextset()
        else:
            for sql, params in statements:
                cursor.execute(sql, params)
                out.append(_result(cursor))
        return out


def _result(cursor) -> list[tuple] | int:
    return cursor.fetchall() if cursor.description else cursor.rowcount


def _sends_many(cursor) -> bool:
    if cursor.db.vendor != "postgresql":
        return False
    try:
        from psycopg import ClientCursor
    except ImportError:  # psycopg2: no result sets of their own
        return False
    return isinstance(cursor.cursor, ClientCursor)


def _q(connection, name: str) -> str:
    return connection.ops.quote_name(name)


def update_of(*, queryset: QuerySet, values: dict[str, Any]) -> Statement:
    """The statement `queryset.update(**values)` runs, written by Django's own compiler (a filter on the
    model's own table: one that joins others needs a read first, which `update` does and this does not)."""
    query = queryset.query.chain(UpdateQuery)
    query.add_update_values(values)
    query.clear_select_clause()
    if query.count_active_tables() != 1:
        raise ValueError("update_of takes a filter on the model's own table only")
    try:
        return query.get_compiler(queryset.db).as_sql()
    except EmptyResultSet:  # a filter nothing can match (an id past the column's range): an update of no row
        connection, meta = connections[queryset.db], queryset.model._meta
        pk = _q(connection, meta.pk.column)
        return f"UPDATE {_q(connection, meta.db_table)} SET {pk} = {pk} WHERE 1 = 0", []  # noqa: S608


def update_statement(*, model: type[Model], where: dict[str, Any], values: dict[str, Any],
                     using: str = "default") -> Statement:
    """UPDATE the model's rows whose fields equal `where`, setting `values` (both by field name)."""
    connection, meta = connections[using], model._meta
    sets, params = [], []
    for name, value in values.items():
        field = meta.get_field(name)
        sets.append(f"{_q(connection, field.column)} = %s")
        params.append(field.get_db_prep_save(value, connection))
    conditions = []
    for name, value in where.items():
        field = meta.get_field(name)
        conditions.append(f"{_q(connection, field.column)} = %s")
        params.append(field.get_db_prep_save(value, connection))
    return (f"UPDATE {_q(connection, meta.db_table)} SET {', '.join(sets)} "  # noqa: S608 - names from the model
            f"WHERE {' AND '.join(conditions)}", params)


def delete_statement(*, model: type[Model], pks: Iterable[Any], using: str = "default") -> Statement:
    """DELETE the model's rows with these primary keys (no cascade: for rows nothing refers to)."""
    connection, meta = connections[using], model._meta
    pks = list(pks)
    if not pks:
        raise ValueError("No rows to delete: leave the statement out.")
    return (f"DELETE FROM {_q(connection, meta.db_table)} "  # noqa: S608 - names from the model
            f"WHERE {_q(connection, meta.pk.column)} IN ({', '.join(['%s'] * len(pks))})", pks)


def insert_statement(*, objs: Sequence[Model], returning_pk: bool = False, using: str = "default") -> Statement:
    """INSERT new model instances (their defaults and auto_now_add filled in, as `save` fills them); with
    `returning_pk`, the statement returns their primary keys in order where the database can (see
    `pks_set`)."""
    connection, meta = connections[using], type(objs[0])._meta
    fields = [f for f in meta.concrete_fields if f is not meta.auto_field]
    rows, params = [], []
    for obj in objs:
        rows.append(f"({', '.join(['%s'] * len(fields))})")
        params.extend(f.get_db_prep_save(f.pre_save(obj, True), connection) for f in fields)
    returning = (f" RETURNING {_q(connection, meta.pk.column)}"
                 if returning_pk and connection.features.can_return_rows_from_bulk_insert else "")
    return (f"INSERT INTO {_q(connection, meta.db_table)} "  # noqa: S608 - names from the model
            f"({', '.join(_q(connection, f.column) for f in fields)}) VALUES {', '.join(rows)}{returning}", params)


def pks_set(*, objs: Sequence[Model], rows: list[tuple] | int) -> bool:
    """Give the inserted instances the keys their statement returned; False when it returned none."""
    if not isinstance(rows, list) or len(rows) != len(objs):
        return False
    for obj, (pk,) in zip(objs, rows, strict=True):
        obj.pk = pk
        obj._state.adding = False
    return True


def select_columns(*, model: type[Model], names: Sequence[str], alias: str, using: str = "default") -> str:
    """The columns of these fields (by name), as `alias`.column, for a statement's SELECT list."""
    connection = connections[using]
    return ", ".join(f"{alias}.{_q(connection, model._meta.get_field(n).column)}" for n in names)


def instance_of(*, model: type[Model], names: Sequence[str], values: Sequence[Any], using: str = "default") -> Model:
    """A model instance from a row of `select_columns`, each value converted as the ORM converts it (the
    database's converters, then the field's: JSON decoded, SQLite's datetimes parsed); fields not named are
    deferred, as `.only()` leaves them."""
    connection = connections[using]
    by_field = {}
    for name, value in zip(names, values, strict=True):
        field = model._meta.get_field(name)
        col = field.get_col(model._meta.db_table)
        for converter in connection.ops.get_db_converters(col) + field.get_db_converters(connection):
            value = converter(value, col, connection)
        by_field[field] = value
    fields = [f for f in model._meta.concrete_fields if f in by_field]  # from_db takes them in the model's order
    return model.from_db(using, [f.attname for f in fields], [by_field[f] for f in fields])
