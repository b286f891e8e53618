"""The review desk's writes: claim, release, next, edit a field (rules re-run at once), verify, reject, send back.

Every change is a ReviewEvent (who, when, which field, before, after). Every write is a conditional UPDATE:
edits, verifications and rejections carry the Document.version the reviewer saw, and a write whose version
no longer matches changes nothing and says so (no lost update). A claim is a lock with a time limit
(CLAIM_TTL_MINUTES): while it holds, nobody else may change the document.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from extraction.doctypes.base import EditRefused
from extraction.doctypes.selectors import extraction_doctype
from extraction.models import Batch, Block, Document, Extraction, FieldValue, ReviewEvent, Violation
from extraction.pipeline.transitions import document_review_transition, document_transition
from extraction.proofs.picked import PICKED, picked_box, picked_proof
from extraction.reading.validation import make_validator
from extraction.rules.answers import get_field, get_value, set_field
from extraction.rules.violations import RuleContext
from extraction.rules.violations import Violation as RuleViolation
from extraction.sql_batch import (
    Statement,
    delete_statement,
    insert_statement,
    pks_set,
    statements_run,
    update_of,
    update_statement,
)
from extraction.states import ReviewStatus, Status
from reviewer.desk.rule_context import blocks_seen_statement, document_rule_context
from reviewer.desk.selectors import (
    DeskField,
    desk_fields_of,
    desk_fields_statement,
    desk_violations,
    desk_violations_of,
    desk_violations_statement,
    extraction_for_edit_of,
    extraction_for_edit_statement,
    picked_blocks_of,
    picked_blocks_statement,
    violations_labelled,
)
from reviewer.webhooks import services as webhooks
from reviewer.whole_numbers import whole_number

# Proof rules about a single field: a reviewer's correction is itself the evidence for the new value, so
# "the cited text does not show this value" is not raised again on a field a reviewer corrected.
GROUNDING_CODES = frozenset({"proof_found", "value_grounded"})
MAX_PICKED_BLOCKS = 200
TYPED = "typed by the reviewer"  # the note of an edit whose value was typed, not taken from the page


class ReviewError(Exception):
    """A review action that cannot be done; the message is for the reviewer."""


class StaleVersion(ReviewError):
    """Someone saved the document after this reviewer loaded it."""


class ClaimedByOther(ReviewError):
    """Another reviewer holds the document."""


class NotEditable(ReviewError):
    """The document is not open for review (passed, already decided, or not extracted)."""


class InvalidValue(ReviewError):
    """The reviewer's text is not a value of the field's type."""


class NoteRequired(ReviewError):
    """Verifying while rules still fail needs the reviewer's reason."""


class Unchanged(ReviewError):
    """An edit or take whose value (and proof) is what the field already has: nothing was written."""


@dataclass(frozen=True)
class EditResult:
    version: int
    value: Any
    violations: list[RuleViolation]
    # As the edit left them (read after its guarded update, the answer set to the edited one): the desk shows
    # them without reading them again.
    document: Document | None = None
    extraction: Extraction | None = None
    fields: dict[str, DeskField] | None = None  # the fields by path
    stored: list[Violation] | None = None  # the Violation rows saved, labelled (ids for the desk's links)
    # As the reviewer's page showed them (the guarded update proved nobody wrote in between): the desk sends
    # back only the cells whose rules or values changed.
    answer_before: dict | None = None
    stored_before: list[Violation] | None = None
    # How the value came: "typed", "taken" from the page, or its proof "moved" (the desk shows a typed value's
    # proof as the old one without reading the events back)
    how: str = ""


def claim_ttl() -> timedelta:
    return timedelta(minutes=settings.CLAIM_TTL_MINUTES)


def claim_expires_at(document: Document):
    return document.claimed_at + claim_ttl() if document.claimed_at else None


def claim_is_live(document: Document, *, now=None) -> bool:
    now = now or timezone.now()
    return bool(document.claimed_by_id and document.claimed_at and document.claimed_at + claim_ttl() > now)


