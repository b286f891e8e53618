"""The LLM client against a real OpenAI-compatible HTTP server on loopback (tests/support/llm_server.py)."""

from __future__ import annotations

import base64
import io
import json
import threading
import time
import urllib.request

import pytest
from PIL import Image

from extraction.llm.config import LlmConfig, llm_config_from_env
from extraction.llm.errors import LlmBadAnswer, LlmError, LlmRefusal, LlmTransportError
from extraction.llm.images import crop_to_data_url, image_to_data_url
from extraction.llm.reply import LlmUsage, estimate_cost
from tests.support.llm_clients import ASK, GOOD, Invoice, ask_invoice, scripted_client
from tests.support.llm_server import (
    ScriptedLLMServer,
    reply_delay,
    reply_drop,
    reply_json,
    reply_length,
    reply_refusal,
    reply_schema_rejected,
    reply_status,
    reply_text,
)


def png_bytes(width: int, height: int, colour: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), colour).save(buffer, format="PNG")
    return buffer.getvalue()


def decode_data_url(url: str) -> Image.Image:
    header, encoded = url.split(",", 1)
    assert header.startswith("data:image/") and header.endswith(";base64")
    return Image.open(io.BytesIO(base64.b64decode(encoded)))


# -- answers -------------------------------------------------------------------------------------


def test_a_good_structured_answer_is_parsed_and_validated(llm_server):
    llm_server.script(reply_json(GOOD))
    reply = ask_invoice(scripted_client(llm_server))

    assert reply.data == GOOD
    assert isinstance(reply.parsed, Invoice) and reply.parsed.items[0].qty == 2
    assert reply.finish_reason == "stop" and reply.response_mode == "json_schema" and reply.attempts == 1
    sent = llm_server.requests[0].body
    assert sent["model"] == "test-model" and sent["temperature"] == 0
    assert sent["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "invoice", "schema": Invoice.model_json_schema(), "strict": False},
    }
    assert sent["messages"] == ASK


def test_usage_latency_and_cost_are_recorded(llm_server):
    llm_server.script(reply_delay(0.2, then=reply_json(GOOD, usage=(1200, 300))))
    client = scripted_client(llm_server, price_input_per_mtok=2.5, price_output_per_mtok=10.0)

    reply = ask_invoice(client)

    assert reply.usage == LlmUsage(prompt_tokens=1200, completion_tokens=300)
    assert reply.usage.total_tokens == 1500
    assert reply.cost == pytest.approx(0.006)
    assert 0.2 <= reply.latency_s < 3
    assert reply.model == "scripted-model"


def test_the_stored_request_has_no_image_bytes(llm_server):
    llm_server.script(reply_json(GOOD))
    url = image_to_data_url(png_bytes(2000, 1500), max_side=1600)
    messages = [
        {"role": "system", "content": "Read the invoice."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Page 1"},
                {"type": "image_url", "image_url": {"url": url, "detail": "high"}},
            ],
        },
    ]

    reply = ask_invoice(scripted_client(llm_server), messages)

    assert llm_server.requests[0].body["messages"][1]["content"][1]["image_url"]["url"] == url
    stored = reply.request[1]["content"]
    assert stored[1]["image_url"] == {"url": "<image 1 1600x1200>", "detail": "high"}
    assert stored[0] == {"type": "text", "text": "Page 1"}
    assert "base64" not in json.dumps(reply.request)
    assert messages[1]["content"][1]["image_url"]["url"] == url  # the caller's messages are untouched


def test_a_rejected_json_schema_falls_back_to_json_object_and_is_remembered(llm_server):
    llm_server.script(reply_schema_rejected(), reply_json(GOOD), reply_json(GOOD))
    client = scripted_client(llm_server)

    first = ask_invoice(client)
    second = ask_invoice(client)

    formats = [r.body["response_format"]["type"] for r in llm_server.requests]
    assert formats == ["json_schema", "json_object", "json_object"]
    assert first.parsed == second.parsed == Invoice.model_validate(GOOD)
    assert first.response_mode == second.response_mode == client.response_mode == "json_object"
    # Without json_schema the model must still be told the schema.
    instruction = llm_server.requests[1].body["messages"][-1]["content"]
    assert "JSON schema" in instruction and '"total"' in instruction


