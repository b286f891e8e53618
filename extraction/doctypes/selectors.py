"""Reads of the document types admins define in the app, and of every type for choices."""

from __future__ import annotations

from typing import Any

from django.db.models import OuterRef, Q, Subquery
from django.db.models.functions import Coalesce

from extraction.doctypes.base import DocumentType
from extraction.doctypes.registry import DOCTYPE_CHOICES, doctype_from_data, get_doctype
from extraction.models import Batch, DocTypeLive, DocTypeVersion, Extraction

__all__ = ["RULE_LABELS_CACHE", "batch_doctype", "doctype_choices", "doctype_definition", "doctype_live_version",
           "doctype_live_versions", "doctype_rule_labels", "doctype_rule_teams", "doctype_team", "doctype_version_get",
           "doctype_version_newest", "doctype_versions", "extraction_doctype"]


def doctype_definition(name: str, version: int | None) -> tuple[dict[str, Any], int] | None:
    """A defined type's data and version number (the live one when `version` is None); None if there is none.
    The registry's lookup (extraction/doctypes/registry.set_defined_lookup)."""
    row = _versions(name=name, version=version).values_list("definition", "version").first()
    return (row[0], row[1]) if row else None


def doctype_version_get(*, name: str, version: int | None = None) -> DocTypeVersion | None:
    """A saved version of a defined type; the live one when `version` is None."""
    return _versions(name=name, version=version).first()


def _live(name: Any) -> Coalesce:
    """The live version of the type `name` (a value or an OuterRef), as an expression: the version an admin made
    live last, else (none was) the newest saved."""
    chosen = DocTypeLive.objects.filter(name=name).order_by("-id").values("version")[:1]
    newest = DocTypeVersion.objects.filter(name=name).order_by("-version").values("version")[:1]
    return Coalesce(Subquery(chosen), Subquery(newest))


def _versions(*, name: str, version: int | None):
    return DocTypeVersion.objects.filter(name=name, version=_live(name) if version is None else version)


def doctype_version_newest(*, name: str) -> DocTypeVersion | None:
    """The last version saved (the editor goes on from it, live or not)."""
    return DocTypeVersion.objects.filter(name=name).order_by("-version").first()


def doctype_live_version(*, name: str) -> int | None:
    """The version batches are read under."""
    return _versions(name=name, version=None).values_list("version", flat=True).first()


def doctype_live_versions(*, teams: list[int] | None = None, shared: bool = True) -> list[DocTypeVersion]:
    """The live version of every defined type, by name; with `teams`, only those teams' types (and, with
    `shared`, the types another team shares with every team)."""
    rows = DocTypeVersion.objects.filter(version=_live(OuterRef("name")))
    if teams is not None:
        rows = rows.filter(Q(team__in=teams) | Q(shared=True) if shared else Q(team__in=teams))
    return list(rows.select_related("created_by", "team").order_by("name"))


def doctype_team(*, name: str) -> tuple[int, bool] | None:
    """(team id, shared) of a defined type (its live version's sharing); None for a coded or shipped type."""
    return _versions(name=name, version=None).values_list("team_id", "shared").first()


def doctype_versions(*, name: str) -> list[DocTypeVersion]:
    return list(DocTypeVersion.objects.filter(name=name).select_related("created_by").order_by("-version"))


def doctype_choices(*, teams: list[int] | None = None) -> list[tuple[str, str]]:
    """(name, label) of every type a batch can be uploaded under: coded and shipped ones, then the live
    version of each defined one (with `teams`: those teams' own and the shared ones)."""
    defined = [(v.name, f"{v.label} (defined, v{v.version})") for v in doctype_live_versions(teams=teams)]
    return [*DOCTYPE_CHOICES, *defined]


RULE_LABELS_CACHE = "doctype-rule-labels"


def _defined_rules() -> dict[str, dict]:
    """The live versions' rules, cached until a version is saved, made live or shared: {"labels": {code:
    label}, "teams": {code: [[team id, shared], ...]}}."""
    from django.core.cache import cache

    def build() -> dict[str, dict]:
        labels: dict[str, str] = {}
        teams: dict[str, list] = {}
        for v in doctype_live_versions():
            for r in v.definition.get("rules") or []:
                labels[r.get("code", "")] = r.get("label", "")
                teams.setdefault(r.get("code", ""), []).append([v.team_id, v.shared])
        return {"labels": labels, "teams": teams}

    return cache.get_or_set(RULE_LABELS_CACHE, build, 300)


def doctype_rule_labels() -> dict[str, str]:
    """Rule codes in words from the live version of each type defined in the app. The coded and shipped types'
    own are `registry.rule_labels()`."""
    return _defined_rules()["labels"]


def doctype_rule_teams() -> dict[str, list]:
    """For each rule code of a type defined in the app, the [team id, shared] of each live type naming it."""
    return _defined_rules()["teams"]


def batch_doctype(*, batch: Batch, version: int | None = None) -> DocumentType:
    """The type a batch's documents are read as: a trial's draft, else its type at `version` (a re-run's),
    the batch's own version, or the live one."""
    if batch.trial and "definition" in batch.settings:
        return doctype_from_data(batch.settings["definition"])
    return get_doctype(batch.doctype, version or batch.doctype_version)


def extraction_doctype(*, extraction: Extraction, batch: Batch) -> DocumentType:
    """The type an extraction ran under, so that past results are judged as they were read."""
    if batch.trial and "definition" in batch.settings:
        return doctype_from_data(batch.settings["definition"])
    return get_doctype(extraction.doctype or batch.doctype, extraction.doctype_version)
