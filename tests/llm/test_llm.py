"""The model client against a real local HTTP server speaking chat completions."""

from __future__ import annotations

import json
import logging
import socket

import pytest
from fakellm import Close, FakeLLM, Sleep, completion, reply_json

from scarwarden.config import ModelSettings, parse_config
from scarwarden.errors import ConfigError, ExitCode, ModelError, ModelUnreachable
from scarwarden.llm.client import (
    MAX_RETRY_AFTER,
    ChatClient,
    Usage,
    client_from_config,
    complete_json,
    retry_after_seconds,
)

KEY = "sk-RECOGNISABLE-fake-key-7f3a9c"
MSG = [{"role": "user", "content": "Say hello"}]


def make_client(llm: FakeLLM, *, sleeps: list[float] | None = None, **overrides: object) -> ChatClient:
    values: dict[str, object] = {"base_url": llm.url, "backoff": 0.01, "max_retries": 2, "timeout": 5.0}
    values.update(overrides)
    settings = ModelSettings(**values)  # type: ignore[arg-type]
    if sleeps is None:
        return ChatClient(settings, KEY)
    return ChatClient(settings, KEY, sleep=sleeps.append)


def test_good_reply_reads_content_usage_and_sends_key(llm: FakeLLM) -> None:
    llm.script(completion("Hello!", prompt_tokens=11, completion_tokens=2, model="qwen-test"))
    client = make_client(llm)
    response = client.complete(MSG, model="qwen-test", json_mode=False, temperature=0.0)
    assert response.content == "Hello!"
    assert response.usage == Usage(11, 2, 13, estimated=False)
    assert response.model == "qwen-test"
    request = llm.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == f"Bearer {KEY}"
    assert request["body"]["model"] == "qwen-test"
    assert request["body"]["messages"] == MSG
    assert request["body"]["temperature"] == 0.0
    assert "response_format" not in request["body"]
    assert client.usage().total_tokens == 13


def test_usage_is_estimated_as_chars_over_four_when_absent(llm: FakeLLM) -> None:
    llm.script(completion("x" * 40, prompt_tokens=None))
    response = make_client(llm).complete([{"role": "user", "content": "y" * 400}], model="m")
    assert response.usage.estimated is True
    assert response.usage.prompt_tokens == 100
    assert response.usage.completion_tokens == 10
    assert response.usage.total_tokens == 110


def test_json_mode_requests_response_format(llm: FakeLLM) -> None:
    llm.script(reply_json({"ok": True}))
    make_client(llm).complete(MSG, model="m", json_mode=True)
    assert llm.requests[0]["body"]["response_format"] == {"type": "json_object"}


def test_400_on_response_format_retries_once_without_it(llm: FakeLLM) -> None:
    llm.script(
        (400, {"error": {"message": "response_format is not supported"}}),
        reply_json({"ok": True}),
        reply_json({"ok": 2}),
    )
    client = make_client(llm)
    assert client.complete(MSG, model="m", json_mode=True).content == '{"ok": true}'
    assert "response_format" in llm.requests[0]["body"]
    assert "response_format" not in llm.requests[1]["body"]
    # Remembered: the next JSON call does not ask again.
    client.complete(MSG, model="m", json_mode=True)
    assert "response_format" not in llm.requests[2]["body"]
    assert len(llm.requests) == 3


def test_400_without_response_format_fails_immediately(llm: FakeLLM) -> None:
    llm.script((400, {"error": {"message": "messages must not be empty"}}))
    with pytest.raises(ModelError) as info:
        make_client(llm).complete(MSG, model="m")
    assert info.value.exit_code == ExitCode.MODEL_ERROR
    assert "HTTP 400" in info.value.message and "messages must not be empty" in info.value.message
    assert len(llm.requests) == 1


@pytest.mark.parametrize("status", [401, 403])
def test_bad_key_is_clear_immediate_and_never_shows_the_key(
    llm: FakeLLM, status: int, caplog: pytest.LogCaptureFixture
) -> None:
    # Some servers echo the key they rejected; it must still not reach our message.
    llm.script((status, {"error": {"message": f"Incorrect API key provided: {KEY}"}}))
    client = ChatClient(ModelSettings(base_url=llm.url, backoff=0.01), KEY, key_source="DASHSCOPE_API_KEY")
    with caplog.at_level(logging.DEBUG, logger="scarwarden"), pytest.raises(ModelError) as info:
        client.complete(MSG, model="m")
    rendered = info.value.render()
    assert "bad key" in rendered
    assert f"HTTP {status}" in rendered
    assert "DASHSCOPE_API_KEY" in rendered  # names the variable to fix
    assert KEY not in rendered and KEY not in str(info.value) and KEY not in repr(info.value)
    assert KEY not in caplog.text
    assert KEY not in repr(client)
    assert info.value.exit_code == ExitCode.MODEL_ERROR
    assert len(llm.requests) == 1  # no retry on a bad key


