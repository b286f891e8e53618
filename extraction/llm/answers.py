"""The answer's format (pure): JSON asked for by schema, or by instruction where an endpoint lacks
json_schema; and the model's text read back as one JSON object checked against the schema."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

import pydantic

from extraction.llm.errors import LlmBadAnswer
from extraction.llm.reply import LlmReply

_MAX_FIELD_ERRORS = 8


def parse_json_answer(
    raw_text: str, *, model_cls: type[pydantic.BaseModel] | None = None, raw_reply: LlmReply | None = None
) -> tuple[dict[str, Any], pydantic.BaseModel | None]:
    """Parse the model's text as one JSON object and validate it; LlmBadAnswer with a precise reason."""
    text = _strip_code_fence(raw_text)
    if not text.strip():
        raise LlmBadAnswer(
            "the answer is empty; answer with one JSON object", raw_text=raw_text, reply=raw_reply
        )
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise LlmBadAnswer(
            f"the answer is not valid JSON: {err.msg} at line {err.lineno} column {err.colno}",
            raw_text=raw_text,
            reply=raw_reply,
        ) from None
    if not isinstance(data, dict):
        raise LlmBadAnswer(
            f"the answer must be one JSON object, not a JSON {_json_kind(data)}",
            raw_text=raw_text,
            reply=raw_reply,
        )
    if model_cls is None:
        return data, None
    try:
        return data, model_cls.model_validate(data)
    except pydantic.ValidationError as err:
        raise LlmBadAnswer(
            f"the answer does not match the schema: {format_validation_errors(err)}",
            raw_text=raw_text,
            data=data,
            reply=replace(raw_reply, data=data) if raw_reply else None,
        ) from None


def format_validation_errors(err: pydantic.ValidationError, *, limit: int = _MAX_FIELD_ERRORS) -> str:
    """'items.0.qty: Input should be a valid number (got "abc"); total: Field required'."""
    parts = []
    errors = err.errors(include_url=False)
    for item in errors[:limit]:
        where = ".".join(str(p) for p in item["loc"]) or "(root)"
        text = f"{where}: {item['msg']}"
        if item["type"] != "missing" and "input" in item:
            text += f" (got {_short_json(item['input'])})"
        parts.append(text)
    if len(errors) > limit:
        parts.append(f"and {len(errors) - limit} more")
    return "; ".join(parts)


def _short_json(value: Any, limit: int = 60) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    return "number"


_FENCE = re.compile(r"^\s*```[a-zA-Z]*\s*\n(.*?)\n?```\s*$", re.DOTALL)


def _strip_code_fence(text: str) -> str:
    # Without json_schema some models wrap the object in a markdown fence.
    match = _FENCE.match(text)
    return match.group(1) if match else text


def openai_schema_name(name: str) -> str:
    # OpenAI accepts a-z, A-Z, 0-9, _ and -, up to 64 characters.
    return re.sub(r"[^a-zA-Z0-9_-]", "_", name)[:64] or "answer"


def with_schema_instruction(
    messages: list[dict[str, Any]], json_schema: dict[str, Any]
) -> list[dict[str, Any]]:
    # Without json_schema the model no longer sees the schema: put it in the prompt (this also
    # satisfies json_object mode's rule that the messages mention "JSON").
    instruction = {
        "role": "system",
        "content": "Answer with one JSON object, and nothing else, that follows this JSON schema:\n"
        + json.dumps(json_schema, ensure_ascii=False),
    }
    return [*messages, instruction]



def mentions_response_format(message: str) -> bool:
    lowered = message.lower()
    return any(
        key in lowered
        for key in (
            "response_format",
            "json_schema",
            "json schema",
            "json_object",
            "structured output",
            "response format",
        )
    )

