"""Which key goes to which server (issue 28, point 1): the provider follows the key that is
set when nothing else names one; a key is never sent to a server it does not belong to;
a test of a key that is not there opens no connection and exits 4."""

from __future__ import annotations

import json
from typing import Any

from fakellm import FakeLLM

from scarwarden.config import parse_config
from scarwarden.llm.client import client_from_config
from scarwarden.repo import MemoryRepo


def test_a_providers_own_key_picks_that_provider_when_none_is_set() -> None:
    env = {"OPENAI_API_KEY": "sk-o"}
    config = parse_config({}, environ=env)
    assert config.model.provider == "openai" and config.provider_from == "OPENAI_API_KEY"
    assert config.model.base_url == "https://api.openai.com/v1"
    assert config.api_key(env) == "sk-o"
    # DashScope stays the default: its key wins when both are there.
    both = {"DASHSCOPE_API_KEY": "sk-d", "OPENAI_API_KEY": "sk-o"}
    config = parse_config({}, environ=both)
    assert config.model.provider == "dashscope" and config.api_key(both) == "sk-d"
    # A provider named in the settings is never overridden by a key.
    named = parse_config({"model": {"provider": "deepseek"}}, environ=env)
    assert named.model.provider == "deepseek" and named.api_key(env) is None


def test_a_bare_general_key_is_sent_nowhere_and_says_why() -> None:
    env = {"SCARWARDEN_API_KEY": "sk-general"}
    config = parse_config({}, environ=env)
    assert "dashscope" in config.model.base_url
    assert config.api_key(env) is None and client_from_config(config, env) is None
    assert "SCARWARDEN_PROVIDER" in (config.stray_key(env) or "")
    assert "SCARWARDEN_BASE_URL" in (config.stray_key(env) or "")
    # With a provider key beside it, the provider's own key is the one sent.
    env = {"SCARWARDEN_API_KEY": "sk-general", "OPENAI_API_KEY": "sk-o"}
    assert parse_config({}, environ=env).api_key(env) == "sk-o"
    # Naming the server makes the general key usable.
    env = {"SCARWARDEN_API_KEY": "sk-general", "SCARWARDEN_BASE_URL": "http://localhost:8000/v1"}
    config = parse_config({}, environ=env)
    assert config.api_key(env) == "sk-general" and config.stray_key(env) is None


def test_models_shows_the_key_that_is_set(cli: Any) -> None:
    result = cli("models", env={"OPENAI_API_KEY": "sk-o"})
    assert result.exit_code == 0
    assert "provider       openai  (chosen by OPENAI_API_KEY" in result.stdout
    assert "key            OPENAI_API_KEY: set" in result.stdout
    stray = cli("models", "--json", env={"SCARWARDEN_API_KEY": "sk-general"})
    data = json.loads(stray.stdout)["configured"]
    assert data["key_set"] is False and "not sent anywhere" in data["key_problem"]
    assert "sk-general" not in stray.output


def test_testing_a_missing_key_opens_no_connection(cli: Any, demo_repo: MemoryRepo, llm: FakeLLM) -> None:
    (demo_repo.root / "scarwarden.yaml").write_text(f"model:\n  base_url: {llm.url}\n")
    result = cli("models", "--test")
    assert result.exit_code == 4, result.output
    assert (
        "FAIL key" in result.stdout
        and "not set: export SCARWARDEN_API_KEY or DASHSCOPE_API_KEY" in result.stdout
    )
    assert llm.requests == []  # the server heard nothing
    assert "reachable" not in result.stdout


def test_nothing_configured_and_no_key_exits_4_without_the_network(cli: Any) -> None:
    """docs/models.md: 4 no key (was 3: DashScope, the default, was contacted first)."""
    result = cli("models", "--test", env={"SCARWARDEN_API_KEY": "sk-general"})
    assert result.exit_code == 4, result.output
    assert "not set: export DASHSCOPE_API_KEY" in result.stdout
    assert "not sent anywhere" in result.stdout and "sk-general" not in result.output


def test_the_no_model_hint_says_which_key_works(cli: Any, demo_repo: MemoryRepo) -> None:
    result = cli("answer", "Draft a LinkedIn post announcing our beta")
    assert result.exit_code == 0
    assert "set DASHSCOPE_API_KEY (or OPENAI_API_KEY" in result.stderr
    assert "SCARWARDEN_API_KEY once a provider or base URL is set" in result.stderr
    (demo_repo.root / "scarwarden.yaml").write_text("model:\n  provider: openai\n")
    named = cli("answer", "Draft a LinkedIn post announcing our beta")
    assert "set SCARWARDEN_API_KEY (or OPENAI_API_KEY) to use gpt-4.1" in named.stderr
