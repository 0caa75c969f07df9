"""A message quotes a value by its start, never whole: a 60,000-character ``refs`` item,
``rules_applied`` item, ``source``, ``at``, ``id``, unknown key or non-text ``tags`` item
gave an error of ~60 KB (the validator quoted the whole value), at every door that
reaches the validator (``episode add --file -``, the Python API, the function tools, the
gate reading a committed file). Now the message quotes the first characters, says how
long the value was, and still names the field."""

from __future__ import annotations

import json

import pytest
from conftest import Cli, git
from helpers import write_episode

from scarwarden.agents.functions import MemoryFunctions
from scarwarden.api import Memory
from scarwarden.errors import ValidationError
from scarwarden.repo import MemoryRepo

BIG = "x" * 60_000
BASE = {"task": "t", "outcome": "o"}
CASES = {
    "refs": {"refs": [BIG]},
    "rules_applied": {"rules_applied": [BIG]},
    "source": {"source": BIG},
    "at": {"at": BIG},
    "id": {"id": BIG},
    "xxxxxxxxxx": {BIG: "an unknown key"},
    "tags": {"tags": [[BIG]]},
    "attachments": {"attachments": [BIG]},
}


def _state(repo: MemoryRepo) -> tuple[str, str]:
    return git(repo.root, "status", "--porcelain").stdout, git(repo.root, "rev-parse", "HEAD").stdout


@pytest.mark.parametrize("field", CASES)
def test_a_long_value_is_quoted_by_its_start(cli: Cli, demo_repo: MemoryRepo, field: str) -> None:
    before = _state(demo_repo)
    result = cli("episode", "add", "--file", "-", input=json.dumps({**BASE, **CASES[field]}))
    assert result.exit_code == 1, result.output[-300:]
    assert "nothing was written" in result.stderr
    assert len(result.stderr) < 1000, result.stderr[:1000]
    assert f"field '{field}" in result.stderr
    assert "characters" in result.stderr, "the message says how long the value was"
    assert "Traceback" not in result.output
    assert _state(demo_repo) == before


def test_the_api_the_tools_and_the_gate_quote_a_long_value_by_its_start(
    cli: Cli, demo_repo: MemoryRepo
) -> None:
    memory = Memory(demo_repo)
    with pytest.raises(ValidationError) as raised:
        memory.record("t", outcome="o", refs=[BIG])
    assert "field 'refs'" in str(raised.value) and len(str(raised.value)) < 1000
    answer = MemoryFunctions(memory).call("record_episode", {**BASE, "refs": [BIG]})
    assert "refs" in answer["error"] and len(answer["error"]) < 1000, answer["error"][:1000]
    write_episode(demo_repo, "ep-longrefs01", refs=[BIG[:30_000]], tags=["A" + BIG[:30_000]])
    git(demo_repo.root, "add", "-A")
    git(demo_repo.root, "commit", "-qm", "a long ref", "--no-verify")
    result = cli("check", "--all")
    assert result.exit_code == 1, result.output[-300:]
    assert "field 'refs'" in result.output and "field 'tags'" in result.output
    assert len(result.output) < 2000, result.output[:2000]


def test_rule_list_quotes_a_long_tag_by_its_start(cli: Cli) -> None:
    """``rule list --tag`` with a 100,000-character tag printed it whole in "no rule has
    the tag"; now its start and its length."""
    result = cli("rule", "list", "--tag", "t" * 100_000)
    assert "has the tag 'tttt" in result.stderr
    assert "100,000 characters" in result.stderr
    assert len(result.output) < 1000


RECEIPT = {
    "receipt": "0" * 64,
    "algorithm": 1,
    "playbook": "0" * 40,
    "task": "t",
    "settings": {},
    "verdict": "ACT",
    "rules": [],
}
BLOCKS = {
    "recalled-key": {"recalled": {**RECEIPT, BIG: 1}},
    "recalled-receipt": {"recalled": {**RECEIPT, "receipt": BIG}},
    "recalled-algorithm": {"recalled": {**RECEIPT, "algorithm": BIG}},
    "recalled-playbook": {"recalled": {**RECEIPT, "playbook": BIG}},
    "recalled-ledger": {"recalled": {**RECEIPT, "ledger": BIG}},
    "recalled-verdict": {"recalled": {**RECEIPT, "verdict": BIG}},
    "recalled-settings": {
        "recalled": {
            **RECEIPT,
            "settings": {"act_threshold": BIG, "floor": 0, "act_tag_hits": 1, "limit": BIG},
        }
    },
    "redacted-key": {"redacted": {BIG: 1}},
}


@pytest.mark.parametrize("case", BLOCKS)
def test_a_long_value_in_a_receipt_or_a_redaction_is_quoted_by_its_start(
    cli: Cli, demo_repo: MemoryRepo, case: str
) -> None:
    """The ``recalled:`` and ``redacted:`` blocks are checked by their own modules, which
    quoted an unknown key or a bad value whole, too."""
    before = _state(demo_repo)
    result = cli("episode", "add", "--file", "-", input=json.dumps({**BASE, **BLOCKS[case]}))
    assert result.exit_code == 1, result.output[-300:]
    assert f"field '{case.split('-')[0]}'" in result.stderr
    assert len(result.stderr) < 2000, result.stderr[:2000]
    assert "60,000 characters" in result.stderr, result.stderr
    assert _state(demo_repo) == before
