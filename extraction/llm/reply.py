"""What one LLM call returned (pure): the answer, its token usage and its cost."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import pydantic

from extraction.llm.config import LlmConfig

# Structured-output modes, most to least strict; an endpoint that rejects one moves to the next.
ResponseMode = Literal["json_schema", "json_object", "plain"]


@dataclass(frozen=True)
class LlmUsage:
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class LlmReply:
    raw_text: str
    data: dict[str, Any] | None  # the parsed JSON object as the model wrote it
    usage: LlmUsage
    latency_s: float  # the whole call, retries and their waits included
    cost: float
    model: str  # as reported by the endpoint
    request: list[dict[str, Any]]  # the messages sent, images replaced by "<image N WxH>"
    finish_reason: str | None
    response_mode: ResponseMode = "json_schema"
    attempts: int = 1
    parsed: pydantic.BaseModel | None = field(default=None, compare=False)  # when a model class was given



def estimate_cost(usage: LlmUsage, config: LlmConfig) -> float:
    """Cost in the configured currency, from prices per million tokens."""
    return (
        usage.prompt_tokens * config.price_input_per_mtok
        + usage.completion_tokens * config.price_output_per_mtok
    ) / 1_000_000

