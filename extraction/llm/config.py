"""The LLM endpoint's configuration (pure), read once from the LLM_* environment variables.

Every variable is checked where it is read (extraction/common/env.py): a bad value raises BadSetting naming the
variable, so neither the web app nor a worker starts with a setting it would misread.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from extraction.common.env import BadSetting, env_bool, env_choice, env_float, env_int, env_str

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


def llm_config_from_env(environ: Mapping[str, str]) -> LlmConfig | None:
    """LlmConfig from LLM_* variables; None when no endpoint is configured. BadSetting names the variable.

    Every variable is checked even without an endpoint, so a typo stops start-up before anyone relies on it.
    """
    base_url = env_str("LLM_BASE_URL", environ=environ)
    model = env_str("LLM_MODEL", environ=environ)
    input_mode = env_choice("LLM_INPUT", "text", INPUT_MODES, environ=environ, fold_case=True)
    temperature = (None if env_str("LLM_TEMPERATURE", environ=environ).lower() == "none"
                   else env_float("LLM_TEMPERATURE", 0.0, minimum=0, environ=environ))
    values = {
        "api_key": env_str("LLM_API_KEY", environ=environ) or "not-needed",
        "timeout_s": env_float("LLM_TIMEOUT", 60.0, minimum=0.001, environ=environ),
        "document_timeout_s": env_float("LLM_DOCUMENT_TIMEOUT", 600.0, minimum=0.001, environ=environ),
        "max_retries": env_int("LLM_MAX_RETRIES", 3, minimum=0, environ=environ),
        "input_mode": input_mode,
        "image_max_side": env_int("LLM_IMAGE_MAX_SIDE", 1600, minimum=16, environ=environ),
        "price_input_per_mtok": env_float("LLM_PRICE_INPUT", 0.0, minimum=0, environ=environ),
        "price_output_per_mtok": env_float("LLM_PRICE_OUTPUT", 0.0, minimum=0, environ=environ),
        "temperature": temperature,
        "judge_model": env_str("LLM_JUDGE_MODEL", environ=environ) or None,
        # Unset or empty: the endpoint takes json_schema until it says otherwise.
        "supports_json_schema": env_bool("LLM_JSON_SCHEMA", True, environ=environ)
        if env_str("LLM_JSON_SCHEMA", environ=environ) else True,
    }
    if not base_url and not model:
        return None
    if not base_url:
        raise BadSetting("LLM_BASE_URL must be set when LLM_MODEL is set")
    if not model:
        raise BadSetting("LLM_MODEL must be set when LLM_BASE_URL is set")
    return LlmConfig(base_url=base_url, model=model, **values)
