"""``rule add`` run twice with the same text (a retried command, an agent's double call)
committed a second rule saying exactly what an active rule says, under a new ID: recall
then showed the rule twice. It is refused (exit 1), naming the rule that says it, and
nothing is written or committed."""

from __future__ import annotations

import pytest
from conftest import Cli, git

from scarwarden.repo import MemoryRepo

CITED = "ep-hkgnqdz88f"  # an episode of the demo ledger
TEXT = "Test every draft twice before it ships."


def _state(repo: MemoryRepo) -> tuple[str, str, bytes]:
    return (
        git(repo.root, "rev-parse", "HEAD").stdout,
        git(repo.root, "status", "--porcelain").stdout,
        repo.playbook_path.read_bytes(),
    )


@pytest.mark.parametrize("again", [TEXT, "  Test every draft  twice\nbefore it ships. ", TEXT + "\n"])
@pytest.mark.parametrize("commit", [[], ["--no-commit"]])
def test_a_rule_saying_what_an_active_rule_says_is_refused(
    cli: Cli, demo_repo: MemoryRepo, again: str, commit: list[str]
) -> None:
    first = cli("rule", "add", "--text", TEXT, "--cites", CITED, "--json")
    assert first.exit_code == 0, first.output
    rule_id = first.stdout.split('"id": "')[1].split('"')[0]
    before = _state(demo_repo)
    result = cli("rule", "add", "--text", again, "--cites", CITED, "--tag", "drafts", *commit)
    assert result.exit_code == 1, result.output
    assert f"{rule_id} already says this" in result.stderr, result.stderr
    assert f"scarwarden rule show {rule_id}" in result.stderr
    assert _state(demo_repo) == before
    assert cli("rule", "list", "--json").stdout.count(TEXT) == 1


def test_other_text_is_still_added(cli: Cli, demo_repo: MemoryRepo) -> None:
    assert cli("rule", "add", "--text", TEXT, "--cites", CITED).exit_code == 0
    other = cli("rule", "add", "--text", "Test every draft once more.", "--cites", CITED)
    assert other.exit_code == 0, other.output
