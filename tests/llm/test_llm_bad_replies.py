"""Replies no model server should send, from a real local server: each is a clear
ModelUnreachable (exit 3) or ModelError (exit 5), or is read as well as it can be;
never an internal error, never a call that outlives ``model.timeout``."""

from __future__ import annotations

import time

import pytest
from fakellm import FakeLLM, Trickle, completion, dripped_headers

from scarwarden.config import ModelSettings
from scarwarden.errors import ExitCode, ModelError, ModelUnreachable
from scarwarden.llm.client import ChatClient, Usage, complete_json

MSG = [{"role": "user", "content": "Say hello"}]


def make_client(llm: FakeLLM, **overrides: object) -> ChatClient:
    values: dict[str, object] = {"base_url": llm.url, "backoff": 0.01, "max_retries": 1, "timeout": 5.0}
    values.update(overrides)
    return ChatClient(ModelSettings(**values), "sk-test")  # type: ignore[arg-type]


def test_a_reply_trickled_past_the_timeout_is_a_timeout(llm: FakeLLM) -> None:
    """Each byte comes well within the timeout, so only a deadline on the whole reply
    stops it: the read timeout alone let this call last 9 s with timeout 1 s (and a
    reply that never ends, forever). Here a byte every 0.04 s against timeout 0.4 s (the
    same ratio: each attempt waits 0.4 s, not 1 s)."""
    short = {"choices": [{"message": {"content": "hi"}}]}  # 45 bytes: 1.8 s each
    llm.script(Trickle(0.04, short), Trickle(0.04, short))
    with pytest.raises(ModelUnreachable) as caught:
        make_client(llm, timeout=0.4).complete(MSG, model="m")
    assert "did not answer after 2 attempts" in caught.value.message
    assert "no complete answer within 0.4 s (model.timeout)" in caught.value.message
    assert len(llm.requests) == 2


def test_a_reply_trickled_within_the_timeout_is_read(llm: FakeLLM) -> None:
    llm.script(Trickle(0.0005, completion("Hello!")))
    assert make_client(llm).complete(MSG, model="m").content == "Hello!"


