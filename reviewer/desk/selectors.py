"""Reads for the views. Each returns a queryset or plain data with a bounded number of queries."""

from __future__ import annotations

import json
from functools import cache
from typing import Any, NamedTuple

from django.db import connections
from django.db.models import Count, Q, QuerySet

from extraction.models import Batch, Block, Document, Extraction, Page
from extraction.sql_batch import Statement, instance_of, select_columns, statements_run
from extraction.states import Status


def batch_list_with_counts(*, teams: list[int]) -> QuerySet[Batch]:
    """Batches with counts by state; 'flagged' counts the documents still to review, 'reviewed' the
    flagged ones a reviewer decided."""
    from extraction.states import ReviewStatus

    per_status = {f"n_{s.value}": Count("documents", filter=Q(documents__status=s.value)) for s in Status}
    per_status["n_flagged"] = Count("documents", filter=Q(documents__status=Status.FLAGGED.value,
                                                          documents__review_status=ReviewStatus.UNREVIEWED.value))
    per_status["n_reviewed"] = Count("documents", filter=Q(documents__status=Status.FLAGGED.value) & ~Q(
        documents__review_status=ReviewStatus.UNREVIEWED.value))
    return (Batch.objects.filter(trial=False, team__in=teams).annotate(n_documents=Count("documents"), **per_status)
            .order_by("-created_at"))


def batch_status_counts(*, batch: Batch) -> dict[str, int]:
    """Documents by state; a flagged document a reviewer decided counts as 'reviewed', not 'flagged'."""
    from extraction.states import ReviewStatus

    counts = {s.value: 0 for s in Status}
    counts["reviewed"] = 0
    for row in batch.documents.values("status", "review_status").annotate(n=Count("id")):
        reviewed = row["status"] == Status.FLAGGED.value and row["review_status"] != ReviewStatus.UNREVIEWED.value
        counts["reviewed" if reviewed else row["status"]] += row["n"]
    counts["total"] = sum(counts[s.value] for s in Status) + counts["reviewed"]
    counts["done"] = counts["passed"] + counts["flagged"] + counts["reviewed"] + counts["failed"]
    return counts


def batch_unsent_count(*, batch: Batch) -> int:
    """Queued documents of the batch whose message the broker has not taken (yet): processing is delayed."""
    return batch.documents.filter(status=Status.QUEUED.value, dispatched_at__isnull=True).count()


def audit_batches(*, teams: list[int]) -> QuerySet[Batch]:
    return Batch.objects.filter(trial=False, team__in=teams).annotate(
        n_passed=Count("documents", filter=Q(documents__status=Status.PASSED.value))
    ).order_by("-created_at")


# --- the review desk ---------------------------------------------------------------------------------

# The codes of what every type shares, in words, for the queue and the desk (the loop's, the proof rules',
# the review's); each type names its own rules (`DocumentType.rule_labels`); an unknown code reads as its words.
RULE_LABELS = {
    "audit_disagree": "A supervisor disagreed in an audit",
    "missing_value": "A value is missing",
    "proof_found": "A value has no proof on the page",
    "value_grounded": "A value is not what its proof shows",
    "schema": "The answer does not fit the document type",
    "parse_error": "The answer could not be read",
    "suspicious_pass": "Every rule passes, but a field is hardly trusted",
}


def rule_label(code: str) -> str:
    if code in RULE_LABELS:
        return RULE_LABELS[code]
    from extraction.doctypes.registry import rule_labels
    from extraction.doctypes.selectors import doctype_rule_labels

    for labels in (rule_labels(), doctype_rule_labels()):  # a database read only for a type defined in the app
        if code in labels:
            return labels[code]
    if code.startswith("rubric:"):
        return "A reviewer check failed: " + code.split(":", 1)[1].replace("_", " ")
    return code.replace("_", " ").capitalize()


def queue_documents_open(*, teams: list[int] | None = None, batch_id: int | None = None,
                         rule: str | None = None) -> QuerySet[Document]:
    """Flagged documents nobody has decided yet, oldest first, with their current extraction's id; of `teams`
    (every team's without)."""
    from django.db.models import Exists, OuterRef

    from extraction.models import Violation
    from extraction.states import ReviewStatus

    qs = Document.objects.filter(status=Status.FLAGGED.value, review_status=ReviewStatus.UNREVIEWED.value,
                                 batch__trial=False)
    if teams is not None:
        qs = qs.filter(batch__team__in=teams)
    if batch_id:
        qs = qs.filter(batch_id=batch_id)
    qs = qs.annotate(current_extraction_id=Extraction.objects.current_id())
    if rule:
        qs = qs.filter(Exists(Violation.objects.filter(extraction_id=OuterRef("current_extraction_id"), code=rule)))
    return qs.order_by("created_at", "id")