def _free_or_mine(user_id: int, now) -> Q:
    return Q(claimed_by__isnull=True) | Q(claimed_by_id=user_id) | Q(claimed_at__lt=now - claim_ttl())


def _open_for_review() -> Q:
    return Q(status=Status.FLAGGED.value, review_status=ReviewStatus.UNREVIEWED.value)


def is_open_for_review(document: Document) -> bool:
    return document.status == Status.FLAGGED.value and document.review_status == ReviewStatus.UNREVIEWED.value


def _why_not(*, document_id: int, user, expected_version: int | None) -> Exception:
    """After a guarded update matched nothing: the reason, in words for the reviewer. Another team's document
    does not exist for them (DoesNotExist: a 404); in their own team, a role that does not correct is refused."""
    from reviewer.access import WORK_ROLES, user_teams

    user_id = user.pk
    doc = Document.objects.select_related("claimed_by", "batch").filter(pk=document_id).first()
    held = user_teams(user).get(doc.batch.team_id) if doc is not None else None
    if held is None:
        return Document.DoesNotExist("No such document.")
    if not held & set(WORK_ROLES):
        return PermissionDenied("Your role in this document's team does not correct values.")
    if not is_open_for_review(doc):
        if doc.status == Status.PASSED.value:
            return NotEditable("This document passed its rules; it is read-only unless a supervisor sends it back.")
        if doc.status == Status.FLAGGED.value:
            return NotEditable(f"This document was already {doc.review_status}; it is read-only now.")
        return NotEditable(f"This document is {doc.status}, not waiting for review.")
    if doc.claimed_by_id not in (None, user_id) and claim_is_live(doc):
        until = timezone.localtime(claim_expires_at(doc)).strftime("%H:%M")
        who = doc.claimed_by.get_username()
        return ClaimedByOther(f"{who} is working on this document (their claim holds until {until}).")
    if expected_version is not None and doc.version != expected_version:
        return StaleVersion(
            f"Someone saved this document after you opened it (your version {expected_version}, now {doc.version}). "
            "Reload it to see their changes, then redo yours."
        )
    return ReviewError("The document changed while you were saving; reload it and try again.")


def _team_works(user, team: int) -> bool:
    from reviewer.access import WORK_ROLES, user_teams

    return bool(user_teams(user).get(team, frozenset()) & set(WORK_ROLES))


def _hold_statement(*, document_id: int, user, expected_version: int | None, bump: bool,
                    team_guard: bool = True) -> Statement:
    """The guarded update that takes or refreshes the user's claim (and bumps the version for a content
    write): it changes one row, or none when the user may not write (`_why_not` says why). With `team_guard`
    only a document of a team where the user's role corrects values; without, the caller checks the team of
    what it read in the same transaction before anything else (`_held_for_edit`)."""
    from reviewer.access import WORK_ROLES, team_ids

    now = timezone.now()
    qs = Document.objects.filter(_open_for_review(), _free_or_mine(user.pk, now), pk=document_id)
    if team_guard:  # only where one's role works
        qs = qs.filter(batch__in=Batch.objects.filter(team__in=team_ids(user, *WORK_ROLES)).values("pk"))
    if expected_version is not None:
        qs = qs.filter(version=expected_version)
    changes: dict[str, Any] = {"claimed_by": user, "claimed_at": now}
    if bump:
        changes["version"] = F("version") + 1
    return update_of(queryset=qs, values=changes)


def _hold(*, document_id: int, user, expected_version: int | None, bump: bool) -> None:
    """Take or refresh the user's claim (and bump the version for a content write), or raise why not."""
    (changed,) = statements_run(statements=[_hold_statement(document_id=document_id, user=user,
                                                            expected_version=expected_version, bump=bump)])
    if changed != 1:
        raise _why_not(document_id=document_id, user=user, expected_version=expected_version)


# --- claims ------------------------------------------------------------------------------------------


