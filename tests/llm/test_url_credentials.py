"""A ``model.base_url`` holding ``user:password@`` never has its password printed: in
the client's errors, ``scarwarden models`` (text, --json, --test) and answer's hint the
address is shown as ``user:***@host`` (scarwarden.llm.endpoint)."""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest
from fakellm import FakeLLM, completion

from scarwarden.config import ModelSettings
from scarwarden.errors import ConfigError, ModelError, ModelUnreachable, ScarwardenError
from scarwarden.llm.client import ChatClient
from scarwarden.llm.endpoint import shown_url

PASSWORD = "s3cretPW-9f2c"
KEY = "sk-RECOGNISABLE-fake-key-7f3a9c"
MSG = [{"role": "user", "content": "Say hello"}]


def _with_user(url: str) -> str:
    return url.replace("http://", f"http://bob:{PASSWORD}@")


def _client(base_url: str) -> ChatClient:
    return ChatClient(ModelSettings(base_url=base_url, backoff=0.01, max_retries=1, timeout=5.0), KEY)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://bob:s3cret@llm.internal/v1", "https://bob:***@llm.internal/v1"),
        ("https://llm.internal/v1", "https://llm.internal/v1"),
        ("https://tok3n@llm.internal/v1", "https://***@llm.internal/v1"),
        ("bob:s3cret@llm.internal/v1", "bob:***@llm.internal/v1"),
        ("https://bob:s3#cr@t@llm.internal:8443/v1?x=1", "https://bob:***@llm.internal:8443/v1?x=1"),
    ],
)
def test_shown_url_hides_the_password(url: str, shown: str) -> None:
    assert shown_url(url) == shown


def _assert_hidden(exc: ScarwardenError) -> None:
    text = exc.render()
    assert PASSWORD not in text and "bob:***@" in text and KEY not in text


def test_unreachable_server_error_hides_the_password() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = _client(f"http://bob:{PASSWORD}@127.0.0.1:{port}/v1")
    with pytest.raises(ModelUnreachable) as info:
        client.complete(MSG, model="m")
    _assert_hidden(info.value)
    assert PASSWORD not in repr(client)


@pytest.mark.parametrize(
    "reply",
    [
        (401, {"error": {"message": "no"}}),
        (404, {"error": {"message": "no such model"}}),
        (302, {}, {"Location": "http://elsewhere.invalid/v1"}),
    ],
)
def test_http_errors_hide_the_password(llm: FakeLLM, reply: Any) -> None:
    llm.script(reply)
    with pytest.raises(ModelError) as info:
        _client(_with_user(llm.url)).complete(MSG, model="m")
    _assert_hidden(info.value)


def test_a_base_url_that_is_no_url_hides_the_password() -> None:
    with pytest.raises(ConfigError) as info:
        _client(f"bob:{PASSWORD}@localhost:11434/v1").complete(MSG, model="m")
    _assert_hidden(info.value)


def test_models_hides_the_password(cli: Any, llm: FakeLLM) -> None:
    env = {"SCARWARDEN_BASE_URL": _with_user(llm.url), "SCARWARDEN_API_KEY": KEY}
    listed = cli("models", env=env)
    assert listed.exit_code == 0 and PASSWORD not in listed.output and "bob:***@" in listed.output
    as_json = cli("models", "--json", env=env)
    assert json.loads(as_json.stdout)["configured"]["base_url"] == shown_url(_with_user(llm.url))
    llm.models = ["qwen3.6-flash", "qwen3.7-plus", "qwen3-vl-plus"]
    for args in (("models", "--test"), ("models", "--test", "--json")):
        tested = cli(*args, env=env)
        assert PASSWORD not in tested.output and "bob:***@" in tested.output, tested.output


def test_models_test_failing_hides_the_password(cli: Any, llm: FakeLLM) -> None:
    llm.key = "another-key"  # 401 on the listing
    env = {"SCARWARDEN_BASE_URL": _with_user(llm.url), "SCARWARDEN_API_KEY": KEY}
    for args in (("models", "--test"), ("models", "--test", "--json")):
        tested = cli(*args, env=env)
        assert tested.exit_code == 5 and PASSWORD not in tested.output + tested.stderr


def test_answer_hint_without_a_key_hides_the_password(cli: Any) -> None:
    env = {"SCARWARDEN_BASE_URL": f"https://bob:{PASSWORD}@llm.internal/v1"}
    result = cli("answer", "Draft a LinkedIn post announcing our beta", "--no-memory", env=env)
    assert result.exit_code == 4
    assert PASSWORD not in result.output + result.stderr and "bob:***@" in result.stderr


def test_answer_through_the_fake_server_never_prints_the_password(cli: Any, llm: FakeLLM) -> None:
    llm.script(completion("Hello"), completion("Hello"))
    env = {"SCARWARDEN_BASE_URL": _with_user(llm.url), "SCARWARDEN_API_KEY": KEY}
    result = cli("answer", "Draft a LinkedIn post announcing our beta", "--json", env=env)
    assert result.exit_code == 0 and PASSWORD not in result.output + result.stderr


def test_a_mistyped_base_url_setting_hides_the_password(cli: Any) -> None:
    """scarwarden.yaml's ``model.base_url`` given as a list: the settings check quoted the
    value whole, ``must be str, got list (['https://bob:<password>@h/v1'])``."""
    root = cli.root
    (root / "scarwarden.yaml").write_text(f"model:\n  base_url: ['https://bob:{PASSWORD}@llm.internal/v1']\n")
    result = cli("models")
    assert result.exit_code == 2, result.output
    assert "model.base_url must be str, got list" in result.output
    assert PASSWORD not in result.output and "bob:***@llm.internal" in result.output