def queue_counts_by_team(*, teams: list[int]) -> list[dict]:
    """For a person in several teams: each team's open documents, [{"id", "name", "n"}] by name."""
    from extraction.models import Team
    from extraction.states import ReviewStatus

    counts = dict(Document.objects.filter(status=Status.FLAGGED.value, review_status=ReviewStatus.UNREVIEWED.value,
                                          batch__trial=False, batch__team__in=teams)
                  .values_list("batch__team").annotate(n=Count("id")).order_by())
    return [{"id": t.pk, "name": t.name, "n": counts.get(t.pk, 0)}
            for t in Team.objects.filter(pk__in=teams).order_by("name")]


def queue_rules_of(documents: list[Document]) -> None:
    """Attach `rules` [(code, label, count)] to each document of a queue page: one query for the page."""
    from extraction.models import Violation

    by_extraction = {d.current_extraction_id: d for d in documents if d.current_extraction_id}
    for d in documents:
        d.rules = []
    rows = (
        Violation.objects.filter(extraction_id__in=list(by_extraction))
        .values("extraction_id", "code").annotate(n=Count("id")).order_by("extraction_id", "code")
    )
    for row in rows:
        by_extraction[row["extraction_id"]].rules.append((row["code"], rule_label(row["code"]), row["n"]))


def queue_rule_codes(*, teams: list[int]) -> list[tuple[str, str]]:
    """The rule codes documents break, for the queue's filter, less those only other teams' own types name."""
    from extraction.doctypes.registry import rule_labels
    from extraction.doctypes.selectors import doctype_rule_teams
    from extraction.models import Violation

    # every stored code (an index-only scan of violation_code); joining to the teams' documents costs far more
    codes = Violation.objects.values_list("code", flat=True).distinct().order_by("code")
    owners = doctype_rule_teams()  # cached: a code only other teams' own types name is not listed

    def shown(code: str) -> bool:
        return (code not in owners or code in RULE_LABELS or code in rule_labels()
                or any(team in teams or shared for team, shared in owners[code]))

    return [(c, rule_label(c)) for c in codes if shown(c)]


def documents_for_desk() -> QuerySet[Document]:
    """Documents with their batch and claim holder, for the desk's access helper to scope and pick one of."""
    return Document.objects.select_related("batch", "claimed_by")


class DeskField(NamedTuple):
    """What the desk and an edit's rules read of a FieldValue (read as values: an edit reads every field,
    and building a model instance, or even a frozen dataclass, for each cost more than the query)."""

    path: str
    value: Any
    model_value: Any
    proofs: list
    confidence: float | None
    corrected: bool
    field_confidence: float | None


@cache
def _desk_fields_sql(*, current: bool) -> str:
    """Every edit reads all of a document's fields: written out, the read skips most of what the ORM spends
    building it and converting each value (docs/BENCHMARKS.md). The names are the model's own."""
    from extraction.models import FieldValue

    meta = FieldValue._meta
    columns = ", ".join(meta.get_field(name).column for name in DeskField._fields)
    return (f"SELECT {columns} FROM {meta.db_table} "  # noqa: S608 - names from the model, the id a parameter
            f"WHERE {meta.get_field('extraction').column} = {_extraction_sql(current=current)} "
            f"ORDER BY {meta.get_field('position').column}")


@cache
def _extraction_sql(*, current: bool) -> str:
    """An extraction's id as a statement's parameter, or (`current`) the id of the current extraction of the
    document whose id is the parameter (`ExtractionQuerySet.newest_first`), as a subquery."""
    if not current:
        return "%s"
    meta = Extraction._meta
    document, started = meta.get_field("document").column, meta.get_field("started_at").column
    return (f"(SELECT {meta.pk.column} FROM {meta.db_table} WHERE {document} = %s "  # noqa: S608 - the model's names
            f"ORDER BY {started} DESC, {meta.pk.column} DESC LIMIT 1)")


# What an edit and the desk's answer to it read of the extraction, its document and batch. Their other columns
# (a run's settings and costs, the upload, the OCR's bookkeeping) are not read: every edit would pay for them.
_EDIT_READS = {
    Extraction: ("id", "document", "doctype", "doctype_version", "reader", "answer", "settings", "started_at"),
    Document: ("id", "batch", "filename", "status", "review_status", "version", "claimed_by", "claimed_at",
               "created_at"),
    Batch: ("id", "name", "doctype", "doctype_version", "trial", "team"),
}


