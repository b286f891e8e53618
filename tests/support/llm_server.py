"""A scripted OpenAI-compatible HTTP server on loopback, for tests.

The openai package talks through its own HTTP stack, so tests reach it through a real socket:
queue answers with `server.script(...)`, point the client at `server.base_url`, then read
`server.requests` to see exactly what was sent.

    with ScriptedLLMServer() as server:
        server.script(reply_status(429, headers={"Retry-After": "1"}), reply_json({"total": 3}))
        ...

A step is a `Reply` (built with the reply_* helpers) or a callable `f(request_body) -> step`, so a
test can answer from what was sent. An empty script answers 500 "script exhausted" with
`x-should-retry: false`, so a test that sends one request too many fails loudly and at once.
"""

from __future__ import annotations

import itertools
import json
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

CHAT_PATH = "/v1/chat/completions"
MODELS_PATH = "/v1/models"
SCRIPTED_MODEL = "scripted-model"


@dataclass(frozen=True)
class Reply:
    """One scripted answer. Build it with the reply_* helpers rather than by hand."""

    status: int = 200
    body: Any = None  # a JSON-able object, raw bytes/str, or None for an empty body
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    then: Step | None = None  # answered after delay_s (reply_delay)
    drop: bool = False  # close the connection without answering
    drip_s: float = 0.0  # send the status line, the headers and the body one byte every drip_s seconds


Step = Reply | Callable[[dict[str, Any]], "Step"]


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    body: dict[str, Any]  # the parsed JSON body ({} when empty or not JSON)


_ids = itertools.count(1)


def _completion(
    *,
    content: str | None,
    finish_reason: str = "stop",
    usage: tuple[int, int] = (10, 5),
    refusal: str | None = None,
    model: str = SCRIPTED_MODEL,
) -> dict[str, Any]:
    prompt, completion = usage
    return {
        "id": f"chatcmpl-scripted-{next(_ids)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": refusal},
                "finish_reason": finish_reason,
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


def reply_json(
    obj: Any, *, usage: tuple[int, int] = (10, 5), finish_reason: str = "stop", model: str = SCRIPTED_MODEL
) -> Reply:
    """A normal chat completion whose message content is json.dumps(obj)."""
    return Reply(
        body=_completion(content=json.dumps(obj), usage=usage, finish_reason=finish_reason, model=model)
    )


def reply_text(
    text: str, *, usage: tuple[int, int] = (10, 5), finish_reason: str = "stop", model: str = SCRIPTED_MODEL
) -> Reply:
    """A chat completion with this exact content (malformed JSON, prose, a code fence...)."""
    return Reply(body=_completion(content=text, usage=usage, finish_reason=finish_reason, model=model))


def reply_length(text: str, *, usage: tuple[int, int] = (10, 5)) -> Reply:
    """An answer cut off at the token limit (finish_reason "length")."""
    return reply_text(text, usage=usage, finish_reason="length")


def reply_refusal(text: str = "I can't help with that.", *, usage: tuple[int, int] = (10, 5)) -> Reply:
    """The model refused: content is null and message.refusal carries the text."""
    return Reply(body=_completion(content=None, refusal=text, usage=usage))


def openai_error_body(
    message: str, *, type_: str = "invalid_request_error", param: str | None = None, code: str | None = None
) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


def reply_status(code: int, body: Any = None, headers: dict[str, str] | None = None) -> Reply:
    """An HTTP error (429, 500, 400...). Without a body, an OpenAI-style error body is sent."""
    if body is None:
        body = openai_error_body(
            f"scripted HTTP {code}", type_="server_error" if code >= 500 else "invalid_request_error"
        )
    return Reply(status=code, body=body, headers=dict(headers or {}))


def reply_schema_rejected() -> Reply:
    """A 400 like the ones endpoints send when they do not support json_schema structured output."""
    return reply_status(
        400,
        openai_error_body(
            "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.",
            param="response_format",
        ),
    )


def reply_delay(seconds: float, then: Step | None = None) -> Reply:
    """Wait before answering `then` (a normal empty-JSON answer when not given): for timeouts."""
    return Reply(delay_s=seconds, then=then if then is not None else reply_json({}))


def reply_drip(every_s: float = 2.0, then: Reply | None = None) -> Reply:
    """Answer `then` (a normal empty-JSON answer when not given) one byte every `every_s` seconds, headers
    included: a connection that is never idle long enough for a read timeout, and never finishes."""
    base = then if then is not None else reply_json({})
    return Reply(status=base.status, body=base.body, headers=base.headers, drip_s=every_s)


