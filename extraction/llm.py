"""Client for any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, llama.cpp server).

It asks for structured JSON, checks it, and turns every way a call can go wrong into one of
four errors the validation loop knows how to handle:

- LlmTransportError: timeout, connection, 429 or 5xx after the retries are spent (retry later).
- LlmRefusal: the model refused (message.refusal, or finish_reason "content_filter").
- LlmBadAnswer: not JSON, cut off, or not the schema; its message is specific because the loop
  feeds it back to the model like a broken rule.
- LlmError: anything else (bad key, unknown model...), not worth retrying.

Retries are our own loop, with the openai client's own retries off (max_retries=0): the client's
backoff constants are private module globals, so they could be neither configured nor shortened in
tests without patching its internals; our loop honours Retry-After / retry-after-ms and
x-should-retry like the client does, uses a configurable exponential backoff, and counts attempts.

Deadlines: the HTTP client's timeout is per read, so an endpoint that drips a byte every few seconds
would hold a worker for ever. Each attempt therefore runs under a watchdog that closes the connection when
`timeout_s` has passed since the request started, whatever arrived meanwhile; and a client made with a
`deadline` (the document's budget, `document_timeout_s`) starts no attempt, backoff or Retry-After wait
past it. Both end as LlmTransportError: retryable.
"""

from __future__ import annotations

import base64
import copy
import email.utils
import io
import json
import math
import random
import re
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import openai
import pydantic
from PIL import Image, ImageOps

InputMode = Literal["text", "vision", "hybrid"]
INPUT_MODES: tuple[str, ...] = ("text", "vision", "hybrid")
# Structured-output modes, most to least strict; an endpoint that rejects one moves to the next.
ResponseMode = Literal["json_schema", "json_object", "plain"]
_RESPONSE_MODES: tuple[ResponseMode, ...] = ("json_schema", "json_object", "plain")
_RETRYABLE_STATUS = frozenset({408, 409, 429})
_MAX_FIELD_ERRORS = 8


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