@transaction.atomic
def document_claim(*, document_id: int, user) -> Document:
    """Lock a flagged document for this reviewer (refreshes their own claim); raises ClaimedByOther or NotEditable."""
    before = Document.objects.filter(pk=document_id).values_list("claimed_by_id", "claimed_at").first()
    _hold(document_id=document_id, user=user, expected_version=None, bump=False)
    held_before = before and before[0] == user.pk and before[1] and before[1] + claim_ttl() > timezone.now()
    if not held_before:
        ReviewEvent.objects.create(document_id=document_id, user=user, kind=ReviewEvent.Kind.CLAIM)
    return Document.objects.select_related("claimed_by").get(pk=document_id)


@transaction.atomic
def document_release(*, document_id: int, user) -> bool:
    """Give up this reviewer's claim; False when they did not hold it."""
    released = Document.objects.filter(pk=document_id, claimed_by=user).update(claimed_by=None, claimed_at=None)
    if released:
        ReviewEvent.objects.create(document_id=document_id, user=user, kind=ReviewEvent.Kind.RELEASE)
    return bool(released)


def document_next(*, user, batch_id: int | None = None, rule: str | None = None) -> Document | None:
    """Claim the oldest flagged document nobody else holds (within the filters); None when the queue is empty.

    The reviewer's other claims are released: a reviewer holds one document at a time.
    """
    from reviewer.access import WORK_ROLES, team_ids
    from reviewer.desk.selectors import queue_documents_open

    teams = team_ids(user, *WORK_ROLES)
    for _ in range(20):  # each miss means someone else claimed that one first: take the next
        now = timezone.now()
        candidate = (
            queue_documents_open(teams=teams, batch_id=batch_id, rule=rule)
            .filter(_free_or_mine(user.pk, now))
            .exclude(claimed_by=user, claimed_at__gte=now - claim_ttl())
            .values_list("id", flat=True)
            .first()
        )
        if candidate is None:
            mine = queue_documents_open(teams=teams, batch_id=batch_id, rule=rule).filter(
                claimed_by=user, claimed_at__gte=now - claim_ttl()
            ).values_list("id", flat=True).first()
            return Document.objects.get(pk=mine) if mine else None
        try:
            with transaction.atomic():
                for held in Document.objects.filter(claimed_by=user).exclude(pk=candidate).values_list("id", flat=True):
                    document_release(document_id=held, user=user)
                return document_claim(document_id=candidate, user=user)
        except ReviewError:
            continue
    return None


# --- editing -----------------------------------------------------------------------------------------


def _parse_value(*, doctype, answer: dict, path: str, raw: str | None) -> tuple[dict, Any]:
    """The answer with `path` set to the reviewer's text: only a field the type declares editable, the value
    checked by its field's type and parsed by the schema."""
    try:
        parsed = doctype.edit_answer(answer, path, raw)
    except EditRefused as err:
        raise InvalidValue(str(err)) from None
    return parsed, get_value(parsed, path)


def _revalidate(*, document: Document, extraction: Extraction, answer: dict, ctx: RuleContext | None = None,
                fields: dict[str, DeskField] | None = None, parsed: bool = False) -> list[RuleViolation]:
    """Run the type's rules on the answer (no judge on edits). Grounding is waived on fields a reviewer
    typed in; a value taken from the page cites the blocks the reviewer picked, and those are checked.
    `fields`: the extraction's fields by path as stored now, when the caller has read them. `parsed`: the
    answer was just parsed by the type's schema (a reviewer's value), so it is not checked against it twice."""
    doctype = extraction_doctype(extraction=extraction, batch=document.batch)
    ctx = ctx or document_rule_context(document=document, extraction=extraction, doctype=doctype)
    broken = make_validator(doctype, ctx, parsed=parsed)(answer)
    stored = ([(fv.path, fv.proofs) for fv in fields.values() if fv.corrected] if fields is not None else
              FieldValue.objects.filter(extraction=extraction, corrected=True).values_list("path", "proofs"))
    corrected = {path for path, proofs in stored if not any(p.get("method") == PICKED for p in proofs or [])}
    return [v for v in broken if not (v.code in GROUNDING_CODES and v.fields and set(v.fields) <= corrected)]