def reply_hang() -> Reply:
    """Accept the request and never answer (until the server stops)."""
    return Reply(delay_s=3600, then=reply_json({}))


def reply_drop() -> Reply:
    """Close the connection without answering (the client sees a reset / disconnect)."""
    return Reply(drop=True)


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer
    # HTTP/1.0: one request per connection, so a dropped or timed-out connection never poisons the next.
    protocol_version = "HTTP/1.0"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass  # keep test output clean

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        if self.path.rstrip("/") == MODELS_PATH:
            models = {
                "object": "list",
                "data": [{"id": SCRIPTED_MODEL, "object": "model", "owned_by": "tests"}],
            }
            self._send(Reply(body=models))
        else:
            self._send(reply_status(404, openai_error_body(f"no route GET {self.path}")))

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.path.rstrip("/") != CHAT_PATH:
            self._send(reply_status(404, openai_error_body(f"no route POST {self.path}")))
            return
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {}
        owner = self.server.owner
        owner._record(
            RecordedRequest("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        )
        step = owner._next_step()
        self._answer(step, body)

    def _answer(self, step: Step | None, body: dict[str, Any]) -> None:
        stop = self.server.owner._stopping
        while True:
            if step is None:
                self._send(
                    Reply(
                        status=500,
                        body=openai_error_body(
                            "script exhausted: the scripted LLM server got a request but no step was queued",
                            type_="server_error",
                        ),
                        headers={"x-should-retry": "false"},
                    )
                )
                return
            if callable(step) and not isinstance(step, Reply):
                step = step(body)
                continue
            if step.delay_s:
                if stop.wait(step.delay_s):
                    return  # server is stopping: give up without answering
                step = step.then
                continue
            if step.drop:
                self._drop()
                return
            if step.drip_s:
                self._drip(step, stop)
                return
            self._send(step)
            return

    def _drip(self, reply: Reply, stop: threading.Event) -> None:
        payload = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
        head = (f"HTTP/1.0 {reply.status} OK\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(payload)}\r\n\r\n").encode()
        try:
            for byte in head + payload:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                if stop.wait(reply.drip_s):
                    return
        except OSError:
            pass  # the client gave up: what a deadline is for

    def _send(self, reply: Reply) -> None:
        if reply.body is None:
            payload = b""
        elif isinstance(reply.body, bytes):
            payload = reply.body
        elif isinstance(reply.body, str):
            payload = reply.body.encode()
        else:
            payload = json.dumps(reply.body).encode()
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
        except OSError:
            pass  # the client gave up (timeout) before we answered

    def _drop(self) -> None:
        # SO_LINGER 0 makes close() send a RST: the client sees "connection reset", not a clean answer.
        self.close_connection = True
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True  # a handler stuck in a delay never blocks interpreter exit
    block_on_close = False
    owner: ScriptedLLMServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # resets and broken pipes are what several tests provoke on purpose


class ScriptedLLMServer:
    """An OpenAI-compatible chat completions server that answers from a queue of scripted steps."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self._httpd = _HTTPServer((host, port), _Handler)
        self._httpd.owner = self
        self._steps: deque[Step] = deque()
        self._always: Step | None = None
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self.requests: list[RecordedRequest] = []

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def bodies(self) -> list[dict[str, Any]]:
        """The parsed JSON bodies of the chat requests received, in order."""
        with self._lock:
            return [r.body for r in self.requests]

    @property
    def pending(self) -> int:
        """Steps queued and not yet used."""
        with self._lock:
            return len(self._steps)

    def script(self, *steps: Step) -> ScriptedLLMServer:
        """Queue answers, used one per chat request in order."""
        with self._lock:
            self._steps.extend(steps)
        return self

    def always(self, step: Step) -> ScriptedLLMServer:
        """Answer with `step` (often a callable of the request) whenever no scripted step is queued."""
        with self._lock:
            self._always = step
        return self

    def _next_step(self) -> Step | None:
        with self._lock:
            return self._steps.popleft() if self._steps else self._always

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def start(self) -> ScriptedLLMServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="scripted-llm-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes handlers waiting in a delay
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> ScriptedLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@pytest.fixture
def llm_server() -> Iterator[ScriptedLLMServer]:
    """A started scripted server, stopped after the test."""
    with ScriptedLLMServer() as server:
        yield server