class LlmError(Exception):
    """A failed LLM call. `reply` is set when the model did answer (tokens were spent)."""

    retryable: bool = False

    def __init__(
        self, message: str, *, reply: LlmReply | None = None, status_code: int | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.reply = reply
        self.status_code = status_code


class LlmTransportError(LlmError):
    """Timeout, connection failure, 429 or 5xx once the retries are spent. Try again later."""

    retryable = True

    def __init__(
        self,
        message: str,
        *,
        attempts: int,
        status_code: int | None = None,
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(message, status_code=status_code)
        self.attempts = attempts
        self.retry_after_s = retry_after_s  # what the server asked for, to schedule the next try


class LlmRefusal(LlmError):
    """The model declined to answer."""


class LlmBadAnswer(LlmError):
    """The model answered, but not with usable JSON. `message` is meant to be fed back to the model."""

    def __init__(
        self,
        message: str,
        *,
        raw_text: str,
        reply: LlmReply | None = None,
        data: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message, reply=reply)
        self.raw_text = raw_text
        self.error = message
        self.data = data  # the parsed object when the JSON was valid but broke the schema


class JudgeVerdict(pydantic.BaseModel):
    passed: bool
    reason: str


def estimate_cost(usage: LlmUsage, config: LlmConfig) -> float:
    """Cost in the configured currency, from prices per million tokens."""
    return (
        usage.prompt_tokens * config.price_input_per_mtok
        + usage.completion_tokens * config.price_output_per_mtok
    ) / 1_000_000


class LlmClient:
    def __init__(self, config: LlmConfig, *, deadline: float | None = None) -> None:
        """`deadline`: a time.monotonic() value after which no call is made (the document's budget)."""
        self.config = config
        self.deadline = deadline
        # The response mode this endpoint accepts, learned once and kept for the client's lifetime.
        self.response_mode: ResponseMode = "json_schema" if config.supports_json_schema else "json_object"
        self._lock = threading.Lock()
        self._client: openai.OpenAI | None = None
        self._stopped = False

    def _http(self) -> openai.OpenAI:
        with self._lock:
            if self._stopped:
                raise LlmError("the LLM call was stopped: this worker no longer holds the document")
            if self._client is None:
                self._client = openai.OpenAI(
                    base_url=self.config.base_url,
                    api_key=self.config.api_key or "not-needed",
                    timeout=self.config.timeout_s,
                    max_retries=0,  # see the module docstring: retries are ours
                )
            return self._client

    def _discard(self, client: openai.OpenAI) -> None:
        """Close a client from any thread (a call in flight on it fails at its next read); the next call opens anew."""
        with self._lock:
            if self._client is client:
                self._client = None
        client.close()

    def abort(self) -> None:
        """Stop for good: no other call is made (the document was taken back). The call in flight fails at its
        next read (a socket that receives nothing at all is released by its read timeout, LLM_TIMEOUT)."""
        with self._lock:
            self._stopped = True
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def close(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def __enter__(self) -> LlmClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _remaining(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.monotonic()

    def _budget_spent(self, attempts: int) -> LlmTransportError:
        return LlmTransportError(
            f"the model calls for this document took longer than their budget of "
            f"{self.config.document_timeout_s:g} s (LLM_DOCUMENT_TIMEOUT; {attempts} attempt"
            f"{'s' if attempts != 1 else ''} in the last call)",
            attempts=attempts,
        )

    def _wait(self, seconds: float, attempts: int) -> None:
        """Sleep before the next attempt, unless that would pass the deadline."""
        remaining = self._remaining()
        if remaining is not None and seconds >= remaining:
            raise self._budget_spent(attempts)
        time.sleep(seconds)

    def complete_json(
        self,
        *,
        messages: list[dict[str, Any]],
        schema: type[pydantic.BaseModel] | dict[str, Any],
        schema_name: str,
        model: str | None = None,
    ) -> LlmReply:
        """Ask for one JSON object following `schema`; raise an LlmError subclass when that fails."""
        model_cls = schema if isinstance(schema, type) and issubclass(schema, pydantic.BaseModel) else None
        json_schema = model_cls.model_json_schema() if model_cls else dict(schema)
        started = time.monotonic()
        attempts_total = 0
        while True:
            mode = self.response_mode
            sent = messages if mode == "json_schema" else _with_schema_instruction(messages, json_schema)
            kwargs: dict[str, Any] = {"model": model or self.config.model, "messages": sent}
            if self.config.temperature is not None:
                kwargs["temperature"] = self.config.temperature
            if mode == "json_schema":
                kwargs["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {
                        "name": _schema_name(schema_name),
                        "schema": json_schema,
                        "strict": False,
                    },
                }
            elif mode == "json_object":
                kwargs["response_format"] = {"type": "json_object"}
            try:
                completion, attempts = self._create_with_retries(kwargs)
                attempts_total += attempts
                break
            except _Rejected as rejected:
                attempts_total += rejected.attempts
                next_mode = _RESPONSE_MODES[_RESPONSE_MODES.index(mode) + 1] if mode != "plain" else None
                if next_mode is None or not _mentions_response_format(rejected.message):
                    raise LlmError(
                        f"the LLM endpoint rejected the request (HTTP {rejected.status_code}): "
                        f"{rejected.message}",
                        status_code=rejected.status_code,
                    ) from None
                self.response_mode = next_mode
        latency = time.monotonic() - started
        return self._read_completion(
            completion, request=sent, model_cls=model_cls, mode=mode, attempts=attempts_total, latency=latency
        )

    def judge(self, question: str, answer_json: str) -> tuple[bool, str]:
        """Ask a (possibly different) model a yes/no rubric question about an answer."""
        messages = [
            {
                "role": "system",
                "content": (
                    "You check answers extracted from documents. Reply with a JSON object "
                    '{"passed": true|false, "reason": "<one sentence>"}. Be strict: pass only when the '
                    "answer clearly satisfies the question."
                ),
            },
            {"role": "user", "content": f"Question: {question}\n\nAnswer (JSON):\n{answer_json}"},
        ]
        reply = self.complete_json(
            messages=messages,
            schema=JudgeVerdict,
            schema_name="judge_verdict",
            model=self.config.judge_model or self.config.model,
        )
        verdict = reply.parsed
        assert isinstance(verdict, JudgeVerdict)
        return verdict.passed, verdict.reason

    # -- transport -------------------------------------------------------------------------------

    def _create(self, kwargs: dict[str, Any], limit: float) -> Any:
        """One attempt under a watchdog: the connection is closed `limit` seconds after the request started,
        however the endpoint trickles its answer. Raises _DeadlineHit when the watchdog fired."""
        client = self._http()
        fired = threading.Event()

        def expire() -> None:
            fired.set()
            self._discard(client)

        watchdog = threading.Timer(limit, expire)
        watchdog.daemon = True
        watchdog.start()
        try:
            return client.chat.completions.create(**kwargs, timeout=limit)
        except Exception:  # a client closed under a request raises a connection error or a RuntimeError
            if fired.is_set():
                raise _DeadlineHit from None
            if self._stopped:
                raise LlmError("the LLM call was stopped: this worker no longer holds the document") from None
            raise
        finally:
            watchdog.cancel()

    def _create_with_retries(self, kwargs: dict[str, Any]) -> tuple[Any, int]:
        cfg = self.config
        for attempt in range(cfg.max_retries + 1):
            attempts = attempt + 1
            last = attempt == cfg.max_retries
            remaining = self._remaining()
            if remaining is not None and remaining <= 0:
                raise self._budget_spent(attempt)
            limit = cfg.timeout_s if remaining is None else min(cfg.timeout_s, remaining)
            try:
                return self._create(kwargs, limit), attempts
            except (_DeadlineHit, openai.APITimeoutError):
                if limit < cfg.timeout_s:
                    raise self._budget_spent(attempts) from None
                if last:
                    raise LlmTransportError(
                        f"the LLM endpoint did not answer within {cfg.timeout_s:g} s "
                        f"({attempts} attempt{'s' if attempts > 1 else ''})",
                        attempts=attempts,
                    ) from None
                self._wait(self._backoff(attempt), attempts)
            except openai.APIConnectionError as err:
                if last:
                    cause = err.__cause__ or err
                    raise LlmTransportError(
                        f"could not reach the LLM endpoint at {cfg.base_url}: {cause} "
                        f"({attempts} attempt{'s' if attempts > 1 else ''})",
                        attempts=attempts,
                    ) from None
                self._wait(self._backoff(attempt), attempts)
            except openai.APIStatusError as err:
                status = err.status_code
                message = _error_message(err)
                headers = err.response.headers
                should_retry = headers.get("x-should-retry")
                transient = status in _RETRYABLE_STATUS or status >= 500
                if should_retry == "false" or (not transient and should_retry != "true"):
                    if transient:
                        raise LlmTransportError(
                            f"the LLM endpoint answered HTTP {status}: {message}",
                            attempts=attempts,
                            status_code=status,
                        ) from None
                    raise _Rejected(status, message, attempts) from None
                retry_after = _retry_after_s(headers)
                if retry_after is not None and retry_after > cfg.retry_after_max_s:
                    raise LlmTransportError(
                        f"the LLM endpoint answered HTTP {status} and asked to wait {retry_after:g} s: "
                        f"{message}",
                        attempts=attempts,
                        status_code=status,
                        retry_after_s=retry_after,
                    ) from None
                if last:
                    raise LlmTransportError(
                        f"the LLM endpoint answered HTTP {status} after {attempts} attempt"
                        f"{'s' if attempts > 1 else ''}: {message}",
                        attempts=attempts,
                        status_code=status,
                        retry_after_s=retry_after,
                    ) from None
                self._wait(
                    retry_after if retry_after is not None and retry_after > 0 else self._backoff(attempt), attempts
                )
            except openai.OpenAIError as err:  # e.g. a 200 whose body is not a chat completion
                raise LlmError(f"the LLM call failed: {err}") from None
        raise AssertionError("unreachable")

    def _backoff(self, attempt: int) -> float:
        delay = min(self.config.backoff_initial_s * 2.0 ** min(attempt, 30), self.config.backoff_max_s)
        return delay * (1 - 0.25 * random.random())  # jitter so parallel workers do not retry in step

    # -- reading the answer ----------------------------------------------------------------------

    def _read_completion(
        self,
        completion: Any,
        *,
        request: list[dict[str, Any]],
        model_cls: type[pydantic.BaseModel] | None,
        mode: ResponseMode,
        attempts: int,
        latency: float,
    ) -> LlmReply:
        choice = completion.choices[0] if completion.choices else None
        message = choice.message if choice else None
        raw_text = (message.content or "") if message else ""
        finish_reason = choice.finish_reason if choice else None
        usage = LlmUsage(
            prompt_tokens=int(getattr(completion.usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(completion.usage, "completion_tokens", 0) or 0),
        )
        reply = LlmReply(
            raw_text=raw_text,
            data=None,
            usage=usage,
            latency_s=latency,
            cost=estimate_cost(usage, self.config),
            model=completion.model or self.config.model,
            request=redact_images(request),
            finish_reason=finish_reason,
            response_mode=mode,
            attempts=attempts,
        )
        refusal = getattr(message, "refusal", None) if message else None
        if refusal:
            raise LlmRefusal(f"the model refused to answer: {refusal}", reply=reply)
        if finish_reason == "content_filter":
            raise LlmRefusal("the answer was stopped by the endpoint's content filter", reply=reply)
        if finish_reason == "length":
            raise LlmBadAnswer(
                f"the answer was cut off at the output token limit after {usage.completion_tokens} tokens, "
                "so the JSON is incomplete; answer more briefly",
                raw_text=raw_text,
                reply=reply,
            )
        data, parsed = parse_json_answer(raw_text, model_cls=model_cls, raw_reply=reply)
        return replace(reply, data=data, parsed=parsed)


class _DeadlineHit(Exception):
    """The watchdog closed the connection: the attempt passed its deadline."""


class _Rejected(Exception):
    """A non-transient HTTP error (4xx): maybe the response_format, maybe something else."""

    def __init__(self, status_code: int, message: str, attempts: int) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.message = message
        self.attempts = attempts


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


def _schema_name(name: str) -> str:
    # OpenAI accepts a-z, A-Z, 0-9, _ and -, up to 64 characters.
    return re.sub(r"[^a-zA-Z0-9_-]", "_", name)[:64] or "answer"


def _with_schema_instruction(
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


def _mentions_response_format(message: str) -> bool:
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


def _error_message(err: openai.APIStatusError) -> str:
    body = err.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
        if isinstance(inner, str):
            return inner
        if body.get("detail"):
            return str(body["detail"])
    try:
        text = err.response.text
    except Exception:  # noqa: BLE001 - a streamed/closed body: fall back to the client's message
        text = ""
    return text.strip()[:500] or err.message


def _retry_after_s(headers: Mapping[str, str]) -> float | None:
    """Seconds asked by Retry-After-Ms / Retry-After (a number or an HTTP date), or None."""
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / divisor
        except ValueError:
            continue
        return seconds if math.isfinite(seconds) else None
    value = headers.get("retry-after")
    if value:
        try:
            parsed = email.utils.parsedate_tz(value)
        except (TypeError, ValueError):
            parsed = None
        if parsed is not None:
            return max(0.0, float(email.utils.mktime_tz(parsed) - time.time()))
    return None


# -- images --------------------------------------------------------------------------------------

ImageSource = str | Path | bytes | Image.Image
_DATA_URL = re.compile(r"^data:image/[\w.+-]+;base64,(.*)$", re.DOTALL)


def _open_image(source: ImageSource) -> Image.Image:
    if isinstance(source, Image.Image):
        return source.copy()
    raw = io.BytesIO(source) if isinstance(source, bytes) else Path(source)
    with Image.open(raw) as img:
        img.load()
        return ImageOps.exif_transpose(img)  # phone photos carry their rotation in EXIF


def _encode(img: Image.Image, *, max_side: int, fmt: Literal["JPEG", "PNG"], quality: int) -> str:
    if max(img.size) > max_side:
        img = img.copy()
        img.thumbnail((max_side, max_side), Image.Resampling.LANCZOS)
    buffer = io.BytesIO()
    if fmt == "JPEG":
        if img.mode not in ("RGB", "L"):
            img = img.convert("RGB")
        img.save(buffer, format="JPEG", quality=quality, optimize=True)
    else:
        if img.mode not in ("RGB", "RGBA", "L", "LA", "P", "1"):
            img = img.convert("RGB")
        img.save(buffer, format="PNG", optimize=True)
    return f"data:image/{fmt.lower()};base64,{base64.b64encode(buffer.getvalue()).decode('ascii')}"


def image_to_data_url(
    source: ImageSource, *, max_side: int, fmt: Literal["JPEG", "PNG"] = "JPEG", quality: int = 90
) -> str:
    """A data: URL of the image, downscaled so its longest side is at most max_side (never upscaled).

    JPEG by default: a page scan is several times smaller than as PNG, and vision models bill by pixels.
    """
    return _encode(_open_image(source), max_side=max_side, fmt=fmt, quality=quality)


def crop_to_data_url(
    source: ImageSource,
    bbox_fractions: Sequence[float] | Any,
    max_side: int,
    *,
    fmt: Literal["JPEG", "PNG"] = "JPEG",
    quality: int = 90,
) -> str:
    """A data: URL of one region of a page. bbox_fractions: (left, top, width, height) in 0..1 or a BBox."""
    if hasattr(bbox_fractions, "left"):
        left, top, width, height = (
            bbox_fractions.left,
            bbox_fractions.top,
            bbox_fractions.width,
            bbox_fractions.height,
        )
    else:
        left, top, width, height = (float(v) for v in bbox_fractions)
    if width <= 0 or height <= 0:
        raise ValueError(f"crop box must have a positive size, got width={width} height={height}")
    img = _open_image(source)
    w, h = img.size
    box = (
        max(0, math.floor(left * w)),
        max(0, math.floor(top * h)),
        min(w, math.ceil((left + width) * w)),
        min(h, math.ceil((top + height) * h)),
    )
    if box[2] <= box[0] or box[3] <= box[1]:
        raise ValueError(
            f"crop box (left={left}, top={top}, width={width}, height={height}) lies outside the page"
        )
    return _encode(img.crop(box), max_side=max_side, fmt=fmt, quality=quality)


def redact_images(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A copy of the messages with every data: image URL replaced by "<image N WxH>" (N counts from 1)."""
    redacted = copy.deepcopy(messages)
    counter = 0
    for message in redacted:
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for part in content:
            if not isinstance(part, dict) or part.get("type") != "image_url":
                continue
            image_url = part.get("image_url")
            url = image_url.get("url") if isinstance(image_url, dict) else image_url
            if not isinstance(url, str) or not url.startswith("data:"):
                continue
            counter += 1
            placeholder = f"<image {counter} {_data_url_size(url)}>"
            if isinstance(image_url, dict):
                image_url["url"] = placeholder
            else:
                part["image_url"] = placeholder
    return redacted


def _data_url_size(url: str) -> str:
    match = _DATA_URL.match(url)
    if not match:
        return "?x?"
    try:
        with Image.open(io.BytesIO(base64.b64decode(match.group(1)))) as img:  # reads the header only
            return f"{img.width}x{img.height}"
    except (ValueError, OSError):
        return "?x?"


# -- configuration -------------------------------------------------------------------------------


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

    def number(name: str, default: float, *, minimum: float, integer: bool = False) -> Any:
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

    input_mode = environ.get("LLM_INPUT", "").strip().lower() or "text"
    if input_mode not in INPUT_MODES:
        raise ValueError(f"LLM_INPUT must be one of {', '.join(INPUT_MODES)}, got {input_mode!r}")
    timeout = number("LLM_TIMEOUT", 60.0, minimum=0.001)
    document_timeout = number("LLM_DOCUMENT_TIMEOUT", 600.0, minimum=0.001)
    temperature_raw = environ.get("LLM_TEMPERATURE", "").strip().lower()
    temperature = None if temperature_raw == "none" else number("LLM_TEMPERATURE", 0.0, minimum=0)
    json_schema_raw = environ.get("LLM_JSON_SCHEMA", "").strip().lower() or "1"
    if json_schema_raw not in ("1", "0", "true", "false", "yes", "no", "on", "off"):
        raise ValueError(f"LLM_JSON_SCHEMA must be 1 or 0, got {json_schema_raw!r}")
    return LlmConfig(
        base_url=base_url,
        api_key=environ.get("LLM_API_KEY", "").strip() or "not-needed",
        model=model,
        timeout_s=timeout,
        document_timeout_s=document_timeout,
        max_retries=number("LLM_MAX_RETRIES", 3, minimum=0, integer=True),
        input_mode=input_mode,  # type: ignore[arg-type]  # checked above
        image_max_side=number("LLM_IMAGE_MAX_SIDE", 1600, minimum=16, integer=True),
        price_input_per_mtok=number("LLM_PRICE_INPUT", 0.0, minimum=0),
        price_output_per_mtok=number("LLM_PRICE_OUTPUT", 0.0, minimum=0),
        temperature=temperature,
        judge_model=environ.get("LLM_JUDGE_MODEL", "").strip() or None,
        supports_json_schema=json_schema_raw in ("1", "true", "yes", "on"),
    )