def test_an_endpoint_flagged_without_json_schema_starts_with_json_object(llm_server):
    llm_server.script(reply_json(GOOD))
    ask_invoice(scripted_client(llm_server, supports_json_schema=False))
    assert llm_server.requests[0].body["response_format"] == {"type": "json_object"}


def test_a_400_about_something_else_is_an_error_without_fallback(llm_server):
    llm_server.script(reply_status(400, {"error": {"message": "model 'x' does not exist"}}))

    with pytest.raises(LlmError) as caught:
        ask_invoice(scripted_client(llm_server))

    assert type(caught.value) is LlmError and not caught.value.retryable
    assert "HTTP 400" in str(caught.value) and "model 'x' does not exist" in str(caught.value)
    assert len(llm_server.requests) == 1


def test_malformed_json_is_a_bad_answer_that_says_where(llm_server):
    broken = '{\n  "number": "F-001",\n  "total" 12.5\n}'
    llm_server.script(reply_text(broken))

    with pytest.raises(LlmBadAnswer) as caught:
        ask_invoice(scripted_client(llm_server))

    assert str(caught.value) == "the answer is not valid JSON: Expecting ':' delimiter at line 3 column 11"
    assert caught.value.raw_text == broken and not caught.value.retryable
    assert caught.value.reply is not None and caught.value.reply.usage.total_tokens == 15


def test_json_in_a_markdown_fence_is_accepted(llm_server):
    llm_server.script(reply_text("```json\n" + json.dumps(GOOD) + "\n```"))
    assert ask_invoice(scripted_client(llm_server)).data == GOOD


def test_an_answer_that_is_not_an_object_is_a_bad_answer(llm_server):
    llm_server.script(reply_text("[1, 2]"))
    with pytest.raises(LlmBadAnswer, match="must be one JSON object, not a JSON array"):
        ask_invoice(scripted_client(llm_server))


def test_a_truncated_answer_is_a_bad_answer(llm_server):
    llm_server.script(reply_length('{"number": "F-001", "tot', usage=(900, 4096)))

    with pytest.raises(LlmBadAnswer, match="cut off at the output token limit after 4096 tokens") as caught:
        ask_invoice(scripted_client(llm_server))

    assert caught.value.reply.finish_reason == "length"


def test_a_schema_invalid_answer_is_a_bad_answer_naming_the_fields(llm_server):
    answer = {"number": "F-001", "total": "lots", "items": [{"description": "tea"}]}
    llm_server.script(reply_json(answer))

    with pytest.raises(LlmBadAnswer) as caught:
        ask_invoice(scripted_client(llm_server))

    message = str(caught.value)
    assert message.startswith("the answer does not match the schema: ")
    assert 'total: Input should be a valid number, unable to parse string as a number (got "lots")' in message
    assert "items.0.qty: Field required" in message
    assert caught.value.data == answer and caught.value.reply.data == answer


def test_a_refusal_is_reported_as_such(llm_server):
    llm_server.script(reply_refusal("I cannot read documents about elections."))

    with pytest.raises(LlmRefusal, match="cannot read documents about elections") as caught:
        ask_invoice(scripted_client(llm_server))

    assert caught.value.reply is not None and not caught.value.retryable


def test_a_content_filter_stop_is_a_refusal(llm_server):
    llm_server.script(reply_text("", finish_reason="content_filter"))
    with pytest.raises(LlmRefusal, match="content filter"):
        ask_invoice(scripted_client(llm_server))


# -- transport and retries -----------------------------------------------------------------------


def test_a_429_with_retry_after_is_waited_out_then_succeeds(llm_server):
    llm_server.script(reply_status(429, headers={"Retry-After": "1"}), reply_json(GOOD))

    started = time.monotonic()
    reply = ask_invoice(scripted_client(llm_server))
    elapsed = time.monotonic() - started

    assert reply.data == GOOD and reply.attempts == 2
    assert len(llm_server.requests) == 2
    assert 0.95 <= elapsed < 3  # the backoff alone (0.01 s) would have been far shorter
    assert reply.latency_s >= 0.95


