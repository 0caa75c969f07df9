"""``export --commit`` commits the file's mode as HEAD holds it: a ``chmod`` the user did
not stage stays an unstaged change in the working tree, one the user staged stays
staged, as the user's edits outside the markers do (the section is the only change)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Cli, git

from scarwarden.repo import MemoryRepo

EP = "ep-hkgnqdz88f"  # a committed demo episode
DRAFT = b"\nMy draft note, not ready to commit.\n"


def _exported(cli: Cli, root: Path) -> Path:
    """AGENTS.md exported and committed (100644), then a new rule: the next export
    changes the section."""
    (root / "AGENTS.md").write_bytes(b"# Our agents\n")
    assert cli("export", "agents-md", "--commit").exit_code == 0
    assert cli("rule", "add", "--text", "Check the invoice owner first.", "--cites", EP).exit_code == 0
    return root / "AGENTS.md"


def _mode(root: Path, where: str) -> str:
    """The mode of AGENTS.md in HEAD (``where`` "HEAD") or in git's index ("index")."""
    if where == "HEAD":
        return git(root, "ls-tree", "HEAD", "AGENTS.md").stdout.split()[0]
    return git(root, "ls-files", "-s", "AGENTS.md").stdout.split()[0]


@pytest.mark.parametrize("draft", [b"", DRAFT], ids=["section-only", "with-an-edit"])
def test_an_unstaged_chmod_is_not_committed(demo_repo: MemoryRepo, cli: Cli, draft: bytes) -> None:
    """``chmod +x AGENTS.md`` (core.fileMode true), not staged: ``export --commit``
    committed the file as 100755 with its section, in Scarwarden's name."""
    root = demo_repo.root
    agents = _exported(cli, root)
    agents.write_bytes(agents.read_bytes() + draft)
    agents.chmod(0o755)
    result = cli("export", "agents-md", "--commit")
    assert result.exit_code == 0, result.output
    assert b"Check the invoice owner first." in git(root, "show", "HEAD:AGENTS.md").stdout.encode()
    assert _mode(root, "HEAD") == "100644" and _mode(root, "index") == "100644"
    assert git(root, "status", "--porcelain").stdout == " M AGENTS.md\n"  # the chmod, unstaged
    assert "new mode 100755" in git(root, "diff", "AGENTS.md").stdout
    assert agents.stat().st_mode & 0o777 == 0o755


def test_a_staged_chmod_stays_staged_and_out_of_the_commit(demo_repo: MemoryRepo, cli: Cli) -> None:
    """``chmod +x AGENTS.md && git add AGENTS.md``: the mode change went into the
    export's commit, as a staged edit of the text does not."""
    root = demo_repo.root
    agents = _exported(cli, root)
    agents.chmod(0o755)
    git(root, "add", "AGENTS.md")
    result = cli("export", "agents-md", "--commit")
    assert result.exit_code == 0, result.output
    assert b"Check the invoice owner first." in git(root, "show", "HEAD:AGENTS.md").stdout.encode()
    assert _mode(root, "HEAD") == "100644" and _mode(root, "index") == "100755"
    assert git(root, "status", "--porcelain").stdout == "M  AGENTS.md\n"  # still staged, alone
    staged = git(root, "diff", "--cached").stdout
    assert "new mode 100755" in staged and "@@" not in staged


def test_a_disk_mode_git_ignores_is_not_committed(demo_repo: MemoryRepo, cli: Cli) -> None:
    """With core.fileMode false (a file system whose bits git does not trust), the
    executable bit on disk is no change to git: it was committed as 100755 all the same."""
    root = demo_repo.root
    agents = _exported(cli, root)
    git(root, "config", "core.fileMode", "false")
    agents.write_bytes(agents.read_bytes() + DRAFT)
    agents.chmod(0o755)
    result = cli("export", "agents-md", "--commit")
    assert result.exit_code == 0, result.output
    assert _mode(root, "HEAD") == "100644" and _mode(root, "index") == "100644"
    assert git(root, "status", "--porcelain").stdout == " M AGENTS.md\n"  # the draft only


def test_a_new_file_executable_on_disk_gets_no_staged_mode_change(demo_repo: MemoryRepo, cli: Cli) -> None:
    """With core.fileMode false (WSL's /mnt/c, a FAT or NTFS drive: every file shows as
    executable), a new AGENTS.md was committed 100644, as git adds it, but git's index
    was given 100755 (the disk's bit): 'git status' showed a mode change staged that no
    one made, for the next commit to take (when the user had something else staged)."""
    root = demo_repo.root
    git(root, "config", "core.fileMode", "false")
    (root / "other.txt").write_text("mine\n")
    git(root, "add", "other.txt")
    agents = root / "AGENTS.md"
    agents.write_bytes(b"# Our agents\n")
    agents.chmod(0o755)
    result = cli("export", "agents-md", "--commit")
    assert result.exit_code == 0, result.output
    assert _mode(root, "HEAD") == "100644" and _mode(root, "index") == "100644"
    assert git(root, "status", "--porcelain").stdout == "A  other.txt\n"