@dataclass(frozen=True)
class _Held:
    """What an edit reads once it holds the document: its current extraction (with the document and batch)
    and type, the fields by path, the rules' stored verdict, and the row that keys its rule context."""
    document: Document
    extraction: Extraction
    doctype: Any
    fields: dict[str, DeskField]
    violations: list[Violation]
    blocks_seen: tuple
    picked: list[Block]  # the blocks asked for, with their pages


def _held_for_edit(*, document_id: int, user, expected_version: int, block_ids: list[int] | None = None) -> _Held:
    """Inside an edit's transaction, sent together: the guarded update first (it locks the row, so the answer
    read next is the one the edit replaces), then the current extraction with its fields, verdict and blocks'
    key (read in vain when the update changed nothing). They read the same extraction: a new one comes only
    from a re-run, which must first move the document, and the update holds its row until the edit commits."""
    statements = [
        _hold_statement(document_id=document_id, user=user, expected_version=expected_version, bump=True,
                        team_guard=False),
        extraction_for_edit_statement(document_id=document_id),
        desk_fields_statement(current_of=document_id), desk_violations_statement(current_of=document_id),
        blocks_seen_statement(document_id=document_id)]
    if block_ids:
        statements.append(picked_blocks_statement(document_id=document_id, block_ids=block_ids))
    held, extraction, fields, violations, (blocks_seen,), *picked = statements_run(statements=statements)
    if held != 1:
        raise _why_not(document_id=document_id, user=user, expected_version=expected_version)
    extraction = extraction_for_edit_of(extraction)
    team = extraction.document.batch.team_id if extraction is not None else None
    if team is not None and not _team_works(user, team):  # raised inside the edit's transaction: nothing stays
        raise _why_not(document_id=document_id, user=user, expected_version=expected_version)
    if extraction is None or not extraction.answer:
        raise NotEditable("This document has no extracted answer to correct.")
    document = extraction.document
    return _Held(document=document, extraction=extraction, fields=desk_fields_of(fields),
                 doctype=extraction_doctype(extraction=extraction, batch=document.batch),
                 violations=desk_violations_of(violations), blocks_seen=blocks_seen,
                 picked=picked_blocks_of(picked[0]) if picked else [])


def field_edit(*, document_id: int, user, path: str, raw_value: str | None, expected_version: int,
               only_if_changed: bool = False) -> EditResult:
    """Set one field to the reviewer's value, re-run the rules and save the violations; one ReviewEvent.
    The event says the value was typed (not taken from the page); the stored proof stays, as the proof the
    field had. With `only_if_changed` (the desk), typing the value the field already holds (the model's or a
    reviewer's) raises Unchanged and writes nothing."""
    with transaction.atomic():
        # An invalid value raises and rolls the version bump back.
        held = _held_for_edit(document_id=document_id, user=user, expected_version=expected_version)
        document, extraction, fields = held.document, held.extraction, held.fields
        before = get_value(extraction.answer, path)
        answer, value = _parse_value(doctype=held.doctype, answer=extraction.answer, path=path, raw=raw_value)
        proof_before = list(fields[path].proofs or []) if path in fields else []
        # Typing the value the field holds changes nothing (no "2 → 2" edit, no "corrected" badge); raised
        # inside the transaction, so the version bump and the claim roll back. Verify is how a value is confirmed.
        if only_if_changed and _same(value, before):
            raise Unchanged(f"The field already reads {value!r}; nothing changed.")
        fields, field_write = _field_save(extraction=extraction, fields=fields, path=path, value=value,
                                          before=before)
        violations = _revalidate(document=document, extraction=extraction, answer=answer, fields=fields, parsed=True,
                                 ctx=_rule_context(held))
        event = ReviewEvent(document_id=document_id, user=user, kind=ReviewEvent.Kind.EDIT, field=path,
                            before=before, after=value, proof_before=[_brief(p) for p in proof_before], note=TYPED)
        stored_before, stored = _edit_save(extraction=extraction, answer=answer, field_write=field_write,
                                           violations=violations, before=held.violations, event=event)
    return _edited(document, extraction, answer, value=value, violations=violations, fields=fields,
                   stored=stored, stored_before=stored_before, how="typed")


