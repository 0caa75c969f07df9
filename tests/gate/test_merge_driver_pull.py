"""The playbook merge driver under ``git pull`` (two clones of a real bare remote), and
``hooks uninstall`` taking it away again (issue 15)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Cli, git

from scarwarden.files import playbook as pb
from scarwarden.gate.check import check_all
from scarwarden.repo import MemoryRepo, open_repo

CITED = "ep-9ak5fm33w3"


def _clone(remote: Path, where: Path) -> MemoryRepo:
    git(where.parent, "clone", "-q", str(remote), str(where))
    assert Cli(where)("hooks", "install").exit_code == 0
    return open_repo(where)


def _add_rule(repo: MemoryRepo, text: str) -> str:
    added = Cli(repo.root)("rule", "add", "--text", text, "--tag", "pull", "--cites", CITED)
    assert added.exit_code == 0, added.output
    return added.stdout.strip()


@pytest.mark.parametrize("mode", ["--no-rebase", "--rebase"])
def test_git_pull_merges_the_playbook_rule_by_rule(demo_repo: MemoryRepo, tmp_path: Path, mode: str) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(demo_repo.root, "push", "-q", str(remote), "HEAD:main")
    alice, bob = _clone(remote, tmp_path / "alice"), _clone(remote, tmp_path / "bob")
    ours = _add_rule(alice, "Always confirm the invoice owner before paying.")
    git(alice.root, "push", "-q", "origin", "HEAD:main")
    theirs = _add_rule(bob, "Never schedule a launch on a Friday afternoon.")
    # Both appended a rule at the same place: git's line merge would stop here.
    proc = git(bob.root, "pull", "-q", mode, "origin", "main", check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = bob.playbook_path.read_text()
    assert "<<<<<<<" not in text
    book = pb.parse(text)
    assert {ours, theirs} <= {rule.id for rule in book.rules}
    assert pb.render(book) == text  # canonical
    assert check_all(bob).ok
    assert git(bob.root, "status", "--porcelain").stdout == ""


def test_hooks_uninstall_removes_the_merge_driver_and_says_so(demo_repo: MemoryRepo, cli: Cli) -> None:
    root = demo_repo.root
    attributes = root / ".git" / "info" / "attributes"
    attributes.parent.mkdir(parents=True, exist_ok=True)
    attributes.write_text("*.png binary\n")  # someone else's line stays
    assert cli("hooks", "install").exit_code == 0
    assert "merge=scarwarden" in attributes.read_text()
    result = cli("hooks", "uninstall")
    assert result.exit_code == 0, result.output
    assert "Removed the playbook merge driver: '/memory/playbook.md merge=scarwarden'" in result.stdout
    assert "Removed the playbook merge driver: merge.scarwarden from the git config" in result.stdout
    assert attributes.read_text() == "*.png binary\n"
    assert git(root, "config", "--get-regexp", "^merge\\.scarwarden", check=False).stdout == ""
    again = cli("hooks", "uninstall", "--json")
    assert again.exit_code == 0 and '"merge_driver": []' in again.stdout
