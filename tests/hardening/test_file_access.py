"""A file or folder that cannot be read or written (permission denied, a folder where a
file should be, a file where a folder should be, a missing file) is one line naming the
path and what is wrong with it, exit 2, and nothing is left behind: no commit, no
changed file, no write journal. Before, each of these was "internal error:
PermissionError" (or FileExistsError, IsADirectoryError...) and "this is a bug".

Permissions mean nothing to root: as root, the commands run under ``setpriv`` without
CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH, as an ordinary user would.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import git
from helpers import State

from scarwarden.api import FileAccessError, Memory
from scarwarden.errors import ExitCode, file_access_error
from scarwarden.repo import MemoryRepo


def _unprivileged() -> list[str]:
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("as root, these need setpriv (util-linux) to drop CAP_DAC_OVERRIDE")
    return ["setpriv", "--inh-caps=-all", "--bounding-set=-dac_override,-dac_read_search"]


def run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``scarwarden -C ROOT ARGS`` as a user whom file modes bind."""
    return subprocess.run(
        [*_unprivileged(), "scarwarden", "-C", str(root), *args], capture_output=True, text=True
    )


def refused(result: subprocess.CompletedProcess[str], message: str) -> None:
    assert result.returncode == ExitCode.USAGE, (result.stdout, result.stderr)
    assert result.stderr.splitlines()[0] == f"error: {message}", result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr


@pytest.fixture
def read_only_memory(demo_repo: MemoryRepo) -> Iterator[MemoryRepo]:
    folders = [demo_repo.memory_dir, *(p for p in demo_repo.memory_dir.rglob("*") if p.is_dir())]
    for folder in folders:
        folder.chmod(0o555)
    yield demo_repo
    for folder in folders:
        folder.chmod(0o755)


def test_an_unreadable_playbook(demo_repo: MemoryRepo) -> None:
    demo_repo.playbook_path.chmod(0)
    try:
        for args in (("recall", "Draft a LinkedIn post"), ("rule", "list"), ("export", "agents-md")):
            refused(run(demo_repo.root, *args), "memory/playbook.md: permission denied")
    finally:
        demo_repo.playbook_path.chmod(0o644)
    assert not (demo_repo.root / "AGENTS.md").exists()


def test_a_playbook_that_is_a_folder(demo_repo: MemoryRepo) -> None:
    demo_repo.playbook_path.unlink()
    demo_repo.playbook_path.mkdir()
    quiet = run(demo_repo.root, "rule", "list")
    refused(quiet, "memory/playbook.md: is a folder, where a file should be")
    assert quiet.stderr.splitlines()[1] == "hint: move the folder away, then run the command again"
    loud = run(demo_repo.root, "--debug", "rule", "list")  # --debug: the traceback too
    assert loud.returncode == ExitCode.USAGE and "Traceback (most recent call last)" in loud.stderr


def test_an_unreadable_episode_file(demo_repo: MemoryRepo) -> None:
    episode = sorted(demo_repo.episodes_dir.rglob("ep-*.yaml"))[0]
    # Touched (as an edit would): git's index no longer vouches for it, so it is read from
    # disk, not from git's copy; and the index, built before, is gone.
    os.utime(episode, (episode.stat().st_atime, episode.stat().st_mtime + 5))
    episode.chmod(0)
    rel = episode.relative_to(demo_repo.root).as_posix()
    demo_repo.index_path.unlink(missing_ok=True)
    try:
        refused(run(demo_repo.root, "episode", "list"), f"{rel}: permission denied")
        refused(run(demo_repo.root, "index", "--rebuild"), f"{rel}: permission denied")
    finally:
        episode.chmod(0o644)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("episode", "add", "--task", "t", "--outcome", "o"), "cannot create memory/episodes/"),
        (
            (
                "rule",
                "add",
                "--title",
                "Use the portal",
                "--text",
                "Book on the portal.",
                "--cites",
                "ep-hkgnqdz88f",
            ),
            "memory: permission denied",
        ),
        (("distill",), "memory: permission denied"),
        (("distill", "--no-commit"), "memory: permission denied"),
        (("ask", "Book a flight to Berlin", "--answer", "Use the portal"), "cannot create memory/episodes/"),
    ],
)
def test_a_read_only_memory_folder_writes_nothing(
    read_only_memory: MemoryRepo, args: tuple[str, ...], message: str
) -> None:
    before = State.of(read_only_memory)
    result = run(read_only_memory.root, *args)
    assert result.returncode == ExitCode.USAGE, (result.stdout, result.stderr)
    assert result.stderr.startswith(f"error: {message}"), result.stderr
    assert "internal error" not in result.stderr
    assert State.of(read_only_memory) == before
    assert not (read_only_memory.state_dir / "write-journal.json").exists()  # no half a write to undo


@pytest.mark.parametrize(
    ("lock", "args"),
    [("write.lock", ("episode", "add", "--task", "t", "--outcome", "o")), ("index.lock", ("recall", "x"))],
)
def test_an_unreadable_lock_file(demo_repo: MemoryRepo, lock: str, args: tuple[str, ...]) -> None:
    path = demo_repo.state_dir / lock
    path.touch()
    path.chmod(0)
    before = State.of(demo_repo)
    refused(run(demo_repo.root, *args), f".scarwarden/{lock}: permission denied")
    path.chmod(0o644)
    assert State.of(demo_repo) == before


