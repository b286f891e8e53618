"""The document types by name: the coded ones (a module defining DOCTYPE, plus one line in BUILTIN), the
definitions shipped beside them (`<name>.yaml` here), and those admins define in the app (looked up through
`set_defined_lookup`, which the app installs: this module knows no database)."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from extraction.doctypes import acta
from extraction.doctypes.base import DocumentType
from extraction.doctypes.defined.build import doctype_build
from extraction.doctypes.defined.check import spec_parse
from extraction.doctypes.defined.files import spec_from_yaml

__all__ = ["DOCTYPE_CHOICES", "UnknownDocumentType", "all_doctypes", "doctype_from_data", "get_doctype",
           "register", "rule_labels", "set_defined_lookup"]

SHIPPED = tuple(sorted(Path(__file__).parent.glob("*.yaml")))
BUILTIN: tuple[DocumentType, ...] = (acta.DOCTYPE, *(doctype_build(spec_from_yaml(p.read_text())) for p in SHIPPED))

_REGISTRY: dict[str, DocumentType] = {}


class UnknownDocumentType(KeyError):
    def __str__(self) -> str:
        return f"unknown document type {self.args[0]!r}; known: {', '.join(_REGISTRY)}"


def register(doctype: DocumentType) -> DocumentType:
    """Add a type (e.g. from a plugin module); a name can be registered once."""
    if doctype.name in _REGISTRY and _REGISTRY[doctype.name] is not doctype:
        raise ValueError(f"document type {doctype.name!r} is already registered")
    _REGISTRY[doctype.name] = doctype
    DOCTYPE_CHOICES[:] = [(d.name, d.label) for d in _REGISTRY.values()]
    _RULE_LABELS.update(doctype.rule_labels)
    return doctype


# (name, version or None for the newest) -> the definition's data and its version, or None when the app
# knows no such type
DefinedLookup = Callable[[str, int | None], tuple[dict[str, Any], int] | None]
_defined_lookup: DefinedLookup | None = None


def set_defined_lookup(lookup: DefinedLookup | None) -> None:
    """Where types defined in the app are found (the app's selector), or None."""
    global _defined_lookup
    _defined_lookup = lookup


def get_doctype(name: str, version: int | None = None) -> DocumentType:
    """A type by name: a coded or shipped one, else the app's definition at `version` (the newest when
    None), built once per version (a version never changes)."""
    if name in _REGISTRY:
        return _REGISTRY[name]
    found = _defined_lookup(name, version) if _defined_lookup is not None else None
    if found is None:
        raise UnknownDocumentType(name)
    return doctype_from_data(found[0], version=found[1])


def doctype_from_data(data: dict[str, Any], *, version: int | None = None) -> DocumentType:
    """The type of a definition's data (checked again: data from the database is not trusted blindly)."""
    return _built(json.dumps(data, sort_keys=True), version)


@functools.lru_cache(maxsize=64)
def _built(data: str, version: int | None) -> DocumentType:
    """A definition's type, keyed by its data (a version's data never changes; building one takes
    milliseconds, which an edit on the desk should not pay each time)."""
    return doctype_build(spec_parse(json.loads(data)), version=version)


def all_doctypes() -> list[DocumentType]:
    return list(_REGISTRY.values())


def rule_labels() -> dict[str, str]:
    """The rule codes of every coded and shipped type, in words (kept as types register: every label of the
    queue and the desk reads it)."""
    return _RULE_LABELS


# (name, label) pairs for Django `choices`, and the types' rule codes in words; kept in step with the registry.
DOCTYPE_CHOICES: list[tuple[str, str]] = []
_RULE_LABELS: dict[str, str] = {}

for _doctype in BUILTIN:
    register(_doctype)
