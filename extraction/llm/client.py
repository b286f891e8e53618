"""Client for any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, llama.cpp server).

It asks for structured JSON, checks it, and turns every way a call can go wrong into one of the four
errors of extraction/llm/errors.py, which the validation loop knows how to handle.

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

import email.utils
import math
import random
import threading
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import openai
import pydantic

from extraction.llm.answers import mentions_response_format, openai_schema_name, parse_json_answer, with_schema_instruction
from extraction.llm.config import LlmConfig
from extraction.llm.errors import LlmBadAnswer, LlmError, LlmRefusal, LlmTransportError
from extraction.llm.images import redact_images
from extraction.llm.reply import LlmReply, LlmUsage, ResponseMode, estimate_cost

_RESPONSE_MODES: tuple[ResponseMode, ...] = ("json_schema", "json_object", "plain")
_RETRYABLE_STATUS = frozenset({408, 409, 429})


class JudgeVerdict(pydantic.BaseModel):
    passed: bool
    reason: str


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
            sent = messages if mode == "json_schema" else with_schema_instruction(messages, json_schema)
            kwargs: dict[str, Any] = {"model": model or self.config.model, "messages": sent}
            if self.config.temperature is not None:
                kwargs["temperature"] = self.config.temperature
            if mode == "json_schema":
                kwargs["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {
                        "name": openai_schema_name(schema_name),
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
                if next_mode is None or not mentions_response_format(rejected.message):
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

