"""Definitions as YAML files, so that teams keep their types in git (pure)."""

from __future__ import annotations

import yaml

from extraction.doctypes.defined.check import DefinitionError, spec_parse
from extraction.doctypes.defined.spec import TypeSpec

__all__ = ["MAX_FILE", "spec_from_yaml", "spec_to_yaml"]

MAX_FILE = 200_000  # characters: a definition of the largest allowed size is far smaller


def spec_to_yaml(spec: TypeSpec) -> str:
    """The definition as YAML: its keys in the definition's order, defaults left out."""
    return yaml.safe_dump(spec.as_data(), sort_keys=False, allow_unicode=True, width=100)


def spec_from_yaml(text: str) -> TypeSpec:
    """The definition a YAML text holds, checked; DefinitionError lists what is wrong (YAML that does not
    parse included). Safe loading only: YAML tags never build objects."""
    if len(text) > MAX_FILE:
        raise DefinitionError([f"the file is longer than {MAX_FILE} characters"])
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise DefinitionError([f"the file is not YAML: {err}"]) from None
    if not isinstance(data, dict):
        raise DefinitionError(["the file must hold one definition: a mapping with name, label, fields and rules"])
    return spec_parse(data)
