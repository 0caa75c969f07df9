"""The episodes folder committed as a symbolic link or a submodule (``memory/episodes ->
../elsewhere``) passed ``check --all``, the pre-commit check and ``verify``; the playbook
as a link is refused as 'playbook-not-a-file', the episodes folder is now refused as
'episodes-not-a-folder'. ``episode add`` through such a link (or a month folder that is
one) failed with git's raw "beyond a symbolic link"; it is refused before anything is
written, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import Cli, git

REL = "memory/episodes"


def _memory_with_link(root: Path) -> None:
    """A memory whose episodes folder is, from its first commit, a link to another folder."""
    (root / "elsewhere/2026/11").mkdir(parents=True)
    (root / "memory").mkdir()
    (root / "memory/playbook.md").write_text("# Playbook\n")
    (root / REL).symlink_to("../elsewhere")
    (root / ".gitignore").write_text(".scarwarden/\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "--no-verify", "-m", "memory, its episodes elsewhere")


def _staged_playbook_only(root: Path) -> None:
    """A memory of an empty playbook, staged: no episodes folder yet."""
    (root / "memory").mkdir()
    (root / "memory/playbook.md").write_text("# Playbook\n")
    git(root, "add", "-A")


def _state(root: Path) -> tuple[str, str]:
    return git(root, "rev-parse", "HEAD").stdout, git(root, "status", "--porcelain", "-uall").stdout


def _codes(cli: Cli, *args: str) -> set[str]:
    result = cli(*args, "--json")
    assert result.exit_code == 1, result.output
    return {p["code"] for p in json.loads(result.stdout)["problems"]}


def test_check_all_and_verify_refuse_the_link(git_repo: Path, make_cli: type[Cli]) -> None:
    _memory_with_link(git_repo)
    cli = make_cli(git_repo)
    result = cli("check", "--all")
    assert result.exit_code == 1, result.output
    assert f"{REL}: a symlink where the episodes folder should be; it must be a plain folder" in result.stdout
    assert _codes(cli, "check", "--all") == {"episodes-not-a-folder"}
    assert _codes(cli, "verify") == {"episodes-not-a-folder"}


def test_a_submodule_where_the_episodes_folder_should_be(git_repo: Path, make_cli: type[Cli]) -> None:
    root = git_repo
    _staged_playbook_only(root)
    start = git(root, "rev-parse", "HEAD").stdout.strip()
    git(root, "update-index", "--add", "--cacheinfo", f"160000,{start},{REL}")
    git(root, "commit", "-q", "--no-verify", "-m", "episodes as a submodule")
    cli = make_cli(root)
    result = cli("check", "--all")
    assert result.exit_code == 1 and f"{REL}: a submodule where the episodes folder" in result.stdout
    assert _codes(cli, "verify") == {"episodes-not-a-folder"}


def test_the_pre_commit_check_refuses_staging_the_link(git_repo: Path, make_cli: type[Cli]) -> None:
    root = git_repo
    _staged_playbook_only(root)
    git(root, "commit", "-q", "-m", "memory")
    (root / "elsewhere").mkdir()
    (root / REL).symlink_to("../elsewhere")
    git(root, "add", "-A")
    assert _codes(make_cli(root), "check", "--staged") == {"episodes-not-a-folder"}


@pytest.mark.parametrize("link", [REL, f"{REL}/2026"])
def test_episode_add_through_a_link_is_refused_before_writing(
    git_repo: Path, make_cli: type[Cli], link: str
) -> None:
    root = git_repo
    if link == REL:
        _memory_with_link(root)
    else:
        (root / "memory/episodes").mkdir(parents=True)
        (root / "memory/playbook.md").write_text("# Playbook\n")
        (root / "elsewhere/11").mkdir(parents=True)
        (root / link).symlink_to("../../elsewhere")
        (root / ".gitignore").write_text(".scarwarden/\n")
        git(root, "add", "-A")
        git(root, "commit", "-q", "--no-verify", "-m", "a month elsewhere")
    before = _state(root)
    result = make_cli(root)("episode", "add", "--task", "t", "--outcome", "o", "--at", "2026-11-02T00:00:00Z")
    assert result.exit_code == 2, result.output
    assert "beyond a symbolic link" not in result.output
    assert f"{link} is a symbolic link" in result.stderr and "nothing was written" in result.stderr
    assert _state(root) == before
    assert not list((root / "elsewhere").rglob("*.yaml"))


def test_the_memory_folder_as_a_link_is_refused(git_repo: Path, make_cli: type[Cli]) -> None:
    # check --all said "OK, the memory tree" having read nothing: the link is all git has.
    root = git_repo
    (root / "real/episodes").mkdir(parents=True)
    (root / "real/playbook.md").write_text("# Playbook\n")
    (root / "memory").symlink_to("real")
    (root / ".gitignore").write_text(".scarwarden/\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "--no-verify", "-m", "memory elsewhere")
    cli = make_cli(root)
    result = cli("check", "--all")
    assert result.exit_code == 1 and "memory: a symlink where the folder memory should be" in result.stdout
    assert _codes(cli, "check", "--all") == {"episodes-not-a-folder"}
    assert _codes(cli, "verify") == {"episodes-not-a-folder"}
    added = cli("episode", "add", "--task", "t", "--outcome", "o")
    assert added.exit_code == 2 and "memory is a symbolic link" in added.stderr, added.output


@pytest.mark.parametrize("checked_out", [False, True])
def test_episode_add_into_a_submodule_is_refused_before_writing(
    git_repo: Path, make_cli: type[Cli], checked_out: bool
) -> None:
    # git's "appears as both a file and as a directory" (or "is in submodule") came
    # after the file was written.
    root = git_repo
    (root / "memory/episodes").mkdir(parents=True)
    (root / "memory/playbook.md").write_text("# Playbook\n")
    (root / ".gitignore").write_text(".scarwarden/\n")
    git(root, "add", "-A")
    start = git(root, "rev-parse", "HEAD").stdout.strip()
    git(root, "update-index", "--add", "--cacheinfo", f"160000,{start},{REL}")
    git(root, "commit", "-q", "--no-verify", "-m", "episodes as a submodule")
    if checked_out:
        (root / REL / ".git").write_text("gitdir: ../../.git\n")  # as 'git submodule update' leaves it
    before = _state(root)
    result = make_cli(root)("episode", "add", "--task", "t", "--outcome", "o")
    assert result.exit_code == 2, result.output
    assert f"{REL} is a submodule" in result.stderr and "nothing was written" in result.stderr
    assert _state(root) == before
    assert [p.name for p in (root / REL).iterdir()] == ([".git"] if checked_out else [])
