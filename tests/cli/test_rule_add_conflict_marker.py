"""A rule text holding a merge-conflict start line ('<<<<<<< ...') would leave a
playbook that no longer parses: ``rule add --no-commit`` (no gate runs) staged one and
every command reading the playbook failed. It is refused before anything is written."""

from __future__ import annotations

import pytest
from conftest import Cli, git

from scarwarden.repo import MemoryRepo

CITED = "ep-hkgnqdz88f"  # an episode of the demo ledger


@pytest.mark.parametrize("marker", ["<<<<<<< HEAD", "<<<<<<<"])
@pytest.mark.parametrize("commit", [[], ["--no-commit"]])
def test_a_conflict_marker_line_is_refused(
    cli: Cli, demo_repo: MemoryRepo, marker: str, commit: list[str]
) -> None:
    before = git(demo_repo.root, "rev-parse", "HEAD").stdout, demo_repo.playbook_path.read_bytes()
    result = cli("rule", "add", "--text", f"Resolve conflicts.\n{marker}\nours", "--cites", CITED, *commit)
    assert result.exit_code == 1, result.output
    assert "merge-conflict marker line" in result.stderr, result.stderr
    assert git(demo_repo.root, "status", "--porcelain").stdout == ""
    assert (git(demo_repo.root, "rev-parse", "HEAD").stdout, demo_repo.playbook_path.read_bytes()) == before
    assert cli("rule", "list").exit_code == 0


def test_markers_inside_a_line_are_text(cli: Cli) -> None:
    result = cli("rule", "add", "--text", "Never leave <<<<<<< markers in a file.", "--cites", CITED)
    assert result.exit_code == 0, result.output
    assert cli("rule", "list").exit_code == 0