@cache
def _extraction_for_edit_sql() -> str:
    e, d, b = Extraction._meta, Document._meta, Batch._meta
    columns = ", ".join(select_columns(model=model, names=names, alias=alias)
                        for (model, names), alias in zip(_EDIT_READS.items(), ("e", "d", "b"), strict=True))
    return (f"SELECT {columns} FROM {e.db_table} e "  # noqa: S608 - the models' names, the id a parameter
            f"JOIN {d.db_table} d ON d.{d.pk.column} = e.{e.get_field('document').column} "
            f"JOIN {b.db_table} b ON b.{b.pk.column} = d.{d.get_field('batch').column} "
            f"WHERE e.{e.pk.column} = {_extraction_sql(current=True)}")


def extraction_for_edit_statement(*, document_id: int) -> Statement:
    """A document's current extraction with its document and batch, the columns an edit and the desk's
    answer to it read (`extraction_for_edit_of`), to send with others (`sql_batch`)."""
    return _extraction_for_edit_sql(), [document_id]


def extraction_for_edit_of(rows: list[tuple]) -> Extraction | None:
    """The extraction of `extraction_for_edit_statement`'s row, its document and batch set on it; None when the
    document has no extraction."""
    if not rows:
        return None
    values, made = list(rows[0]), []
    for model, names in _EDIT_READS.items():
        made.append(instance_of(model=model, names=names, values=values[:len(names)]))
        values = values[len(names):]
    extraction, document, batch = made
    document.batch = batch
    extraction.document = document
    return extraction


def _json(value: Any) -> Any:
    """A JSON column as JSONField reads it: the database hands over its text (PostgreSQL's too, as Django
    sets psycopg up), None for SQL NULL."""
    return json.loads(value) if isinstance(value, str | bytes) else value


def _json_all(texts: list) -> list:
    """Many JSON columns' texts decoded at once, as one array: each is a whole JSON text (JSONField wrote
    it), and one decode of many costs far less than many decodes (docs/BENCHMARKS.md)."""
    if all(isinstance(t, str) or t is None for t in texts):
        return json.loads("[" + ",".join(["null" if t is None else t for t in texts]) + "]")
    return [_json(t) for t in texts]


# What a proof cites of a block the reviewer picked, and of its page: its number (the page's other columns,
# its image and a second engine's words, are not read)
_PICKED_READS = {
    Block: ("id", "type", "text", "parent", "row", "column", "left", "top", "width", "height", "confidence",
            "order", "page"),
    Page: ("id", "number"),
}


def picked_blocks_statement(*, document_id: int, block_ids: list[int]) -> Statement:
    """The blocks of the document with these ids, in reading order, with their pages' numbers
    (`picked_blocks_of`), to send with others (`sql_batch`)."""
    b, p, qn = Block._meta, Page._meta, connections["default"].ops.quote_name
    columns = ", ".join((select_columns(model=Block, names=_PICKED_READS[Block], alias="b"),
                         select_columns(model=Page, names=_PICKED_READS[Page], alias="p")))
    ids = ", ".join(["%s"] * len(block_ids))
    return (f"SELECT {columns} FROM {b.db_table} b "  # noqa: S608 - the models' names, the ids parameters
            f"JOIN {p.db_table} p ON p.{p.pk.column} = b.{b.get_field('page').column} "
            f"WHERE b.{b.get_field('document').column} = %s AND b.{b.pk.column} IN ({ids}) "
            f"ORDER BY p.{qn(p.get_field('number').column)}, b.{qn(b.get_field('order').column)}, b.{b.pk.column}",
            [document_id, *block_ids])


def picked_blocks_of(rows: list[tuple]) -> list:
    """Block instances of `picked_blocks_statement`'s rows, each with its page (its id and number) set."""
    n, out = len(_PICKED_READS[Block]), []
    for row in rows:
        block = instance_of(model=Block, names=_PICKED_READS[Block], values=row[:n])
        block.page = instance_of(model=Page, names=_PICKED_READS[Page], values=row[n:])
        out.append(block)
    return out


def desk_fields(*, extraction) -> dict[str, DeskField]:
    """An extraction's fields by path, as the desk shows them (one query)."""
    (rows,) = statements_run(statements=[desk_fields_statement(extraction_id=extraction.pk)])
    return desk_fields_of(rows)


