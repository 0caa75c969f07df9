"""Provider presets in scarwarden.yaml and ``scarwarden models`` (--test against a real
local server speaking the chat completions API: tests/fakellm.py)."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from fakellm import FakeLLM, completion, dripped_headers

from scarwarden.config import parse_config
from scarwarden.errors import ConfigError
from scarwarden.llm.client import client_from_config
from scarwarden.repo import MemoryRepo


def test_a_preset_fills_endpoint_models_and_key_variable() -> None:
    config = parse_config({"model": {"provider": "openai"}}, environ={})
    assert config.model.base_url == "https://api.openai.com/v1"
    assert (config.model.distill_model, config.model.answer_model) == ("gpt-4.1-mini", "gpt-4.1")
    assert config.key_env() == "OPENAI_API_KEY"
    assert config.api_key({"OPENAI_API_KEY": "sk-o"}) == "sk-o"
    # Another provider's key is never sent to this one.
    assert config.api_key({"DASHSCOPE_API_KEY": "sk-d"}) is None
    assert config.api_key({"SCARWARDEN_API_KEY": "sk-s", "OPENAI_API_KEY": "sk-o"}) == "sk-s"


def test_explicit_settings_and_the_environment_win_over_the_preset() -> None:
    config = parse_config(
        {"model": {"provider": "ollama", "answer_model": "llama3.3"}},
        environ={"SCARWARDEN_BASE_URL": "http://gpu-box:11434/v1"},
    )
    assert config.model.base_url == "http://gpu-box:11434/v1"
    assert config.model.answer_model == "llama3.3" and config.model.distill_model == "qwen3:8b"
    env_only = parse_config({}, environ={"SCARWARDEN_PROVIDER": "vllm"})
    assert env_only.model.base_url == "http://localhost:8000/v1"


def test_no_preset_keeps_the_dashscope_defaults() -> None:
    config = parse_config({}, environ={})
    assert config.model.provider == "" and "dashscope" in config.model.base_url
    assert config.api_key({"DASHSCOPE_API_KEY": "sk-d"}) == "sk-d"


def test_an_unknown_preset_is_a_config_error_with_the_closest_name() -> None:
    with pytest.raises(ConfigError) as info:
        parse_config({"model": {"provider": "olama"}}, environ={})
    assert info.value.message == "unknown model.provider 'olama' in scarwarden.yaml"
    assert "did you mean 'ollama'?" in (info.value.hint or "")


def test_an_unknown_preset_from_the_environment_names_the_variable(cli: Any) -> None:
    """Not "in defaults": the variable, its value, and every preset (issue 18)."""
    with pytest.raises(ConfigError) as info:
        parse_config({"model": {"provider": "openai"}}, environ={"SCARWARDEN_PROVIDER": "open-ai"})
    assert info.value.message == "unknown SCARWARDEN_PROVIDER='open-ai' in the environment"
    hint = info.value.hint or ""
    assert "did you mean 'openai'?" in hint and "unset SCARWARDEN_PROVIDER" in hint
    for name in ("dashscope", "openai", "openrouter", "deepseek", "ollama", "vllm", "lmstudio"):
        assert name in hint
    result = cli("models", env={"SCARWARDEN_PROVIDER": "nope"})
    assert result.exit_code == 2
    assert "unknown SCARWARDEN_PROVIDER='nope' in the environment" in result.stderr
    assert "known presets: dashscope, openai" in result.stderr and "defaults" not in result.stderr


def test_a_local_preset_is_a_model_without_a_key(llm: FakeLLM) -> None:
    config = parse_config({"model": {"provider": "ollama", "base_url": llm.url}}, environ={})
    client = client_from_config(config, {})
    assert client is not None
    llm.script(completion("hello"))
    assert client.complete([{"role": "user", "content": "hi"}], model="qwen3:8b").content == "hello"
    assert "Authorization" not in llm.requests[0]["headers"]  # no key, no header


def _write_settings(repo: MemoryRepo, text: str) -> None:
    (repo.root / "scarwarden.yaml").write_text(text)


def test_models_lists_presets_and_what_is_configured(cli: Any, demo_repo: MemoryRepo) -> None:
    _write_settings(demo_repo, "model:\n  provider: openrouter\n")
    result = cli("models")
    assert result.exit_code == 0
    assert "provider       openrouter" in result.stdout
    assert "base_url       https://openrouter.ai/api/v1" in result.stdout
    assert "SCARWARDEN_API_KEY or OPENROUTER_API_KEY: NOT SET" in result.stdout
    assert " *openrouter" in result.stdout and "  ollama" in result.stdout
    data = json.loads(cli("models", "--json").stdout)
    assert data["configured"]["key_variable"] == "OPENROUTER_API_KEY"
    assert {p["name"] for p in data["presets"]} >= {"openai", "ollama", "vllm", "dashscope", "openrouter"}


def _point_at(repo: MemoryRepo, llm: FakeLLM, provider: str = "openai") -> None:
    _write_settings(repo, f"model:\n  provider: {provider}\n  base_url: {llm.url}\n")


def test_models_test_all_good(cli: Any, demo_repo: MemoryRepo, llm: FakeLLM) -> None:
    _point_at(demo_repo, llm)
    llm.key, llm.models = "sk-good", ["gpt-4.1", "gpt-4.1-mini", "o3"]
    result = cli("models", "--test", env={"OPENAI_API_KEY": "sk-good"})
    assert result.exit_code == 0, result.output
    assert "ok   reachable" in result.stdout and "ok   key" in result.stdout
    assert "ok   model.answer_model   gpt-4.1 is served" in result.stdout
    assert llm.requests[0]["headers"]["Authorization"] == "Bearer sk-good"


def test_models_test_bad_key_is_exit_5_and_never_shows_the_key(
    cli: Any, demo_repo: MemoryRepo, llm: FakeLLM
) -> None:
    _point_at(demo_repo, llm)
    llm.key, llm.models = "sk-good", ["gpt-4.1"]
    result = cli("models", "--test", "--json", env={"OPENAI_API_KEY": "sk-wrong-secret"})
    assert result.exit_code == 5
    data = json.loads(result.stdout)
    assert [(c["check"], c["ok"]) for c in data["checks"]] == [("reachable", True), ("key", False)]
    assert "refused (HTTP 401)" in data["checks"][1]["detail"]
    assert "sk-wrong-secret" not in result.output


def test_models_test_missing_model_is_exit_5(cli: Any, demo_repo: MemoryRepo, llm: FakeLLM) -> None:
    _point_at(demo_repo, llm)
    llm.models = ["gpt-4.1"]
    result = cli("models", "--test", env={"OPENAI_API_KEY": "sk-any"})
    assert result.exit_code == 5
    assert "FAIL model.distill_model" in result.stdout
    assert "gpt-4.1-mini is not among the 1 models the server lists" in result.stdout
    assert "error: the model server check failed: model.distill_model" in result.stderr


def test_models_test_without_a_listing_asks_one_token(cli: Any, demo_repo: MemoryRepo, llm: FakeLLM) -> None:
    _point_at(demo_repo, llm, provider="vllm")
    llm.script(completion("p"), (404, {"error": {"message": "model not found"}}))
    result = cli("models", "--test")
    assert result.exit_code == 5, result.output
    assert "key                  none needed (a local server)" in result.stdout
    assert "Qwen/Qwen3-8B answered a one-token completion" in result.stdout
    assert "HTTP 404, the server does not serve it" in result.stdout
    posts = [r for r in llm.requests if r["body"] is not None]
    # distill, answer, then the vision model (issue 19; the script is exhausted: HTTP 500).
    assert [b["body"]["max_tokens"] for b in posts] == [1, 1, 1]
    assert posts[2]["body"]["model"] == "Qwen/Qwen2.5-VL-7B-Instruct"


def test_models_test_a_busy_server_is_exit_3(cli: Any, demo_repo: MemoryRepo, llm: FakeLLM) -> None:
    # HTTP 429 or 5xx is the server's trouble, not a missing model (exit 5 said so).
    _point_at(demo_repo, llm, provider="vllm")
    for status in (429, 503):
        llm.script(*[(status, {"error": {"message": "overloaded"}})] * 3)
        result = cli("models", "--test")
        assert result.exit_code == 3, result.output
        assert f"HTTP {status}, the server is busy or failing: test again later" in result.stdout


def test_models_test_no_key_is_exit_4_and_unreachable_is_exit_3(
    cli: Any, demo_repo: MemoryRepo, llm: FakeLLM
) -> None:
    _point_at(demo_repo, llm)
    no_key = cli("models", "--test")
    assert no_key.exit_code == 4
    assert "not set: export SCARWARDEN_API_KEY or OPENAI_API_KEY" in no_key.stdout
    _write_settings(demo_repo, "model:\n  provider: ollama\n  base_url: http://127.0.0.1:9/v1\n")
    down = cli("models", "--test")
    assert down.exit_code == 3
    assert "FAIL reachable" in down.stdout and "cannot connect" in down.stdout


@pytest.mark.parametrize(
    ("provider", "vision"),
    [
        ("ollama", "qwen2.5vl:7b"),
        ("vllm", "Qwen/Qwen2.5-VL-7B-Instruct"),
        ("lmstudio", "qwen2.5-vl-7b-instruct"),
        ("openai", "gpt-4.1-mini"),
        ("deepseek", ""),  # DeepSeek's API reads text only: no vision model, not a wrong one
    ],
)
def test_every_preset_names_its_vision_model(provider: str, vision: str) -> None:
    assert parse_config({"model": {"provider": provider}}, environ={}).model.vision_model == vision
    env = {"SCARWARDEN_MODEL_VISION": "my-vl"}
    assert parse_config({"model": {"provider": provider}}, environ=env).model.vision_model == "my-vl"


def test_models_shows_the_vision_role(cli: Any, demo_repo: MemoryRepo) -> None:
    _write_settings(demo_repo, "model:\n  provider: ollama\n")
    result = cli("models")
    assert "vision_model   qwen2.5vl:7b" in result.stdout
    assert "distill qwen3:8b, answer qwen3:8b, vision qwen2.5vl:7b" in result.stdout
    assert "distill deepseek-chat, answer deepseek-chat, vision none" in result.stdout
    data = json.loads(cli("models", "--json").stdout)
    assert data["configured"]["vision_model"] == "qwen2.5vl:7b"
    assert {p["name"]: p["vision_model"] for p in data["presets"]}["deepseek"] is None
    _write_settings(demo_repo, "model:\n  provider: deepseek\n")
    assert "vision_model   (none: audit-image lists the rules and judges no image)" in cli("models").stdout


def test_models_test_warns_when_the_vision_model_is_not_served(
    cli: Any, demo_repo: MemoryRepo, llm: FakeLLM
) -> None:
    _point_at(demo_repo, llm, provider="ollama")
    llm.models = ["qwen3:8b"]
    result = cli("models", "--test", "--json")
    assert result.exit_code == 0, result.output  # distill and answer work: images are optional
    vision = json.loads(result.stdout)["checks"][-1]
    assert vision["check"] == "model.vision_model" and vision["ok"] is None
    assert "qwen2.5vl:7b is not among" in vision["detail"] and "only audit-image" in vision["detail"]
    assert "warn model.vision_model" in cli("models", "--test").stdout
    llm.models = ["qwen3:8b", "qwen2.5vl:7b"]
    assert "ok   model.vision_model   qwen2.5vl:7b is served" in cli("models", "--test").stdout


def test_models_needs_no_memory_yet(git_repo: Any, make_cli: Any) -> None:
    """The model can be set up before 'scarwarden init' (issue 18)."""
    (git_repo / "scarwarden.yaml").write_text("model:\n  provider: ollama\n")
    result = make_cli(git_repo)("models", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["configured"]["provider"] == "ollama"


def test_models_test_a_redirect_fails_as_distill_would(cli: Any, demo_repo: MemoryRepo, llm: FakeLLM) -> None:
    """A server redirecting elsewhere: the test followed it (the key left behind) and
    passed on the other host's listing, exit 0, while distill and answer, which follow
    no redirect, fail there. It now fails the same way, naming where it points."""
    with FakeLLM() as elsewhere:
        elsewhere.models = ["gpt-4.1", "gpt-4.1-mini"]
        target = elsewhere.url.replace("127.0.0.1", "localhost") + "/models"

        class Redirect(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                self.send_response(302)
                self.send_header("Location", target)
                self.send_header("Content-Length", "0")
                self.end_headers()

        server = ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
        # shutdown() waits for the next poll: 0.5 s by default
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()
        try:
            _write_settings(
                demo_repo,
                f"model:\n  provider: openai\n  base_url: http://127.0.0.1:{server.server_port}/v1\n",
            )
            result = cli("models", "--test", "--json", env={"OPENAI_API_KEY": "sk-good"})
        finally:
            server.shutdown()
            server.server_close()
        assert elsewhere.requests == []
    assert result.exit_code == 5, result.output
    checks = json.loads(result.stdout)["checks"]
    assert checks[-1]["check"] == "base_url" and checks[-1]["ok"] is False
    assert f"HTTP 302, a redirect to {target}" in checks[-1]["detail"]


def test_models_test_headers_dripped_past_the_timeout_are_unreachable(
    cli: Any, demo_repo: MemoryRepo
) -> None:
    """GET /models with the headers sent a line now and then, each within the timeout:
    the test lasted until http.client gave up at 100 headers (20 s with timeout 1 s, 8 s
    here at a line every 0.08 s; with a slower drip, up to 25 minutes at the probe's
    15 s), then 'cannot connect'."""
    started = time.monotonic()
    with dripped_headers() as url:
        _write_settings(demo_repo, f"model:\n  provider: openai\n  base_url: {url}\n  timeout: 0.4\n")
        result = cli("models", "--test", "--json", env={"OPENAI_API_KEY": "sk-good"})
    assert time.monotonic() - started < 4
    assert result.exit_code == 3, result.output
    assert json.loads(result.stdout)["checks"] == [
        {"check": "reachable", "ok": False, "detail": "no answer within 0.4 s"}
    ]