def test_server_errors_give_up_after_the_configured_retries(llm_server):
    llm_server.script(*(reply_status(500) for _ in range(4)))

    with pytest.raises(LlmTransportError) as caught:
        ask_invoice(scripted_client(llm_server, max_retries=2))

    assert len(llm_server.requests) == 3 and llm_server.pending == 1
    error = caught.value
    assert error.retryable and error.status_code == 500 and error.attempts == 3
    assert "HTTP 500 after 3 attempts" in str(error)


def test_a_slow_endpoint_times_out_as_a_transport_error(llm_server):
    llm_server.script(reply_delay(5), reply_delay(5))

    started = time.monotonic()
    with pytest.raises(LlmTransportError, match=r"did not answer within 0.5 s \(2 attempts\)") as caught:
        ask_invoice(scripted_client(llm_server, timeout_s=0.5, max_retries=1))

    assert time.monotonic() - started < 3
    assert caught.value.retryable and len(llm_server.requests) == 2


def test_a_dropped_connection_is_retried(llm_server):
    llm_server.script(reply_drop(), reply_json(GOOD))

    reply = ask_invoice(scripted_client(llm_server))

    assert reply.data == GOOD and reply.attempts == 2


def test_dropped_connections_without_retries_left_are_a_transport_error(llm_server):
    llm_server.script(reply_drop())
    with pytest.raises(LlmTransportError, match="could not reach the LLM endpoint") as caught:
        ask_invoice(scripted_client(llm_server, max_retries=0))
    assert caught.value.retryable


def test_an_exhausted_script_fails_at_once_and_loudly(llm_server):
    with pytest.raises(LlmTransportError, match="script exhausted"):
        ask_invoice(scripted_client(llm_server, max_retries=3))
    assert len(llm_server.requests) == 1  # x-should-retry: false is honoured


# -- judge, schema as dict, scripted server features ---------------------------------------------


def test_the_judge_uses_its_own_model_and_returns_the_verdict(llm_server):
    llm_server.script(reply_json({"passed": False, "reason": "the total is missing"}))
    client = scripted_client(llm_server, judge_model="judge-model")

    verdict = client.judge("Does the answer give a total?", json.dumps({"number": "F-001"}))

    assert verdict == (False, "the total is missing")
    sent = llm_server.requests[0].body
    assert sent["model"] == "judge-model"
    assert "Does the answer give a total?" in sent["messages"][-1]["content"]


def test_a_dict_schema_is_sent_as_is_and_not_validated(llm_server):
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    llm_server.script(reply_json({"a": "not an integer"}))

    reply = scripted_client(llm_server).complete_json(messages=ASK, schema=schema, schema_name="my schema!")

    assert reply.data == {"a": "not an integer"} and reply.parsed is None
    assert llm_server.requests[0].body["response_format"]["json_schema"]["name"] == "my_schema_"
    assert llm_server.requests[0].body["response_format"]["json_schema"]["schema"] == schema


def test_a_scripted_step_can_answer_from_what_was_sent(llm_server):
    def echo_last_message(body: dict) -> object:
        return reply_json({"number": body["messages"][-1]["content"], "total": 1})

    llm_server.script(echo_last_message)

    reply = ask_invoice(scripted_client(llm_server), [{"role": "user", "content": "feedback: total is 1"}])

    assert reply.data == {"number": "feedback: total is 1", "total": 1}
    assert llm_server.requests[0].headers["authorization"] == "Bearer not-needed"


def test_the_scripted_server_lists_models():
    with (
        ScriptedLLMServer() as server,
        urllib.request.urlopen(server.base_url + "/models", timeout=5) as resp,
    ):
        assert json.load(resp)["data"][0]["id"] == "scripted-model"


def test_the_scripted_server_stops_promptly_during_a_delayed_reply():
    server = ScriptedLLMServer().start()
    server.script(reply_delay(30))

    def call() -> None:
        request = urllib.request.Request(server.base_url + "/chat/completions", data=b"{}", method="POST")
        try:
            urllib.request.urlopen(request, timeout=10).read()
        except OSError:
            pass

    caller = threading.Thread(target=call, daemon=True)
    caller.start()
    deadline = time.monotonic() + 5
    while not server.requests and time.monotonic() < deadline:
        time.sleep(0.01)
    started = time.monotonic()
    server.stop()
    caller.join(timeout=5)

    assert server.requests, "the delayed request never arrived"
    assert time.monotonic() - started < 2
    assert not caller.is_alive()


