"""How an answer cites its source (pure): a LINE or TABLE by its prompt id, a WORD through its LINE, a CELL
through its TABLE, row and column."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field


class _Proof(BaseModel):
    model_config = ConfigDict(extra="ignore")


class LineProof(_Proof):
    type: Literal["LINE"] = "LINE"
    id: int


class TableProof(_Proof):
    type: Literal["TABLE"] = "TABLE"
    id: int


class WordProof(_Proof):
    type: Literal["WORD"] = "WORD"
    line: int
    value: str


class CellProof(_Proof):
    type: Literal["CELL"] = "CELL"
    table: int
    row: int  # 1-based, as rendered in the prompt
    column: int
    value: str | None = None


def _upper_type(data: Any) -> Any:
    # Models sometimes write "line" or "Word"; the discriminator is case-sensitive.
    if isinstance(data, dict) and isinstance(data.get("type"), str):
        return {**data, "type": data["type"].strip().upper()}
    return data


ProofRef = Annotated[
    LineProof | TableProof | WordProof | CellProof,
    Field(discriminator="type"),
    BeforeValidator(_upper_type),
]
