"""Every numeric setting is checked as the settings load (scarwarden.yaml and the
environment): finite, in its documented range (docs/formats.md#settings), else exit 2
naming the setting and where it came from; an API key an HTTP header cannot carry is
refused naming its variable. Before, a NaN reached recall receipts and ``--json``
(``"act_threshold": NaN``, not JSON) and a ``timeout: -1`` crashed in requests."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fakellm import FakeLLM
from helpers import State

from scarwarden.config import ModelSettings, parse_config
from scarwarden.errors import ConfigError, ExitCode
from scarwarden.repo import MemoryRepo


@pytest.mark.parametrize(
    ("yaml", "message"),
    [
        ("recall:\n  act_threshold: .nan\n", "recall.act_threshold is a confidence between 0 and 1, got nan"),
        ("recall:\n  floor: .nan\n", "recall.floor is a confidence between 0 and 1, got nan"),
        ("recall:\n  floor: 1.5\n", "recall.floor is a confidence between 0 and 1, got 1.5"),
        ("recall:\n  limit: 999999999999999999999\n", "recall.limit must be at most 10000, got 99999"),
        ("model:\n  timeout: -1\n", "model.timeout must be above 0 seconds, got -1.0"),
        ("model:\n  timeout: .nan\n", "model.timeout must be a finite number, got nan"),
        ("model:\n  timeout: 1.0e+12\n", "model.timeout must be at most 86400 seconds"),
        ("model:\n  max_retries: -5\n", "model.max_retries must be at least 0, got -5"),
        ("model:\n  backoff: .inf\n", "model.backoff must be a finite number, got inf"),
        ("distill:\n  token_budget: -1\n", "distill.token_budget must be at least 1, got -1"),
        ("distill:\n  max_context_rules: -1\n", "distill.max_context_rules must be at least 0, got -1"),
        ("answer:\n  qc_max_retakes: -1\n", "answer.qc_max_retakes must be at least 0, got -1"),
        ("media:\n  send_max_side: 15\n", "media.send_max_side must be at least 16, got 15"),
        ("media:\n  max_bytes: 9223372036854775808\n", "media.max_bytes must be at most 9223372036854775807"),
        ('memory_dir: "mem\\x1bory"\n', "memory_dir in scarwarden.yaml holds a control character (U+001B)"),
        ('model:\n  answer_model: "m\\x00"\n', "model.answer_model holds a control character (U+0000)"),
    ],
)
def test_out_of_range_settings_exit_2_naming_the_setting_and_the_file(
    cli, demo_repo: MemoryRepo, yaml: str, message: str
) -> None:
    (demo_repo.root / "scarwarden.yaml").write_text(yaml)
    before = State.of(demo_repo)
    result = cli("recall", "--json", "Draft a LinkedIn post announcing our beta")
    assert result.exit_code == ExitCode.USAGE, result.output
    assert result.stdout == ""
    assert f"error: {message}" in result.stderr
    assert "scarwarden.yaml" in result.stderr and "internal error" not in result.stderr
    assert State.of(demo_repo) == before


def test_no_nan_reaches_recall_json_or_its_receipt(cli, demo_repo: MemoryRepo) -> None:
    (demo_repo.root / "scarwarden.yaml").write_text("recall:\n  act_threshold: .nan\n")
    assert cli("recall", "--json", "Draft a LinkedIn post").exit_code == ExitCode.USAGE
    (demo_repo.root / "scarwarden.yaml").write_text("recall:\n  act_threshold: 0.3\n")
    data = strict_json(cli("recall", "--json", "Draft a LinkedIn post").stdout)
    assert data["verdict"] == "ACT"
    (entry,) = strict_json(cli("log", "--json").stdout)
    assert entry["detail"]["receipt"]["settings"]["act_threshold"] == 0.3


def strict_json(text: str) -> Any:
    """``text`` parsed as JSON proper: ``NaN`` and ``Infinity`` are not JSON."""

    def refuse(name: str) -> None:
        raise AssertionError(f"{name} in JSON output")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize(
    ("var", "value", "message"),
    [
        ("SCARWARDEN_TIMEOUT", "-1", "SCARWARDEN_TIMEOUT (model.timeout) must be above 0 seconds, got -1.0"),
        ("SCARWARDEN_TIMEOUT", "nan", "SCARWARDEN_TIMEOUT (model.timeout) must be a finite number, got nan"),
        ("SCARWARDEN_TIMEOUT", "inf", "SCARWARDEN_TIMEOUT (model.timeout) must be a finite number, got inf"),
        ("SCARWARDEN_MAX_RETRIES", "-5", "SCARWARDEN_MAX_RETRIES (model.max_retries) must be at least 0"),
        ("SCARWARDEN_BASE_URL", "http://h\udcff/v1", "SCARWARDEN_BASE_URL is not valid UTF-8 (the byte 0xFF"),
        ("SCARWARDEN_MODEL_ANSWER", "m\x1b[31m", "SCARWARDEN_MODEL_ANSWER holds a control character (U+001B"),
    ],
)
def test_bad_environment_settings_exit_2_naming_the_variable(
    cli, demo_repo: MemoryRepo, llm: FakeLLM, var: str, value: str, message: str
) -> None:
    env = {"SCARWARDEN_API_KEY": "sk-test", "SCARWARDEN_BASE_URL": llm.url, var: value}
    for args in (("distill",), ("distill", "--dry-run"), ("models", "--test")):
        before = State.of(demo_repo)
        result = cli(*args, env=env)
        assert result.exit_code == ExitCode.USAGE, (args, result.output)
        assert f"error: {message}" in result.stderr, result.stderr
        assert f"hint: fix or unset {var} in the environment" in result.stderr
        assert State.of(demo_repo) == before
    assert llm.requests == []  # refused before anything was sent


@pytest.mark.parametrize(
    ("key", "what"),
    [
        ("sk\udcff", "holds the byte 0xFF, not valid UTF-8, at character 3"),
        ("sk-abc\n", "holds a line break at character 7"),
        ("sk abc", "holds a space at character 3"),
        ("sk-\u00e9", "holds the character U+00E9 at character 4"),
    ],
)
def test_an_api_key_a_header_cannot_carry_is_a_settings_error(
    cli, demo_repo: MemoryRepo, llm: FakeLLM, key: str, what: str
) -> None:
    env = {"SCARWARDEN_API_KEY": key, "SCARWARDEN_BASE_URL": llm.url, "SCARWARDEN_MAX_RETRIES": "0"}
    for args in (("distill",), ("models", "--test")):
        result = cli(*args, env=env)
        assert result.exit_code == ExitCode.USAGE, (args, result.output)
        assert f"error: SCARWARDEN_API_KEY {what}; an API key is printable ASCII" in result.stderr
    assert llm.requests == []


def test_settings_built_in_code_are_checked_too() -> None:
    with pytest.raises(ConfigError, match=r"model\.timeout must be above 0 seconds, got -1"):
        ModelSettings(timeout=-1)
    with pytest.raises(ConfigError, match=r"model\.backoff must be a finite number"):
        ModelSettings(backoff=float("nan"))
    # The edges of each range are accepted.
    config = parse_config(
        {
            "recall": {"act_threshold": 1, "floor": 0, "limit": 10000},
            "model": {"timeout": 86400, "max_retries": 20, "backoff": 0},
            "distill": {"token_budget": 1, "max_context_rules": 0},
            "answer": {"qc_max_retakes": 0},
            "media": {"max_bytes": 1, "send_max_bytes": 1, "send_max_side": 16},
        },
        environ={},
    )
    assert config.recall.limit == 10000 and config.model.timeout == 86400.0