def test_an_output_folder_without_write_permission(demo_repo: MemoryRepo, tmp_path: Path) -> None:
    out = tmp_path / "locked"
    out.mkdir(mode=0o555)
    result = run(demo_repo.root, "audit", "--html", str(out / "site"))
    refused(result, f"cannot create {out / 'site'}: permission denied in {out}")
    assert list(out.iterdir()) == []


def test_the_state_folder_is_a_file(cli, demo_repo: MemoryRepo) -> None:
    shutil.rmtree(demo_repo.state_dir)
    demo_repo.state_dir.write_text("not a folder\n")
    result = cli("recall", "Draft a LinkedIn post")
    assert result.exit_code == ExitCode.USAGE, result.output
    assert result.stderr.startswith("error: .scarwarden: is in the way: it exists, and is not a folder\n")


def test_the_index_is_a_folder(cli, demo_repo: MemoryRepo) -> None:
    demo_repo.index_path.unlink(missing_ok=True)
    demo_repo.index_path.mkdir(parents=True)
    result = cli("recall", "Draft a LinkedIn post")
    assert result.exit_code == ExitCode.USAGE, result.output
    assert result.stderr.startswith("error: .scarwarden/index.db: is a folder, where a file should be\n")
    assert "corrupt" not in result.stderr and "internal error" not in result.stderr
    assert demo_repo.index_path.is_dir()  # left as it was


def test_an_unreadable_index_is_named_not_called_corrupt(demo_repo: MemoryRepo) -> None:
    """The index is a cache, but one this user may not read is not replaced behind its
    owner's back, nor reported as corrupt."""
    run(demo_repo.root, "index")  # built as it is
    demo_repo.index_path.chmod(0)
    before = demo_repo.index_path.stat()
    result = run(demo_repo.root, "recall", "Draft a LinkedIn post")
    refused(result, ".scarwarden/index.db: permission denied")
    assert "corrupt" not in result.stderr and "rm -r .scarwarden/index.db" in result.stderr
    after = demo_repo.index_path.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


@pytest.mark.parametrize("name", [".gitignore", ".gitattributes"])
def test_init_where_a_git_file_is_a_folder(make_cli, git_repo: Path, name: str) -> None:
    (git_repo / name).mkdir()
    result = make_cli(git_repo)("init", "--no-hooks")
    assert result.exit_code == ExitCode.USAGE, result.output
    assert result.stderr.startswith(f"error: {name}: is a folder, where a file should be\n")
    assert not (git_repo / "memory").exists()
    assert git(git_repo, "log", "--format=%s").stdout == "root\n"


def test_hooks_install_where_the_hooks_folder_is_a_file(cli, demo_repo: MemoryRepo) -> None:
    hooks = demo_repo.root / ".git" / "hooks"
    shutil.rmtree(hooks)
    hooks.write_text("")
    result = cli("hooks", "install")
    assert result.exit_code == ExitCode.USAGE, result.output
    assert result.stderr.startswith("error: .git/hooks: is in the way: it exists, and is not a folder\n")


def test_merge_playbook_with_missing_files(cli, demo_repo: MemoryRepo, chdir) -> None:
    chdir(demo_repo.root)
    result = cli("merge-playbook", "a", "b", "c")
    assert result.exit_code == ExitCode.USAGE, result.output
    assert result.stderr.startswith("error: a: does not exist\n")


@pytest.mark.parametrize(
    ("host", "message"),
    [
        ("", "--host is empty: no address to listen on"),
        ("999.1.1.1", "--host '999.1.1.1' is not an address to listen on: "),
        ("nope.invalid", "--host 'nope.invalid' is not an address to listen on: "),
    ],
)
def test_serve_on_a_host_that_is_no_address(cli, host: str, message: str) -> None:
    pytest.importorskip("flask")
    result = cli("serve", "--host", host, "--port", "0")
    assert result.exit_code == ExitCode.USAGE, result.output
    assert result.stderr.startswith(f"error: {message}")
    assert "warning: listening" not in result.stderr


def test_the_python_api_raises_file_access_errors(demo_repo: MemoryRepo) -> None:
    shutil.rmtree(demo_repo.state_dir)
    demo_repo.state_dir.write_text("")
    with pytest.raises(FileAccessError) as refused:
        Memory(demo_repo).recall("Draft a LinkedIn post")
    assert refused.value.message == ".scarwarden: is in the way: it exists, and is not a folder"


def test_only_problems_with_files_are_translated() -> None:
    error = file_access_error(IsADirectoryError(21, "Is a directory", "/r/.scarwarden/index.db"), root="/r")
    assert error is not None and error.message == ".scarwarden/index.db: is a folder, where a file should be"
    assert error.exit_code == ExitCode.USAGE
    # A rename names both ends: the target is the one in the way.
    moved = file_access_error(IsADirectoryError(21, "Is a directory", "/r/a.tmp", None, "/r/a.db"), root="/r")
    assert moved is not None and moved.message.startswith("a.db: is a folder")
    assert file_access_error(OSError(22, "Invalid argument", "/r/x")) is None  # a bug, not a file
    assert file_access_error(PermissionError(13, "Permission denied")) is None  # no path to name