def _rule_context(held: _Held) -> RuleContext:
    return document_rule_context(document=held.document, extraction=held.extraction, doctype=held.doctype,
                                 blocks_seen=held.blocks_seen)


def _same(value: Any, before: Any) -> bool:
    """The value is the one the field holds (1, 1.0 and True told apart, as JSON does)."""
    return type(value) is type(before) and value == before


def _field_save(*, extraction: Extraction, fields: dict[str, DeskField], path: str, value: Any, before: Any,
                proofs: list | None = None, confidence: float | None = None, corrected: bool = True
                ) -> tuple[dict[str, DeskField], Statement]:
    """A reviewer's value (and, with `proofs`, its new proof and that proof's OCR confidence) for the field at
    `path`: the fields as they will be, from `fields` as they were (no second read), and the statement that
    stores it."""
    changes: dict[str, Any] = {"value": value, "corrected": corrected}
    if proofs is not None:
        changes.update(proofs=proofs, confidence=confidence)
    old = fields.get(path)
    if old is None:  # a value the run stored no row for
        write = insert_statement(objs=[FieldValue(extraction_id=extraction.pk, path=path, model_value=before,
                                                  position=len(fields), **changes)])
        new = DeskField(path=path, value=value, model_value=before, proofs=proofs or [], confidence=confidence,
                        corrected=corrected, field_confidence=None)
    else:
        write = update_statement(model=FieldValue, where={"extraction": extraction.pk, "path": path}, values=changes)
        new = old._replace(**changes)
    return {**fields, path: new}, write


def _edit_save(*, extraction: Extraction, answer: dict, field_write: Statement, violations: list[RuleViolation],
               before: list[Violation], event: ReviewEvent) -> tuple[list[Violation], list[Violation]]:
    """Store an edit: the answer, the field, the rules' verdict and the event, sent together (one round trip
    to PostgreSQL: `sql_batch`). Rows of rules still broken the same way stay (with their ids, so the desk's
    links to them hold), the others go and the new ones come. `before`: the rows stored, as the edit read them
    holding the document. The verdict's rows before and after, labelled."""
    kept, gone = [], []
    wanted = [_row_of(v) for v in violations]
    for row in before:
        if _same_as(row) in wanted:
            wanted.remove(_same_as(row))
            kept.append(row)
        else:
            gone.append(row.pk)
    added = [Violation(extraction_id=extraction.pk, code=code, message=message, fields=list(fields),
                       expected=expected, found=found, subject=subject or "")
             for code, message, fields, expected, found, subject in wanted]
    statements = [update_statement(model=Extraction, where={"id": extraction.pk}, values={"answer": answer}),
                  field_write, insert_statement(objs=[event])]
    if gone:
        statements.append(delete_statement(model=Violation, pks=gone))
    if added:  # last: its rows are the new ids
        statements.append(insert_statement(objs=added, returning_pk=True))
    results = statements_run(statements=statements)
    if added and not pks_set(objs=added, rows=results[-1]):  # a database that does not return them: read them
        return before, desk_violations(extraction=extraction)
    return before, kept + violations_labelled(added)


def _row_of(v: RuleViolation) -> tuple:
    return (v.code, v.message, tuple(v.fields), v.expected, v.found, v.subject or "")


def _same_as(row: Violation) -> tuple:
    return (row.code, row.message, tuple(row.fields or ()), row.expected, row.found, row.subject)