def desk_fields_statement(*, extraction_id: int | None = None, current_of: int | None = None) -> Statement:
    """The read of `desk_fields`, to send with others (`sql_batch`): of an extraction, or of the current
    extraction of the document `current_of`."""
    return _desk_fields_sql(current=current_of is not None), [extraction_id if current_of is None else current_of]


def desk_fields_of(rows: list[tuple]) -> dict[str, DeskField]:
    decoded = iter(_json_all([text for row in rows for text in row[1:4]]))
    return {row[0]: DeskField(row[0], next(decoded), next(decoded), next(decoded), row[4], bool(row[5]), row[6])
            for row in rows}


@cache
def _desk_violations_sql(*, current: bool) -> str:
    from extraction.models import Violation

    meta = Violation._meta
    columns = ", ".join(f.column for f in meta.concrete_fields)
    return (f"SELECT {columns} FROM {meta.db_table} "  # noqa: S608 - names from the model, the id a parameter
            f"WHERE {meta.get_field('extraction').column} = {_extraction_sql(current=current)} "
            f"ORDER BY {meta.pk.column}")


def desk_violations(*, extraction) -> list:
    """The extraction's Violation rows in their order, labelled. Every edit reads them: a raw query (the
    model's own conversions, none of the ORM's building) spares most of the ORM's work (docs/BENCHMARKS.md)."""
    (rows,) = statements_run(statements=[desk_violations_statement(extraction_id=extraction.pk)])
    return desk_violations_of(rows)


def desk_violations_statement(*, extraction_id: int | None = None, current_of: int | None = None) -> Statement:
    """The read of `desk_violations`, to send with others (`sql_batch`): of an extraction, or of the current
    extraction of the document `current_of`."""
    return (_desk_violations_sql(current=current_of is not None),
            [extraction_id if current_of is None else current_of])


def desk_violations_of(rows: list[tuple]) -> list:
    """Violation instances of `desk_violations_statement`'s rows, labelled."""
    from extraction.models import Violation

    names = [f.name for f in Violation._meta.concrete_fields]
    return violations_labelled([instance_of(model=Violation, names=names, values=row) for row in rows])


def violations_labelled(violations: list) -> list:
    """Violation rows with their rule's label for people (`.label`)."""
    for v in violations:
        v.label = rule_label(v.code)
    return violations


def field_value(*, extraction, path: str):
    from extraction.models import FieldValue

    return FieldValue.objects.filter(extraction=extraction, path=path).first()


def document_pages(*, document: Document) -> dict[int, object]:
    from extraction.models import Page

    return {p.number: p for p in Page.objects.filter(document=document).order_by("number")}


def document_history(*, document: Document) -> dict:
    """The rounds of every extraction (newest first), what changed between rounds, and the review events."""
    from extraction.models import ReviewEvent, Round
    from extraction.rules.answers import iter_fields

    extractions = list(Extraction.objects.filter(document=document).newest_first())
    rounds_by = {}
    for r in Round.objects.filter(extraction__in=extractions).order_by("extraction_id", "number"):
        rounds_by.setdefault(r.extraction_id, []).append(r)
    for e in extractions:
        e.round_list = rounds_by.get(e.id, [])
        previous: dict = {}
        for r in e.round_list:
            values = {p: n.get("value") for p, n in iter_fields(r.parsed)} if isinstance(r.parsed, dict) else {}
            r.changes = [(p, previous.get(p), v) for p, v in values.items() if previous and previous.get(p) != v]
            r.rule_summary = sorted({(v.get("code", "?"), rule_label(v.get("code", "?"))) for v in r.violations or []})
            r.n_violations = len(r.violations or [])
            if values:
                previous = values
    events = list(ReviewEvent.objects.filter(document=document).select_related("user").order_by("created_at", "id"))
    return {"extractions": extractions, "events": events}


def page_blocks(*, page) -> list[tuple]:
    """A page's LINE and WORD blocks as (id, type, text, left, top, width, height, parent id), reading order."""
    from extraction.models import Block

    return list(Block.objects.filter(page=page, type__in=("LINE", "WORD")).order_by("order", "id")
                .values_list("id", "type", "text", "left", "top", "width", "height", "parent_id"))


def last_decision(*, document: Document):
    """The review event that decided the document (verify or reject), with its user; None if none."""
    from extraction.models import ReviewEvent

    return (ReviewEvent.objects.filter(document=document, kind__in=("verify", "reject")).select_related("user")
            .order_by("-created_at", "-id").first())


def last_event(*, document: Document):
    """The latest review event on the document, with its user; None if none."""
    from extraction.models import ReviewEvent

    return ReviewEvent.objects.filter(document=document).select_related("user").order_by("-created_at", "-id").first()
