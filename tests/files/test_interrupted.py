"""Interrupted commands leave nothing that blocks the next (issue 15)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest
from conftest import Cli, git
from helpers import State

from scarwarden.files.atomic import atomic_write
from scarwarden.index import open_index
from scarwarden.repo import MemoryRepo


def test_a_stale_index_lock_does_not_block_a_commit_and_is_explained_where_it_does(
    demo_repo: MemoryRepo, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCARWARDEN_INDEX_LOCK_WAIT", "0")  # the lock stays: no use waiting for it
    lock = demo_repo.root / ".git" / "index.lock"
    lock.write_text("")
    # A commit goes through a temporary index: git's real index lock is not needed.
    result = cli("episode", "add", "--task", "Locked out", "--correction", "Remove the lock")
    assert result.exit_code == 0, result.output
    assert "Locked out" in git(demo_repo.root, "log", "-1", "--format=%s").stdout
    assert lock.exists()  # someone else's: left alone
    # Staging needs the real index: the refusal names the file, its age and the fix.
    staged = cli("episode", "add", "--no-commit", "--task", "Staged", "--correction", "Stage it")
    assert staged.exit_code != 0
    assert f"{lock} exists" in staged.stderr
    assert f"rm {lock}" in staged.stderr and "Traceback" not in staged.stderr
    lock.unlink()
    again = cli("episode", "add", "--task", "Locked out", "--correction", "Remove the lock")
    assert again.exit_code == 0, again.output
    # The entry the locked index could not take was set by the next write.
    assert git(demo_repo.root, "status", "--porcelain").stdout == ""


def test_old_temporary_files_of_a_killed_write_are_removed(demo_repo: MemoryRepo) -> None:
    folder = demo_repo.playbook_path.parent
    stale = folder / ".playbook.md.k1ll3d.tmp"
    fresh = folder / ".playbook.md.wr1t1ng.tmp"
    other = folder / ".notes.md.k1ll3d.tmp"
    for path in (stale, fresh, other):
        path.write_text("half a playbook")
    old = os.stat(stale).st_mtime - 3600
    os.utime(stale, (old, old))
    os.utime(other, (old, old))
    atomic_write(demo_repo.playbook_path, demo_repo.playbook_path.read_bytes())
    assert not stale.exists()
    assert fresh.exists()  # a write in flight elsewhere is left alone
    assert other.exists()  # another file's temporaries are not this write's business


def test_a_dead_rebuilds_temporary_index_is_removed(demo_repo: MemoryRepo) -> None:
    state = demo_repo.state_dir
    state.mkdir(exist_ok=True)
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    dead_tmp = state / f"index.db.tmp-{dead.stdout.strip()}"
    live_tmp = state / f"index.db.tmp-{os.getppid()}"
    dead_tmp.write_bytes(b"half an index")
    live_tmp.write_bytes(b"someone else's rebuild")
    open_index(demo_repo).close()  # the next run, not only the next rebuild
    assert not dead_tmp.exists()
    assert live_tmp.exists()
    live_tmp.unlink()
    assert git(demo_repo.root, "status", "--porcelain").stdout == ""


def test_a_commit_whose_index_update_must_wait_says_so(
    demo_repo: MemoryRepo, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCARWARDEN_INDEX_LOCK_WAIT", "0")  # the lock stays: no use waiting for it
    lock = demo_repo.root / ".git" / "index.lock"
    lock.write_text("")
    result = cli("episode", "add", "--task", "Locked out", "--correction", "Remove the lock")
    assert result.exit_code == 0, result.output
    path = git(demo_repo.root, "show", "--name-only", "--format=", "HEAD").stdout.strip()
    # The commit landed; git's real index could not take its entry, so `git status`
    # shows the new episode as deleted and untracked: the user is told, and how to fix it.
    status = git(demo_repo.root, "status", "--porcelain", "--untracked-files=all").stdout
    assert status.splitlines() == [f"D  {path}", f"?? {path}"]
    assert f"git's index is locked ({lock} exists)" in result.stderr
    assert f"rm {lock}" in result.stderr
    lock.unlink()
    again = cli("episode", "add", "--task", "Unlocked", "--correction", "It was removed")
    assert again.exit_code == 0 and "index is locked" not in again.stderr
    assert git(demo_repo.root, "status", "--porcelain").stdout == ""


@pytest.mark.parametrize("wait", ["soon", "-1", "nan", "inf", "3601", " "])
@pytest.mark.parametrize("mode", [(), ("--no-commit",)])
def test_a_wait_for_gits_index_that_is_no_number_of_seconds_is_refused(
    demo_repo: MemoryRepo, cli: Cli, wait: str, mode: tuple[str, ...]
) -> None:
    """SCARWARDEN_INDEX_LOCK_WAIT (how long a write waits for git's index held by another
    git command) is checked: a value that is no number of seconds from 0 to 3600 exits 2
    naming the variable, and the write is undone."""
    before = State.of(demo_repo)
    args = ("episode", "add", *mode, "--task", "Wait a bit", "--correction", "Not so long")
    result = cli(*args, env={"SCARWARDEN_INDEX_LOCK_WAIT": wait})
    assert result.exit_code == 2, result.output
    assert "SCARWARDEN_INDEX_LOCK_WAIT must be a number of seconds from 0 to 3600" in result.stderr
    assert repr(wait) in result.stderr and "Traceback" not in result.stderr
    assert State.of(demo_repo) == before
    assert list((demo_repo.root / ".git").glob("scarwarden-*")) == []


@pytest.mark.parametrize("mode", [(), ("--no-commit",)])
def test_a_write_waits_for_gits_index_as_long_as_it_is_told(
    demo_repo: MemoryRepo, cli: Cli, mode: tuple[str, ...]
) -> None:
    """Git's index held by another git command is waited for (tries 0.1 s apart): the
    lock let go once the write has started waiting, its files are in git's index and
    nothing is said about a lock."""
    lock = demo_repo.root / ".git" / "index.lock"
    lock.write_text("")

    def release() -> None:
        # The staging shell's entries are written just before it starts trying.
        deadline = time.monotonic() + 60
        while not list((demo_repo.root / ".git").glob("scarwarden-list-*")):
            assert time.monotonic() < deadline
            time.sleep(0.01)
        time.sleep(0.3)
        lock.unlink()

    releaser = threading.Thread(target=release)
    releaser.start()
    args = ("episode", "add", *mode, "--task", "Wait for it", "--correction", "It comes")
    result = cli(*args, env={"SCARWARDEN_INDEX_LOCK_WAIT": "60"})
    releaser.join()
    assert result.exit_code == 0, result.output
    assert "index is locked" not in result.stderr and not lock.exists()
    status = git(demo_repo.root, "status", "--porcelain", "--untracked-files=all").stdout
    if mode:  # staged, as git add would
        assert len(status.splitlines()) == 1 and status.startswith("A  memory/episodes/"), status
    else:
        assert status == "", status