def _edited(document: Document, extraction: Extraction, answer: dict, *, value: Any,
            violations: list[RuleViolation], fields: dict[str, DeskField], stored: list[Violation],
            stored_before: list[Violation], how: str) -> EditResult:
    """What the edit left: `document` was read after its guarded update, so its version is the new one."""
    answer_before = extraction.answer
    extraction.answer = answer
    return EditResult(version=document.version, value=value, violations=violations, document=document,
                      extraction=extraction, fields=fields, stored=stored, answer_before=answer_before,
                      stored_before=stored_before, how=how)


def _picked_text(blocks: list[Block]) -> str:
    """The picked blocks' text in reading order; a word whose line is picked too is read once."""
    picked_lines = {b.pk for b in blocks if b.type == "LINE"}
    kept = [b for b in blocks if not (b.type == "WORD" and b.parent_id in picked_lines)]
    return " ".join(b.text.strip() for b in kept if b.text.strip())


def field_take_from_page(*, document_id: int, user, path: str, block_ids: list[int], expected_version: int,
                         proof_only: bool = False, only_if_changed: bool = False) -> EditResult:
    """Set a field from blocks the reviewer picked on the page: the value becomes their OCR text (unless
    `proof_only`) and the proof becomes those blocks. One ReviewEvent with the value and the proof before
    and after; the rules run again at once. With `only_if_changed` (the desk), a take leaving the value and
    the proof as they are raises Unchanged and writes nothing."""
    ids = [n for n in map(whole_number, block_ids) if n is not None][:MAX_PICKED_BLOCKS]
    if not ids:
        raise InvalidValue("Pick a word or a line on the page first.")
    with transaction.atomic():
        held = _held_for_edit(document_id=document_id, user=user, expected_version=expected_version, block_ids=ids)
        document, extraction, fields, blocks = held.document, held.extraction, held.fields, held.picked
        try:
            node = get_field(extraction.answer, path)
        except KeyError:
            raise InvalidValue(f"There is no field {path!r} in this document.") from None
        before = node.get("value") if isinstance(node, dict) else node
        if not blocks:
            raise InvalidValue("Those blocks are not on this document's pages.")
        text = _picked_text(blocks)
        if proof_only:  # a copy along the path: the proof set below must not change the answer read
            answer, value = set_field(extraction.answer, path, before), before
        else:
            answer, value = _parse_value(doctype=held.doctype, answer=extraction.answer, path=path, raw=text)
        ctx = _rule_context(held)
        # `answer` is this request's own (read from the database or parsed just now): the proof is set in place
        picked = picked_proof(blocks, answer=answer, path=path, located=ctx.locating())
        refs, proofs, confidences = picked.refs, picked.boxes, picked.confidences
        proof_before = list(fields[path].proofs or []) if path in fields else []
        # The desk's take of the value the field holds is no edit ("2 → 2"): at most its proof moves. Taking it
        # as the field cites it already changes nothing; re-citing the words it was read from changes no box.
        same_value = only_if_changed and not proof_only and _same(value, before)
        same_boxes = [p.get("block_id") for p in proofs] == [p.get("block_id") for p in proof_before]
        if same_value and same_boxes and refs == (node.get("proof") if isinstance(node, dict) else None):
            raise Unchanged("The field already has this value and this proof; nothing changed.")
        moved = proof_only or same_value
        fields, field_write = _field_save(
            extraction=extraction, fields=fields, path=path, value=value, before=before, proofs=proofs,
            confidence=min(confidences) if confidences else None,
            corrected=not (same_value and same_boxes) or bool(fields.get(path) and fields[path].corrected))
        violations = _revalidate(document=document, extraction=extraction, answer=answer, ctx=ctx, fields=fields,
                                 parsed=not proof_only)
        event = ReviewEvent(
            document_id=document_id, user=user, kind=ReviewEvent.Kind.PROOF if moved else ReviewEvent.Kind.EDIT,
            field=path, before=before, after=value, proof_before=[_brief(p) for p in proof_before],
            proof_after=[_brief(picked_box(b)) for b in blocks],  # what the reviewer picked
            note="" if moved else f"taken from the page: {text[:200]}")
        stored_before, stored = _edit_save(extraction=extraction, answer=answer, field_write=field_write,
                                           violations=violations, before=held.violations, event=event)
    return _edited(document, extraction, answer, value=value, violations=violations, fields=fields,
                   stored=stored, stored_before=stored_before, how="moved" if moved else "taken")


