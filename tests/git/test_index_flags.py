"""A write commits through a private index, then sets git's real index entries for the
paths it wrote (git/index_commit.py): every flag of the real index it did not mean to
change stays as it was (skip-worktree, assume-unchanged, intent-to-add), on the paths
written and on the others, and the index keeps its format (split, version 4, untracked
cache)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Cli, git, head

from scarwarden.repo import MemoryRepo

EP = "ep-hkgnqdz88f"  # a committed demo episode
LOCAL = b"\nmy local override, never committed\n"


def _tags(root: Path, *paths: str) -> dict[str, str]:
    """``git ls-files -v``: each path's tag (S skip-worktree; lowercase: assume-unchanged)."""
    lines = git(root, "ls-files", "-v", "--", *paths).stdout.splitlines()
    return {line[2:]: line[0] for line in lines}


def _export_pending(cli: Cli, root: Path) -> None:
    """AGENTS.md exported and committed, then a new rule: the next export changes it."""
    (root / "AGENTS.md").write_bytes(b"# Our agents\n")
    assert cli("export", "agents-md", "--commit").exit_code == 0
    assert cli("rule", "add", "--text", "Check the invoice owner first.", "--cites", EP).exit_code == 0


@pytest.mark.parametrize(("flag", "tag"), [("--skip-worktree", "S"), ("--assume-unchanged", "h")])
@pytest.mark.parametrize("edited", [True, False], ids=["local-edit", "no-edit"])
def test_export_commit_keeps_the_flag_of_the_file_it_commits(
    demo_repo: MemoryRepo, cli: Cli, flag: str, tag: str, edited: bool
) -> None:
    """``git update-index --skip-worktree AGENTS.md`` and a local edit: the export
    committed the right content but the flag was lost (``S`` before, ``H`` after), so
    the edit showed as modified; with no edit the export refused: 'nothing to commit'
    (git's update-index skips a skip-worktree entry, so the private index kept HEAD's)."""
    root = demo_repo.root
    _export_pending(cli, root)
    git(root, "update-index", flag, "AGENTS.md")
    agents = root / "AGENTS.md"
    if edited:
        agents.write_bytes(agents.read_bytes() + LOCAL)
    result = cli("export", "agents-md", "--commit")
    assert result.exit_code == 0, result.output
    committed = git(root, "show", "HEAD:AGENTS.md").stdout.encode()
    assert b"Check the invoice owner first." in committed and LOCAL not in committed
    assert agents.read_bytes() == committed + (LOCAL if edited else b"")
    assert _tags(root, "AGENTS.md") == {"AGENTS.md": tag}
    assert git(root, "status", "--porcelain").stdout == ""
    assert (
        git(root, "ls-files", "-s", "AGENTS.md").stdout.split()[1]
        == git(root, "rev-parse", "HEAD:AGENTS.md").stdout.strip()
    )


@pytest.mark.parametrize("staged", [False, True], ids=["nothing-staged", "a-file-staged"])
def test_episode_add_keeps_the_flags_of_other_paths(demo_repo: MemoryRepo, cli: Cli, staged: bool) -> None:
    """Both ways the real index is updated: swapped for the private one (nothing staged)
    or its entries set (the user's staging kept)."""
    root = demo_repo.root
    for name in ("hidden.txt", "trusted.txt"):
        (root / name).write_text(name + "\n")
    git(root, "add", "hidden.txt", "trusted.txt")
    git(root, "commit", "-qm", "two files")
    git(root, "update-index", "--skip-worktree", "hidden.txt")
    git(root, "update-index", "--assume-unchanged", "trusted.txt")
    (root / "hidden.txt").write_text("local\n")
    (root / "intended.txt").write_text("later\n")
    git(root, "add", "-N", "intended.txt")
    if staged:
        (root / "staged.txt").write_text("staged\n")
        git(root, "add", "staged.txt")
    before = head(demo_repo)
    result = cli("episode", "add", "--task", "t", "--outcome", "o", "--correction", "c")
    assert result.exit_code == 0, result.output
    assert head(demo_repo) != before
    assert _tags(root, "hidden.txt", "trusted.txt") == {"hidden.txt": "S", "trusted.txt": "h"}
    status = git(root, "status", "--porcelain").stdout.splitlines()
    assert status == [" A intended.txt"] + (["A  staged.txt"] if staged else [])