# -- images --------------------------------------------------------------------------------------


def test_image_to_data_url_downscales_to_the_longest_side():
    image = decode_data_url(image_to_data_url(png_bytes(3200, 800), max_side=1600))
    assert image.size == (1600, 400) and image.format == "JPEG"


def test_image_to_data_url_never_upscales_and_can_write_png(tmp_path):
    path = tmp_path / "page.png"
    path.write_bytes(png_bytes(300, 200))
    image = decode_data_url(image_to_data_url(path, max_side=1600, fmt="PNG"))
    assert image.size == (300, 200) and image.format == "PNG"


def test_crop_to_data_url_cuts_the_named_fraction_of_the_page(tmp_path):
    page = Image.new("RGB", (1000, 500), (255, 255, 255))
    page.paste((0, 0, 255), (500, 250, 1000, 500))  # blue bottom-right quarter
    path = tmp_path / "page.png"
    page.save(path)

    crop = decode_data_url(crop_to_data_url(path, (0.5, 0.5, 0.5, 0.5), 200, fmt="PNG"))

    assert crop.size == (200, 100)
    assert crop.convert("RGB").getpixel((100, 50)) == (0, 0, 255)


def test_crop_to_data_url_rejects_a_box_outside_the_page():
    with pytest.raises(ValueError, match="outside the page"):
        crop_to_data_url(png_bytes(100, 100), (1.2, 0.1, 0.2, 0.2), 100)


# -- configuration -------------------------------------------------------------------------------


def test_no_llm_is_configured_without_base_url_and_model():
    assert llm_config_from_env({}) is None
    assert llm_config_from_env({"LLM_API_KEY": "sk-x"}) is None


def test_the_config_is_read_from_the_environment():
    config = llm_config_from_env(
        {
            "LLM_BASE_URL": "http://localhost:11434/v1",
            "LLM_MODEL": "qwen2.5vl",
            "LLM_API_KEY": "",
            "LLM_TIMEOUT": "30",
            "LLM_MAX_RETRIES": "5",
            "LLM_INPUT": "Hybrid",
            "LLM_IMAGE_MAX_SIDE": "1024",
            "LLM_PRICE_INPUT": "0.15",
            "LLM_PRICE_OUTPUT": "0.6",
            "LLM_JUDGE_MODEL": "judge",
        }
    )
    assert config == LlmConfig(
        base_url="http://localhost:11434/v1",
        model="qwen2.5vl",
        api_key="not-needed",
        timeout_s=30.0,
        max_retries=5,
        input_mode="hybrid",
        image_max_side=1024,
        price_input_per_mtok=0.15,
        price_output_per_mtok=0.6,
        judge_model="judge",
    )
    assert estimate_cost(LlmUsage(1_000_000, 1_000_000), config) == pytest.approx(0.75)


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        ("LLM_TIMEOUT", "abc", "LLM_TIMEOUT='abc' is not a number"),
        ("LLM_TIMEOUT", "0", "LLM_TIMEOUT=0.0 is below the minimum of 0.001"),
        ("LLM_INPUT", "foo", "LLM_INPUT='foo' is not one of: text, vision, hybrid"),
        ("LLM_MAX_RETRIES", "-1", "LLM_MAX_RETRIES=-1 is below the minimum of 0"),
        ("LLM_MAX_RETRIES", "2.5", "LLM_MAX_RETRIES='2.5' is not a whole number"),
        ("LLM_IMAGE_MAX_SIDE", "big", "LLM_IMAGE_MAX_SIDE='big' is not a whole number"),
        ("LLM_PRICE_OUTPUT", "-3", "LLM_PRICE_OUTPUT=-3.0 is below the minimum of 0"),
        ("LLM_MODEL", "", "LLM_MODEL must be set when LLM_BASE_URL is set"),
        ("LLM_TIMEOUT", "nan", "LLM_TIMEOUT='nan' is not a finite number"),
    ],
)
def test_a_bad_variable_is_named_in_the_error(variable, value, expected):
    environ = {"LLM_BASE_URL": "http://localhost:8000/v1", "LLM_MODEL": "m", variable: value}
    with pytest.raises(ValueError) as caught:
        llm_config_from_env(environ)
    assert str(caught.value).startswith(expected)