def test_404_names_the_model_and_the_setting(llm: FakeLLM) -> None:
    llm.script((404, {"error": {"message": "The model `qwen-nope` does not exist"}}))
    with pytest.raises(ModelError) as info:
        make_client(llm, answer_model="qwen-nope").complete(MSG, model="qwen-nope")
    rendered = info.value.render()
    assert "model not found: qwen-nope" in rendered
    assert "model.answer_model" in rendered and "SCARWARDEN_MODEL_ANSWER" in rendered
    assert len(llm.requests) == 1


def test_429_honours_retry_after_then_succeeds(llm: FakeLLM, caplog: pytest.LogCaptureFixture) -> None:
    llm.script(
        (429, {"error": {"message": "rate limited"}}, {"Retry-After": "2"}),
        (429, {"error": "slow down"}, {"Retry-After": "7200"}),
        completion("finally"),
    )
    sleeps: list[float] = []
    with caplog.at_level(logging.INFO, logger="scarwarden"):
        response = make_client(llm, sleeps=sleeps).complete(MSG, model="m")
    assert response.content == "finally"
    assert sleeps == [2.0, MAX_RETRY_AFTER]  # honoured, and capped
    assert len(llm.requests) == 3
    assert "HTTP 429" in caplog.text and KEY not in caplog.text


def test_backoff_grows_exponentially_with_jitter(llm: FakeLLM) -> None:
    llm.script((503, "down"), (502, "down"), (500, "down"), completion("up"))
    sleeps: list[float] = []
    response = make_client(llm, sleeps=sleeps, backoff=1.0, max_retries=3).complete(MSG, model="m")
    assert response.content == "up"
    assert len(sleeps) == 3
    for attempt, delay in enumerate(sleeps):
        assert 0.5 * 2**attempt <= delay <= 1.5 * 2**attempt


def test_408_request_timeout_is_retried_with_backoff(llm: FakeLLM) -> None:
    llm.script((408, {"error": {"message": "request timeout"}}), completion("second try"))
    sleeps: list[float] = []
    response = make_client(llm, sleeps=sleeps, backoff=1.0).complete(MSG, model="m")
    assert response.content == "second try"
    assert len(llm.requests) == 2
    assert len(sleeps) == 1 and 0.5 <= sleeps[0] <= 1.5


def test_408_every_time_is_model_unreachable(llm: FakeLLM) -> None:
    llm.script(*[(408, "timeout")] * 2)
    with pytest.raises(ModelUnreachable) as info:
        make_client(llm, max_retries=1).complete(MSG, model="m")
    assert "after 2 attempts" in info.value.message and "HTTP 408" in info.value.message
    assert len(llm.requests) == 2


def test_500_three_times_is_model_unreachable(llm: FakeLLM) -> None:
    llm.script(*[(500, {"error": {"message": "internal error"}})] * 3)
    with pytest.raises(ModelUnreachable) as info:
        make_client(llm, max_retries=2).complete(MSG, model="m")
    assert info.value.exit_code == ExitCode.MODEL_UNREACHABLE
    assert "after 3 attempts" in info.value.message and "HTTP 500" in info.value.message
    assert len(llm.requests) == 3


def test_timeout_is_retried_then_unreachable(llm: FakeLLM) -> None:
    llm.script(Sleep(1.0), Sleep(1.0))
    with pytest.raises(ModelUnreachable) as info:
        make_client(llm, timeout=0.2, max_retries=1).complete(MSG, model="m")
    assert "no answer within 0.2 s" in info.value.message
    assert len(llm.requests) == 2


def test_timeout_then_success(llm: FakeLLM) -> None:
    llm.script(Sleep(1.0), completion("on time"))
    response = make_client(llm, timeout=0.3).complete(MSG, model="m")
    assert response.content == "on time"


def test_dropped_connection_is_retried(llm: FakeLLM) -> None:
    llm.script(Close(), completion("back"))
    assert make_client(llm).complete(MSG, model="m").content == "back"
    assert len(llm.requests) == 2


def test_connection_refused_is_unreachable() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = ChatClient(
        ModelSettings(base_url=f"http://127.0.0.1:{port}/v1", backoff=0.01, max_retries=1), KEY
    )
    with pytest.raises(ModelUnreachable) as info:
        client.complete(MSG, model="m")
    assert "cannot connect" in info.value.message
    assert "SCARWARDEN_BASE_URL" in info.value.render()
    assert KEY not in info.value.render()


@pytest.mark.parametrize("base_url", ["localhost:11434/v1", "ftp://example.invalid/v1", "http://"])
def test_a_base_url_that_is_no_url_is_a_config_error_at_once(base_url: str) -> None:
    sleeps: list[float] = []
    client = ChatClient(ModelSettings(base_url=base_url, max_retries=3), KEY, sleep=sleeps.append)
    with pytest.raises(ConfigError) as info:
        client.complete(MSG, model="m")
    assert info.value.exit_code == ExitCode.USAGE
    assert "model.base_url is not a usable http(s) URL" in info.value.message
    assert "SCARWARDEN_BASE_URL" in info.value.render()
    assert sleeps == []  # no retry: a typo in a setting does not heal with time


