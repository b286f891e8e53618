"""The document types by name. A new type is one module defining DOCTYPE, plus one line in BUILTIN."""

from __future__ import annotations

from extraction.doctypes import acta, invoice, ownership
from extraction.doctypes.base import DocumentType

__all__ = ["DOCTYPE_CHOICES", "UnknownDocumentType", "all_doctypes", "get_doctype", "register"]

BUILTIN: tuple[DocumentType, ...] = (acta.DOCTYPE, invoice.DOCTYPE, ownership.DOCTYPE)

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
    return doctype


def get_doctype(name: str) -> DocumentType:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnknownDocumentType(name) from None


def all_doctypes() -> list[DocumentType]:
    return list(_REGISTRY.values())


# (name, label) pairs for Django `choices`; kept in step with the registry.
DOCTYPE_CHOICES: list[tuple[str, str]] = []

for _doctype in BUILTIN:
    register(_doctype)