@pytest.mark.parametrize(
    "usage",
    [
        {"prompt_tokens": 5, "completion_tokens": "abc"},  # ValueError: invalid literal for int()
        {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": [1]},  # TypeError
        {"prompt_tokens": 5, "completion_tokens": 1e400},  # OverflowError: float infinity
        {"prompt_tokens": 5, "completion_tokens": -3},
    ],
)
def test_token_counts_that_are_no_counts_are_estimated(llm: FakeLLM, usage: dict[str, object]) -> None:
    """Usage is bookkeeping: a server's junk in it is replaced by the estimate (as when
    it sends none), not an internal error after the answer arrived."""
    llm.script({"choices": [{"message": {"content": "x" * 40}}], "usage": usage})
    response = make_client(llm).complete([{"role": "user", "content": "y" * 400}], model="m")
    assert response.content == "x" * 40
    assert response.usage == Usage(100, 10, 110, estimated=True)


def test_a_reply_that_is_not_unicode_text_is_a_model_error(llm: FakeLLM) -> None:
    """A JSON "\\ud800" escape decodes to a lone surrogate, which no file, terminal or
    commit can take: printing the answer crashed with UnicodeEncodeError."""
    llm.script((200, '{"choices": [{"message": {"content": "Lead with the pain \\ud800 [PB-01]"}}]}'))
    with pytest.raises(ModelError) as caught:
        make_client(llm).complete(MSG, model="m")
    assert caught.value.exit_code == ExitCode.MODEL_ERROR
    assert caught.value.message.startswith(
        "the model's reply holds a lone surrogate (U+D800) at character 20"
    )


def test_json_that_is_not_unicode_text_is_repaired_then_a_model_error(llm: FakeLLM) -> None:
    """The same escape inside the JSON asked for (a reviewer's reason) crashed the
    printing of the review; it is a problem the repair request names."""
    bad = '{"verdict": "retake", "reason": "bad \\ud800"}'  # the content holds the escape
    llm.script(completion(bad), completion(bad))
    with pytest.raises(ModelError) as caught:
        complete_json(make_client(llm), MSG, model="m", parse=lambda data: data, what="verdict")
    assert "'reason' holds a lone surrogate (U+D800) at character 5" in caught.value.message
    repair = llm.requests[1]["body"]["messages"][-1]["content"]
    assert repair.startswith("Your reply is not valid: 'reason' holds a lone surrogate (U+D800)")


def test_models_test_gives_a_trickled_reply_no_more_than_the_timeout(llm: FakeLLM) -> None:
    """``models --test`` took each reply as long as it kept coming (4.5 s here with
    timeout 1 s, and "answered" at the end; here 1.8 s against 0.4 s)."""
    from scarwarden.config import parse_config
    from scarwarden.llm.probe import probe

    short = {"choices": [{"message": {"content": "p"}}]}
    llm.script(Trickle(0.04, short), completion("p"), completion("p"))
    config = parse_config({"model": {"provider": "vllm", "base_url": llm.url, "timeout": 0.4}}, environ={})
    report = probe(config, environ={})
    distill = next(c for c in report.checks if c.name == "model.distill_model")
    assert (distill.ok, distill.detail) == (False, "no complete answer within 0.4 s (model.timeout)")
    assert [c.ok for c in report.checks if c.name == "model.answer_model"] == [True]


def test_a_reply_past_the_size_cap_is_a_model_error_not_memory_filled(llm: FakeLLM) -> None:
    """A server streaming without end (or a huge body) was read whole into memory."""
    from scarwarden.llm.reply import MAX_REPLY_BYTES

    huge = '{"choices": [{"message": {"content": "' + "x" * (MAX_REPLY_BYTES + 1) + '"}}]}'
    llm.script((200, huge), (200, huge))
    with pytest.raises(ModelError) as caught:
        make_client(llm, timeout=30.0).complete(MSG, model="m")
    assert caught.value.exit_code == ExitCode.MODEL_ERROR
    assert caught.value.message.startswith("the model server's reply is over 16 MiB")
    assert len(llm.requests) == 1  # no retry: the same server would send it again


@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_a_redirect_is_not_followed(llm: FakeLLM, status: int) -> None:
    """requests followed a redirect to any host: the request went on (without the key;
    a 302 as a GET) and that host's answer was used - a chat completion from a server
    nobody configured, or its 401 reported as 'bad key' for the key never sent to it.
    A redirect is now a clear error naming where it points; nothing is sent there."""
    with FakeLLM() as elsewhere:
        target = elsewhere.url.replace("127.0.0.1", "localhost") + "/chat/completions"
        elsewhere.default = (401, {"error": {"message": "Incorrect API key provided"}})
        llm.script((status, "", {"Location": target}))
        with pytest.raises(ModelError) as caught:
            make_client(llm).complete(MSG, model="m")
        assert elsewhere.requests == []
    assert caught.value.exit_code == ExitCode.MODEL_ERROR
    assert f"answered HTTP {status}, a redirect to {target}" in caught.value.message
    assert "bad key" not in caught.value.message
    assert len(llm.requests) == 1  # no retry: the next answer would be the same


def test_json_nested_too_deep_is_repaired_then_a_model_error(llm: FakeLLM) -> None:
    """'[' a hundred thousand times: json raised RecursionError, which no one caught, so
    distill and answer --qc ended in 'internal error: RecursionError'."""
    deep = "[" * 100_000 + "]" * 100_000
    llm.script(completion(deep), completion(deep))
    with pytest.raises(ModelError) as caught:
        complete_json(make_client(llm), MSG, model="m", parse=lambda data: data, what="verdict")
    assert "it is nested too deeply to read" in caught.value.message
    assert llm.requests[1]["body"]["messages"][-1]["content"].startswith(
        "Your reply is not valid: it is nested too deeply to read"
    )


def test_a_completion_nested_too_deep_is_a_model_error(llm: FakeLLM) -> None:
    llm.script((200, '{"choices": ' + "[" * 100_000 + "]" * 100_000 + "}"))
    with pytest.raises(ModelError) as caught:
        make_client(llm).complete(MSG, model="m")
    assert "answered HTTP 200 without a chat completion" in caught.value.message


def test_an_error_body_nested_too_deep_is_quoted_as_text(llm: FakeLLM) -> None:
    deep = '{"error": ' + "[" * 100_000 + "]" * 100_000 + "}"
    llm.script((500, deep), (500, deep))
    with pytest.raises(ModelUnreachable) as caught:
        make_client(llm).complete(MSG, model="m")
    assert 'HTTP 500: {"error": [[[' in caught.value.message


def test_headers_dripped_past_the_timeout_are_a_timeout() -> None:
    """A server sending its status line, then a header line now and then, each well
    within the read timeout: the deadline on the body never started, and the call
    lasted until http.client gave up at 100 headers (20 s with timeout 1 s, 8 s here at
    a line every 0.08 s; with a slower drip, hours), then said 'cannot connect'."""
    started = time.monotonic()
    with dripped_headers() as url, pytest.raises(ModelUnreachable) as caught:
        settings = ModelSettings(base_url=url, timeout=0.4, max_retries=0)
        ChatClient(settings, "sk-test").complete(MSG, model="m")
    assert time.monotonic() - started < 4
    assert "no answer within 0.4 s (model.timeout)" in caught.value.message


def test_content_as_a_list_of_text_parts_is_read(llm: FakeLLM) -> None:
    """Some servers answer with content as parts ([{"type": "text", "text": ...}]), the
    form requests take: 'the model's reply had no text content', of a reply that had."""
    parts = [{"type": "text", "text": "Hello, "}, {"type": "text", "text": "world"}]
    llm.script({"choices": [{"message": {"content": parts}}]})
    assert make_client(llm).complete(MSG, model="m").content == "Hello, world"


def test_content_parts_without_text_are_no_text_content(llm: FakeLLM) -> None:
    llm.script({"choices": [{"message": {"content": [{"type": "image_url", "image_url": {"url": "x"}}]}}]})
    with pytest.raises(ModelError) as caught:
        make_client(llm).complete(MSG, model="m")
    assert caught.value.message == "the model's reply had no text content"


@pytest.mark.parametrize("status", [500, 401, 400])
def test_control_characters_in_a_server_error_are_escaped(llm: FakeLLM, status: int) -> None:
    """A server's error text went to the terminal as sent: an escape sequence in it set
    the window title, cleared the screen or recoloured what followed. It is quoted with
    its control characters escaped, as repr() shows them."""
    llm.default = (status, {"error": {"message": "boom \x1b]0;owned\x07 \x1b[2J done"}})
    with pytest.raises((ModelError, ModelUnreachable)) as caught:
        make_client(llm).complete(MSG, model="m")
    assert "\x1b" not in caught.value.message and "\x07" not in caught.value.message
    assert "boom \\x1b]0;owned\\x07 \\x1b[2J done" in caught.value.message


def test_control_characters_in_a_redirect_are_escaped(llm: FakeLLM) -> None:
    llm.script((302, "", {"Location": "http://elsewhere/\x1b[31mv1"}))
    with pytest.raises(ModelError) as caught:
        make_client(llm).complete(MSG, model="m")
    assert "a redirect to http://elsewhere/\\x1b[31mv1;" in caught.value.message


BIG = "9" * 5000  # past CPython's 4,300-digit limit on reading an int


def test_a_number_of_5000_digits_in_the_json_asked_for_is_no_internal_error(llm: FakeLLM) -> None:
    """json raised a plain ValueError ('Exceeds the limit (4300 digits)'), not the
    JSONDecodeError complete_json catches: 'internal error' from distill. The number
    is read as infinite, and the shape check says what is wrong with it."""
    bad = '{"verdict": ' + BIG + "}"
    llm.script(completion(bad), completion(bad))

    def parse(data: dict[str, object]) -> object:
        if not isinstance(data.get("verdict"), str):
            raise ValueError(f'"verdict" must be a string, got {type(data.get("verdict")).__name__}')
        return data

    with pytest.raises(ModelError) as caught:
        complete_json(make_client(llm), MSG, model="m", parse=parse, what="verdict")
    assert caught.value.message.endswith('"verdict" must be a string, got float')


def test_a_token_count_of_5000_digits_is_estimated(llm: FakeLLM) -> None:
    """The same number in usage made the whole reply unreadable: 'answered HTTP 200
    without a chat completion', of a reply that held one."""
    usage = '"usage": {"prompt_tokens": ' + BIG + "}"
    llm.script((200, '{"choices": [{"message": {"content": "hi"}}], ' + usage + "}"))
    response = make_client(llm).complete(MSG, model="m")
    assert response.content == "hi" and response.usage.estimated
