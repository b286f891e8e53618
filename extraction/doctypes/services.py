"""Writes of the document types admins define: saving a version and making one live (trying a draft is the
pipeline's: extraction/pipeline/trial.py)."""

from __future__ import annotations

from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import Max

from extraction.doctypes.defined.check import DefinitionError, spec_parse
from extraction.doctypes.registry import DOCTYPE_CHOICES
from extraction.doctypes.selectors import RULE_LABELS_CACHE, doctype_live_version
from extraction.models import DocTypeLive, DocTypeVersion, EvaluationItem, EvaluationRun, default_team_id

__all__ = ["doctype_share_set", "doctype_version_make_live", "doctype_version_save"]

_SAVE_ATTEMPTS = 3


def doctype_version_save(*, data: dict, user, team_id: int | None = None) -> tuple[DocTypeVersion, bool]:
    """Save `data` as the next version of its type, a type of `team_id` (the default team without one);
    (version, created). A definition equal to the newest version saves nothing: versions record changes. The
    new version is live at once unless the type has an evaluation set. DefinitionError lists what is wrong
    with it, and refuses a name another team's type has (a name is one type on an instance)."""
    spec = spec_parse(data)
    if spec.name in {name for name, _ in DOCTYPE_CHOICES}:
        raise DefinitionError([f"the name {spec.name!r} is a built-in type's; choose another"])
    team_id = team_id if team_id is not None else default_team_id()
    definition = spec.as_data()
    for _ in range(_SAVE_ATTEMPTS):
        newest = DocTypeVersion.objects.filter(name=spec.name).order_by("-version").first()
        if newest is not None and newest.team_id != team_id:
            raise DefinitionError([f"the name {spec.name!r} is taken; choose another"])
        if newest is not None and newest.definition == definition:
            return newest, False
        try:
            with transaction.atomic():
                # two admins saving at once: the unique (name, version) lets one win; the other tries again
                previous = doctype_live_version(name=spec.name)
                number = (DocTypeVersion.objects.filter(name=spec.name).aggregate(v=Max("version"))["v"] or 0) + 1
                saved = DocTypeVersion.objects.create(name=spec.name, version=number, label=spec.label,
                                                      definition=definition, created_by=user, team_id=team_id,
                                                      shared=newest.shared if newest is not None else False)
                if not EvaluationItem.objects.filter(doctype=spec.name, team_id=team_id,
                                                     removed_at__isnull=True).exists():
                    # nothing to compare it on: live at once; a type with an evaluation set waits for the
                    # admin to make it live after its comparison (doctype_version_make_live)
                    DocTypeLive.objects.create(name=spec.name, version=number, previous=previous,
                                               decided_by=user)
            cache.delete(RULE_LABELS_CACHE)  # the rules' labels may have changed
            return saved, True
        except IntegrityError:
            continue
    raise DefinitionError(["another admin is saving this type right now; save again"])


def doctype_version_make_live(*, name: str, version: int, user, comparison: dict, warnings: list[str],
                              run: EvaluationRun | None) -> DocTypeLive:
    """Make a saved version the one batches are read under, recording the decision with the figures and the
    warnings the admin saw (an admin may go ahead of a warning). DefinitionError when there is no such
    version or it is live already."""
    if not DocTypeVersion.objects.filter(name=name, version=version).exists():
        raise DefinitionError([f"there is no version {version} of {name!r}"])
    with transaction.atomic():
        # one decision at a time per type: the previous live version is read under the lock of its rows
        list(DocTypeVersion.objects.select_for_update().filter(name=name).values_list("id", flat=True))
        previous = doctype_live_version(name=name)
        if previous == version:
            raise DefinitionError([f"version {version} is live already"])
        decision = DocTypeLive.objects.create(name=name, version=version, previous=previous, comparison=comparison,
                                              warnings=warnings, run=run, decided_by=user)
    cache.delete(RULE_LABELS_CACHE)  # the live version's rules name the codes
    return decision


def doctype_share_set(*, name: str, shared: bool) -> int:
    """Share a defined type with every team (each may upload under it; only its own team edits it), or stop
    sharing it; the number of its versions changed."""
    changed = DocTypeVersion.objects.filter(name=name).exclude(shared=shared).update(shared=shared)
    cache.delete(RULE_LABELS_CACHE)
    return changed
