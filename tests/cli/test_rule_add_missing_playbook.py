"""``rule add --no-commit`` where the playbook was deleted from the working tree (but
HEAD has it) staged a playbook of the new rule alone, dropping every rule the last
commit holds. It is refused (exit 2, nothing written), as ``init`` refuses a memory
missing from the working tree; a memory that never had a playbook still gets one."""

from __future__ import annotations

import pytest
from conftest import Cli, git

from scarwarden.repo import MemoryRepo

CITED = "ep-hkgnqdz88f"  # an episode of the demo ledger


def _state(repo: MemoryRepo) -> tuple[str, str]:
    return git(repo.root, "rev-parse", "HEAD").stdout, git(repo.root, "status", "--porcelain").stdout


@pytest.mark.parametrize("commit", [[], ["--no-commit"]])
def test_a_deleted_playbook_is_not_replaced_by_the_new_rule_alone(
    cli: Cli, demo_repo: MemoryRepo, commit: list[str]
) -> None:
    demo_repo.playbook_path.unlink()
    before = _state(demo_repo)
    result = cli("rule", "add", "--text", "Test twice.", "--cites", CITED, *commit)
    assert result.exit_code == 2, result.output
    assert not demo_repo.playbook_path.exists()
    assert _state(demo_repo) == before
    assert "memory/playbook.md is missing from the working tree" in result.stderr, result.stderr
    assert "git restore" in result.stderr


def test_a_memory_without_a_playbook_gets_one(cli: Cli, demo_repo: MemoryRepo) -> None:
    git(demo_repo.root, "rm", "-q", demo_repo.playbook_rel)
    git(demo_repo.root, "commit", "-q", "-m", "no playbook")
    result = cli("rule", "add", "--text", "Test twice.", "--cites", CITED)
    assert result.exit_code == 0, result.output
    assert "Test twice." in demo_repo.playbook_path.read_text()
