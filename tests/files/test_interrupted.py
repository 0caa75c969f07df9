"""Interrupted commands leave nothing that blocks the next (issue 15)."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import Cli, git

from scarwarden.files.atomic import atomic_write
from scarwarden.index import open_index
from scarwarden.repo import MemoryRepo


def test_a_stale_index_lock_does_not_block_a_commit_and_is_explained_where_it_does(
    demo_repo: MemoryRepo, cli: Cli
) -> None:
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


def test_a_commit_whose_index_update_must_wait_says_so(demo_repo: MemoryRepo, cli: Cli) -> None:
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
