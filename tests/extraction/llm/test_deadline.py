"""LLM_TIMEOUT is a deadline for the whole answer, and a document's calls share one budget."""

from __future__ import annotations

import threading
import time

import pytest

from extraction.llm.client import LlmClient
from extraction.llm.errors import LlmError, LlmTransportError
from tests.support.llm_clients import GOOD, ask_invoice, scripted_client
from tests.support.llm_server import reply_drip, reply_hang, reply_json

SLACK = 1.5  # seconds past a deadline a stop may take on a loaded 2-core machine


def client_for(server, *, deadline_in: float | None = None, **overrides) -> LlmClient:
    """A client that gives up quickly: two seconds an answer and no retry unless a test says otherwise."""
    return scripted_client(server, deadline_in=deadline_in, **{"timeout_s": 2, "max_retries": 0, **overrides})


@pytest.mark.parametrize("endpoint", [reply_drip(0.5, reply_json(GOOD)), reply_hang()], ids=["dripping", "hanging"])
def test_an_answer_that_does_not_finish_within_the_timeout_is_cut_off(llm_server, endpoint):
    llm_server.script(endpoint)
    started = time.monotonic()
    with pytest.raises(LlmTransportError, match=r"did not answer within 2 s \(1 attempt\)") as caught:
        ask_invoice(client_for(llm_server))
    assert 2 <= time.monotonic() - started < 2 + SLACK
    assert caught.value.retryable


def test_after_a_cut_off_attempt_the_next_one_gets_a_fresh_connection_and_succeeds(llm_server):
    llm_server.script(reply_drip(0.5), reply_json(GOOD))
    reply = ask_invoice(client_for(llm_server, timeout_s=1, max_retries=1))
    assert reply.data == GOOD and reply.attempts == 2


def test_a_documents_calls_stop_when_its_budget_is_spent_however_many_retries_are_left(llm_server):
    llm_server.always(reply_drip(0.5))
    client = client_for(llm_server, timeout_s=2, max_retries=10, document_timeout_s=3, deadline_in=3)
    started = time.monotonic()
    with pytest.raises(LlmTransportError, match="LLM_DOCUMENT_TIMEOUT") as caught:
        ask_invoice(client)
    assert time.monotonic() - started < 3 + SLACK
    assert caught.value.retryable and len(llm_server.requests) == 2
    with pytest.raises(LlmTransportError, match="LLM_DOCUMENT_TIMEOUT"):  # and no later call starts
        ask_invoice(client)
    assert len(llm_server.requests) == 2


def test_a_retry_after_longer_than_the_budget_left_is_not_waited_for(llm_server):
    from tests.support.llm_server import reply_status

    llm_server.script(reply_status(429, headers={"Retry-After": "30"}))
    client = client_for(llm_server, max_retries=3, deadline_in=5)
    started = time.monotonic()
    with pytest.raises(LlmTransportError, match="LLM_DOCUMENT_TIMEOUT"):
        ask_invoice(client)
    assert time.monotonic() - started < 2


def test_abort_stops_a_call_in_flight_at_once_and_every_later_one(llm_server):
    # A socket that receives nothing at all is released by its read timeout; one that trickles, at once.
    llm_server.script(reply_drip(0.3))
    client = client_for(llm_server, timeout_s=30)
    aborted_at: list[float] = []

    def abort_once_asked() -> None:
        while not llm_server.requests:
            time.sleep(0.02)
        aborted_at.append(time.monotonic())
        client.abort()

    threading.Thread(target=abort_once_asked, daemon=True).start()
    with pytest.raises(LlmError, match="stopped"):
        ask_invoice(client)
    assert time.monotonic() - aborted_at[0] < SLACK
    with pytest.raises(LlmError, match="stopped"):
        ask_invoice(client)
    assert len(llm_server.requests) == 1
