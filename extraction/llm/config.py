"""The LLM endpoint's configuration (pure), read once from the LLM_* environment variables.

Every variable is checked where it is read: a bad value raises ValueError naming the variable, so a worker
never starts with a setting it would misread.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

InputMode = Literal["text", "vision", "hybrid"]
INPUT_MODES: tuple[str, ...] = ("text", "vision", "hybrid")


@dataclass(frozen=True, kw_only=True)
class LlmConfig:
    base_url: str
    api_key: str = "not-needed"  # local servers (Ollama, llama.cpp) ignore it, the client needs one
    model: str
    timeout_s: float = 60.0  # one attempt, request to last byte of the answer
    max_retries: int = 3
    document_timeout_s: float = 600.0  # every call for one document: rounds, retries and their waits
    input_mode: InputMode = "text"
    image_max_side: int = 1600
    price_input_per_mtok: float = 0.0
    price_output_per_mtok: float = 0.0
    temperature: float | None = 0.0  # None: do not send it (some reasoning models reject it)
    judge_model: str | None = None  # None: the judge uses `model`
    supports_json_schema: bool = True  # False: start with json_object for endpoints known to lack it
    backoff_initial_s: float = 0.5  # first wait between attempts, doubled each time, with jitter
    backoff_max_s: float = 8.0
    retry_after_max_s: float = 120.0  # a longer Retry-After is not waited for: fail, retry later

    def __post_init__(self) -> None:
        if not self.base_url:
            raise ValueError("base_url is required")
        if not self.model:
            raise ValueError("model is required")
        if not self.timeout_s > 0:
            raise ValueError(f"timeout_s must be > 0, got {self.timeout_s}")
        if not self.document_timeout_s > 0:
            raise ValueError(f"document_timeout_s must be > 0, got {self.document_timeout_s}")
        if self.max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {self.max_retries}")
        if self.input_mode not in INPUT_MODES:
            raise ValueError(f"input_mode must be one of {', '.join(INPUT_MODES)}, got {self.input_mode!r}")
        if self.image_max_side < 16:
            raise ValueError(f"image_max_side must be >= 16, got {self.image_max_side}")
        if self.price_input_per_mtok < 0 or self.price_output_per_mtok < 0:
            raise ValueError("prices must be >= 0")
        if self.backoff_initial_s < 0 or self.backoff_max_s < 0:
            raise ValueError("backoff must be >= 0")


def _number(environ: Mapping[str, str], name: str, default: float, *, minimum: float, integer: bool = False) -> Any:
    """The variable as a number of at least `minimum`, or `default` when unset; ValueError names the variable."""
    raw = environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw) if integer else float(raw)
    except ValueError:
        kind = "an integer" if integer else "a number"
        raise ValueError(f"{name} must be {kind}, got {raw!r}") from None
    if not math.isfinite(value) or value < minimum:
        raise ValueError(f"{name} must be >= {minimum:g}, got {raw!r}")
    return value


def llm_config_from_env(environ: Mapping[str, str]) -> LlmConfig | None:
    """LlmConfig from LLM_* variables; None when no endpoint is configured. ValueError names the variable."""
    base_url = environ.get("LLM_BASE_URL", "").strip()
    model = environ.get("LLM_MODEL", "").strip()
    if not base_url and not model:
        return None
    if not base_url:
        raise ValueError("LLM_BASE_URL must be set when LLM_MODEL is set")
    if not model:
        raise ValueError("LLM_MODEL must be set when LLM_BASE_URL is set")
    input_mode = environ.get("LLM_INPUT", "").strip().lower() or "text"
    if input_mode not in INPUT_MODES:
        raise ValueError(f"LLM_INPUT must be one of {', '.join(INPUT_MODES)}, got {input_mode!r}")
    temperature_raw = environ.get("LLM_TEMPERATURE", "").strip().lower()
    temperature = None if temperature_raw == "none" else _number(environ, "LLM_TEMPERATURE", 0.0, minimum=0)
    json_schema_raw = environ.get("LLM_JSON_SCHEMA", "").strip().lower() or "1"
    if json_schema_raw not in ("1", "0", "true", "false", "yes", "no", "on", "off"):
        raise ValueError(f"LLM_JSON_SCHEMA must be 1 or 0, got {json_schema_raw!r}")
    return LlmConfig(
        base_url=base_url,
        api_key=environ.get("LLM_API_KEY", "").strip() or "not-needed",
        model=model,
        timeout_s=_number(environ, "LLM_TIMEOUT", 60.0, minimum=0.001),
        document_timeout_s=_number(environ, "LLM_DOCUMENT_TIMEOUT", 600.0, minimum=0.001),
        max_retries=_number(environ, "LLM_MAX_RETRIES", 3, minimum=0, integer=True),
        input_mode=input_mode,  # type: ignore[arg-type]  # checked above
        image_max_side=_number(environ, "LLM_IMAGE_MAX_SIDE", 1600, minimum=16, integer=True),
        price_input_per_mtok=_number(environ, "LLM_PRICE_INPUT", 0.0, minimum=0),
        price_output_per_mtok=_number(environ, "LLM_PRICE_OUTPUT", 0.0, minimum=0),
        temperature=temperature,
        judge_model=environ.get("LLM_JUDGE_MODEL", "").strip() or None,
        supports_json_schema=json_schema_raw in ("1", "true", "yes", "on"),
    )
