"""The four ways an LLM call fails (pure), as the validation loop handles them:

- LlmTransportError: timeout, connection, 429 or 5xx after the retries are spent (retry later).
- LlmRefusal: the model refused (message.refusal, or finish_reason "content_filter").
- LlmBadAnswer: not JSON, cut off, or not the schema; its message is specific because the loop
  feeds it back to the model like a broken rule.
- LlmError: anything else (bad key, unknown model...), not worth retrying.
"""

from __future__ import annotations

from typing import Any

from extraction.llm.reply import LlmReply


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

