"""Writes of the document types admins define: saving a version (trying a draft is the pipeline's:
extraction/pipeline/trial.py)."""

from __future__ import annotations

from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import Max

from extraction.doctypes.defined.check import DefinitionError, spec_parse
from extraction.doctypes.registry import DOCTYPE_CHOICES
from extraction.doctypes.selectors import RULE_LABELS_CACHE
from extraction.models import DocTypeVersion

__all__ = ["doctype_version_save"]

_SAVE_ATTEMPTS = 3


def doctype_version_save(*, data: dict, user) -> tuple[DocTypeVersion, bool]:
    """Save `data` as the next version of its type; (version, created). A definition equal to the newest
    version saves nothing: versions record changes. DefinitionError lists what is wrong with it."""
    spec = spec_parse(data)
    if spec.name in {name for name, _ in DOCTYPE_CHOICES}:
        raise DefinitionError([f"the name {spec.name!r} is a built-in type's; choose another"])
    definition = spec.as_data()
    for _ in range(_SAVE_ATTEMPTS):
        newest = DocTypeVersion.objects.filter(name=spec.name).order_by("-version").first()
        if newest is not None and newest.definition == definition:
            return newest, False
        try:
            with transaction.atomic():
                # two admins saving at once: the unique (name, version) lets one win; the other tries again
                number = (DocTypeVersion.objects.filter(name=spec.name).aggregate(v=Max("version"))["v"] or 0) + 1
                saved = DocTypeVersion.objects.create(name=spec.name, version=number, label=spec.label,
                                                      definition=definition, created_by=user)
            cache.delete(RULE_LABELS_CACHE)  # the rules' labels may have changed
            return saved, True
        except IntegrityError:
            continue
    raise DefinitionError(["another admin is saving this type right now; save again"])