def test_200_without_a_completion_is_a_model_error(llm: FakeLLM) -> None:
    llm.script({"unexpected": "shape"})
    with pytest.raises(ModelError) as info:
        make_client(llm).complete(MSG, model="m")
    assert "without a chat completion" in info.value.message


# -- complete_json -------------------------------------------------------------------


def _parse_names(data: object) -> list[str]:
    if not isinstance(data, dict) or not isinstance(data.get("names"), list):
        raise ValueError('expected {"names": [...]}')
    return [str(n) for n in data["names"]]


def test_complete_json_good_first_time(llm: FakeLLM) -> None:
    llm.script(reply_json({"names": ["a", "b"]}))
    value, responses = complete_json(
        make_client(llm), MSG, model="m", parse=_parse_names, what="list of names"
    )
    assert value == ["a", "b"] and len(responses) == 1
    assert llm.requests[0]["body"]["response_format"] == {"type": "json_object"}


def test_complete_json_repairs_malformed_json_once(llm: FakeLLM) -> None:
    llm.script(completion('{"names": ["a",'), reply_json({"names": ["a"]}))
    value, responses = complete_json(
        make_client(llm), MSG, model="m", parse=_parse_names, what="list of names"
    )
    assert value == ["a"] and len(responses) == 2
    repair = llm.requests[1]["body"]["messages"]
    assert repair[:1] == MSG
    assert repair[1] == {"role": "assistant", "content": '{"names": ["a",'}
    assert "not valid JSON" in repair[2]["content"] and "list of names" in repair[2]["content"]


def test_complete_json_repair_names_the_schema_problem(llm: FakeLLM) -> None:
    llm.script(reply_json({"nomes": []}), reply_json({"names": ["x"]}))
    value, _ = complete_json(make_client(llm), MSG, model="m", parse=_parse_names, what="names")
    assert value == ["x"]
    assert 'expected {"names": [...]}' in llm.requests[1]["body"]["messages"][-1]["content"]


def test_complete_json_fails_after_one_repair(llm: FakeLLM) -> None:
    llm.script(completion("Sure! Here are the names: a, b"), completion("names: a, b"))
    with pytest.raises(ModelError) as info:
        complete_json(make_client(llm), MSG, model="m", parse=_parse_names, what="list of names")
    assert info.value.exit_code == ExitCode.MODEL_ERROR
    assert "even after one repair attempt" in info.value.message
    assert len(llm.requests) == 2


def test_complete_json_accepts_a_fenced_reply(llm: FakeLLM) -> None:
    llm.script(completion("```json\n" + json.dumps({"names": ["f"]}) + "\n```"))
    value, _ = complete_json(make_client(llm), MSG, model="m", parse=_parse_names, what="names")
    assert value == ["f"]


@pytest.mark.parametrize(
    "content",
    [
        "\ufeff" + json.dumps({"names": ["b"]}),
        "\ufeff```json\n" + json.dumps({"names": ["b"]}) + "\n```",
        "\n\ufeff" + json.dumps({"names": ["b"]}),
    ],
)
def test_complete_json_accepts_a_reply_starting_with_a_byte_order_mark(llm: FakeLLM, content: str) -> None:
    """A UTF-8 BOM before the JSON (some servers and models send one) is no reason to
    refuse it: json.loads alone says 'Unexpected UTF-8 BOM', and after the repair, exit 5."""
    llm.script(completion(content), completion(content))
    value, responses = complete_json(make_client(llm), MSG, model="m", parse=_parse_names, what="names")
    assert value == ["b"] and len(responses) == 1


def test_a_whole_reply_body_starting_with_a_byte_order_mark_is_read(llm: FakeLLM) -> None:
    llm.script((200, "\ufeff" + json.dumps(completion("hello"))))
    assert make_client(llm).complete(MSG, model="m").content == "hello"


# -- configuration -------------------------------------------------------------------


def test_client_from_config_needs_a_key() -> None:
    config = parse_config({}, environ={})
    assert client_from_config(config, environ={}) is None
    client = client_from_config(config, environ={"DASHSCOPE_API_KEY": KEY})
    assert client is not None and client.key_source == "DASHSCOPE_API_KEY"
    assert client.settings.base_url.startswith("https://dashscope-intl.aliyuncs.com")
    env = {
        "SCARWARDEN_API_KEY": KEY,
        "SCARWARDEN_BASE_URL": "http://localhost:1234/v1",
        "SCARWARDEN_MODEL_DISTILL": "local-model",
    }
    client = client_from_config(parse_config({}, environ=env), environ=env)
    assert client is not None and client.key_source == "SCARWARDEN_API_KEY"
    assert client.url == "http://localhost:1234/v1/chat/completions"
    assert client.settings.distill_model == "local-model"
    assert KEY not in repr(client)


def test_retry_after_parsing() -> None:
    assert retry_after_seconds(None) is None
    assert retry_after_seconds("3") == 3.0
    assert retry_after_seconds("-1") == 0.0
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # a date in the past
    assert retry_after_seconds("soon") is None
