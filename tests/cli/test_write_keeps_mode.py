"""A file Scarwarden rewrites (by a temporary file and a rename) keeps its mode: a
read-only (0444) export target or playbook stays read-only, an executable bit stays."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from conftest import Cli, git

from scarwarden.repo import MemoryRepo

CITED = "ep-hkgnqdz88f"  # an episode of the demo ledger


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("mode", [0o444, 0o600, 0o755])
def test_export_and_rule_add_keep_the_modes(cli: Cli, demo_repo: MemoryRepo, mode: int) -> None:
    root = demo_repo.root
    assert cli("export", "agents-md", "claude-md", "--commit").exit_code == 0
    for name in ("AGENTS.md", "CLAUDE.md", "memory/playbook.md"):
        (root / name).chmod(mode)
    git(root, "commit", "-q", "--allow-empty", "-am", "modes")
    added = cli("rule", "add", "--text", "Test twice.", "--cites", CITED)
    assert added.exit_code == 0, added.output
    assert _mode(root / "memory/playbook.md") == mode
    assert cli("export", "agents-md", "--commit").exit_code == 0  # a commit
    assert cli("export", "claude-md").exit_code == 0  # written only
    for name in ("AGENTS.md", "CLAUDE.md"):
        assert "Test twice." in (root / name).read_text()
    assert [_mode(root / n) for n in ("AGENTS.md", "CLAUDE.md")] == [mode, mode]
    git(root, "add", "CLAUDE.md")
    assert "mode" not in git(root, "diff", "--cached", "--summary").stdout  # git sees no mode change


def test_init_keeps_the_mode_of_gitignore(git_repo: Path, make_cli: type[Cli]) -> None:
    (git_repo / ".gitignore").write_text("*.pyc\n")
    (git_repo / ".gitignore").chmod(0o444)
    assert make_cli(git_repo)("init", "--no-hooks").exit_code == 0
    assert (git_repo / ".gitignore").read_text() == "*.pyc\n.scarwarden/\n"
    assert _mode(git_repo / ".gitignore") == 0o444


def test_a_new_file_gets_the_umask_mode(cli: Cli, demo_repo: MemoryRepo) -> None:
    import os

    old = os.umask(0o027)
    try:
        assert cli("export", "gemini-md").exit_code == 0
    finally:
        os.umask(old)
    assert _mode(demo_repo.root / "GEMINI.md") == 0o640