def _brief(proof: dict) -> dict:
    return {k: proof.get(k) for k in ("block_id", "page", "type", "text", "bbox")}


# --- decisions ---------------------------------------------------------------------------------------


@transaction.atomic
def document_verify(*, document_id: int, user, expected_version: int, note: str = "") -> str:
    """Accept the document's values. With rules still failing the reviewer must say why (`note`).

    Ends as 'corrected' when a reviewer changed any value, else 'verified'; the claim is released.
    """
    note = (note or "").strip()
    _hold(document_id=document_id, user=user, expected_version=expected_version, bump=True)
    extraction = Extraction.objects.current_for(document_id)
    broken = Violation.objects.filter(extraction=extraction).count() if extraction else 0
    if broken and not note:
        raise NoteRequired(f"{broken} rule{'s' if broken != 1 else ''} still fail: write why you verify anyway.")
    corrected = bool(extraction) and FieldValue.objects.filter(extraction=extraction, corrected=True).exists()
    to = ReviewStatus.CORRECTED if corrected else ReviewStatus.VERIFIED
    if not document_review_transition(document_id=document_id, to=to, expected_version=expected_version + 1,
                                      release_claim=True):
        raise _why_not(document_id=document_id, user=user, expected_version=expected_version)
    ReviewEvent.objects.create(document_id=document_id, user=user, kind=ReviewEvent.Kind.VERIFY, after=to.value,
                               note=note)
    webhooks.document_reviewed(document_id=document_id)
    return to.value


@transaction.atomic
def document_reject(*, document_id: int, user, expected_version: int, reason: str) -> None:
    """The document cannot be trusted (unreadable, wrong type, ...): rejected, with the reviewer's reason."""
    reason = (reason or "").strip()
    if not reason:
        raise NoteRequired("Say why you reject this document.")
    _hold(document_id=document_id, user=user, expected_version=expected_version, bump=True)
    if not document_review_transition(document_id=document_id, to=ReviewStatus.REJECTED,
                                      expected_version=expected_version + 1, release_claim=True):
        raise _why_not(document_id=document_id, user=user, expected_version=expected_version)
    ReviewEvent.objects.create(document_id=document_id, user=user, kind=ReviewEvent.Kind.REJECT,
                               after=ReviewStatus.REJECTED.value, note=reason)
    webhooks.document_reviewed(document_id=document_id)


@transaction.atomic
def document_send_back(*, document_id: int, user, reason: str) -> None:
    """A supervisor reopens a document for reviewers: a passed one becomes flagged, a decided one unreviewed."""
    reason = (reason or "").strip()
    if not reason:
        raise NoteRequired("Say why you send this document back.")
    doc = Document.objects.get(pk=document_id)
    before = {"status": doc.status, "review_status": doc.review_status}
    if doc.status == Status.PASSED.value:
        done = document_transition(document_id=document_id, to=Status.FLAGGED, to_reviewers=True)
    elif doc.status == Status.FLAGGED.value and doc.review_status != ReviewStatus.UNREVIEWED.value:
        done = document_review_transition(document_id=document_id, to=ReviewStatus.UNREVIEWED,
                                          expected_version=doc.version, release_claim=True)
    else:
        raise NotEditable("Only a passed or an already reviewed document can be sent back.")
    if not done:
        raise ReviewError("The document changed while you were sending it back; reload it and try again.")
    ReviewEvent.objects.create(document_id=document_id, user=user, kind=ReviewEvent.Kind.SEND_BACK, before=before,
                               after={"status": Status.FLAGGED.value, "review_status": ReviewStatus.UNREVIEWED.value},
                               note=reason)
