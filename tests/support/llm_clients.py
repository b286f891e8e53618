"""LLM clients pointed at the scripted server, and the small invoice question the client tests ask."""

from __future__ import annotations

import time
from dataclasses import replace

import pydantic

from extraction.llm.client import LlmClient
from extraction.llm.config import LlmConfig
from tests.support.llm_server import ScriptedLLMServer


class Item(pydantic.BaseModel):
    description: str
    qty: float


class Invoice(pydantic.BaseModel):
    number: str
    total: float
    items: list[Item] = []


GOOD = {"number": "F-001", "total": 12.5, "items": [{"description": "tea", "qty": 2}]}
ASK = [{"role": "system", "content": "Read the invoice."}, {"role": "user", "content": "LINE 1: F-001"}]


def scripted_client(server: ScriptedLLMServer, *, deadline_in: float | None = None, **overrides: object) -> LlmClient:
    """A production client for `server` with short timeouts and back-off; `overrides` replace config fields."""
    config = LlmConfig(
        base_url=server.base_url,
        model="test-model",
        timeout_s=5,
        max_retries=2,
        backoff_initial_s=0.01,
        backoff_max_s=0.05,
    )
    deadline = None if deadline_in is None else time.monotonic() + deadline_in
    return LlmClient(replace(config, **overrides), deadline=deadline)


def ask_invoice(client: LlmClient, messages: list[dict] | None = None):
    return client.complete_json(messages=messages or ASK, schema=Invoice, schema_name="invoice")