def test_the_index_keeps_its_format(demo_repo: MemoryRepo, cli: Cli) -> None:
    """init's settings (core.splitIndex, feature.manyFiles) and index version 4: after
    writes both ways the index is still split, version 4, with its untracked cache."""
    root = demo_repo.root
    for key in ("core.splitIndex", "feature.manyFiles"):
        git(root, "config", key, "true")
    git(root, "update-index", "--index-version", "4")
    git(root, "status")  # the index is split, its untracked cache filled
    data = (root / ".git" / "index").read_bytes()
    assert b"link" in data and b"UNTR" in data
    for n, stage in enumerate([False, True]):
        if stage:
            (root / "staged.txt").write_text("staged\n")
            git(root, "add", "staged.txt")
        assert cli("episode", "add", "--task", f"t{n}", "--outcome", "o").exit_code == 0
        data = (root / ".git" / "index").read_bytes()
        assert int.from_bytes(data[4:8], "big") == 4
        assert b"link" in data and b"UNTR" in data
        assert git(root, "status", "--porcelain").stdout == ("A  staged.txt\n" if stage else "")


def test_an_index_from_a_newer_git_is_refused_before_anything_is_written(
    demo_repo: MemoryRepo, cli: Cli
) -> None:
    """An index this git cannot read (version 5): the write committed, then said git's
    index was locked (index.lock exists) when no lock existed; now refused with git's
    words and a hint, nothing committed, no file left, the index as it was."""
    root = demo_repo.root
    index = root / ".git" / "index"
    data = bytearray(index.read_bytes())
    data[4:8] = (5).to_bytes(4, "big")
    index.write_bytes(bytes(data))
    before = head(demo_repo)
    result = cli("episode", "add", "--task", "t", "--outcome", "o")
    assert result.exit_code == 1
    assert "git's index cannot be read, so nothing was committed" in result.output
    assert "bad index version 5" in result.output and "locked" not in result.output
    assert "hint: 'git status' says the same" in result.output
    assert head(demo_repo) == before and index.read_bytes() == bytes(data)
    assert sorted(p.name for p in (root / "memory" / "episodes").rglob("*.yaml")) == sorted(
        Path(p).name
        for p in git(root, "ls-tree", "-r", "--name-only", "HEAD", "memory/episodes").stdout.split()
    )


def test_no_commit_with_an_unreadable_index_leaves_nothing(demo_repo: MemoryRepo, cli: Cli) -> None:
    """``episode add --no-commit`` with an index git cannot read: the staging failed, then
    undoing the write failed too (reading the index), so the new episode file and the
    write journal stayed behind; now both are gone and git's reason is said."""
    root = demo_repo.root
    index = root / ".git" / "index"
    data = bytearray(index.read_bytes())
    data[4:8] = (5).to_bytes(4, "big")
    index.write_bytes(bytes(data))
    before = sorted((root / "memory").rglob("*"))
    result = cli("episode", "add", "--task", "t", "--outcome", "o", "--no-commit")
    assert result.exit_code == 1
    assert "git's index cannot be read" in result.output
    assert sorted((root / "memory").rglob("*")) == before
    assert not (demo_repo.state_dir / "write-journal.json").exists()
    assert index.read_bytes() == bytes(data)


@pytest.mark.parametrize(("flag", "tag"), [("--skip-worktree", "S"), ("--assume-unchanged", "h")])
def test_a_killed_writes_index_update_finished_later_keeps_the_flags(
    demo_repo: MemoryRepo, flag: str, tag: str
) -> None:
    """The write journal finishes a killed write whose commit landed but whose index update
    did not (``refresh_entries``): that cleared the flags of the paths it set, as the
    write itself did before (``S``/``h`` became ``H``)."""
    from scarwarden.git.index_commit import refresh_entries
    from scarwarden.git.read import StagedEntry

    root = demo_repo.root
    (root / "AGENTS.md").write_bytes(b"# Our agents\n")
    git(root, "add", "AGENTS.md")
    git(root, "commit", "-q", "-m", "agents")
    git(root, "update-index", flag, "AGENTS.md")
    newer = root.parent / "agents-v2.md"
    newer.write_bytes(b"# Our agents, v2\n")
    blob = git(root, "hash-object", "-w", str(newer)).stdout.strip()
    refresh_entries(root, [StagedEntry("100644", blob, "AGENTS.md")])
    assert _tags(root, "AGENTS.md") == {"AGENTS.md": tag}
    assert git(root, "ls-files", "-s", "AGENTS.md").stdout.split()[1] == blob
