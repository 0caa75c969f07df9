"""Talking to a remote and integrating what it has (``scarwarden sync``)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from scarwarden.errors import GitError
from scarwarden.git.run import run, run_ok


def remote_url(root: Path | str, remote: str) -> str | None:
    proc = subprocess.run(["git", "-C", str(root), "remote", "get-url", remote], capture_output=True)
    return proc.stdout.decode().strip() if proc.returncode == 0 else None


def fetch_branch(root: Path | str, remote: str, branch: str) -> str | None:
    """Fetch ``branch`` from ``remote``; the commit it names there, or ``None`` when the
    remote has no such branch (yet)."""
    proc = subprocess.run(
        [
            "git",
            "-C",
            str(root),
            "fetch",
            "-q",
            remote,
            f"+refs/heads/{branch}:refs/remotes/{remote}/{branch}",
        ],
        capture_output=True,
    )
    if proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip()
        if "couldn't find remote ref" in message:
            return None
        raise GitError(f"git fetch {remote} failed: {message}")
    return run(root, "rev-parse", f"refs/remotes/{remote}/{branch}").decode().strip()


def fast_forward(root: Path | str, target: str) -> bool:
    """Move the current branch (and work tree) to ``target`` if it is a fast-forward."""
    return run_ok(root, "merge", "-q", "--ff-only", target)


def rebase_onto(root: Path | str, upstream: str) -> tuple[bool, str]:
    """Rebase the current branch onto ``upstream``; on a conflict abort, so the branch,
    index and work tree are as they were. (ok, git's message)."""
    proc = subprocess.run(["git", "-C", str(root), "rebase", "-q", upstream], capture_output=True)
    if proc.returncode == 0:
        return True, ""
    message = (proc.stdout + proc.stderr).decode("utf-8", "replace").strip()
    run_ok(root, "rebase", "--abort")
    return False, message


def merge_commit(root: Path | str, other: str, message: str) -> tuple[bool, str]:
    """Merge ``other`` into the current branch with a merge commit; on a conflict abort.
    (ok, git's message)."""
    proc = subprocess.run(
        ["git", "-C", str(root), "merge", "-q", "--no-ff", "-m", message, other], capture_output=True
    )
    if proc.returncode == 0:
        return True, ""
    detail = (proc.stdout + proc.stderr).decode("utf-8", "replace").strip()
    run_ok(root, "merge", "--abort")
    return False, detail


def push_branch(root: Path | str, remote: str, branch: str) -> tuple[bool, str]:
    """Push HEAD to ``remote``'s ``branch``. (ok, git's message); not ok when the remote
    moved meanwhile (rejected as not a fast-forward) or a hook refused."""
    proc = subprocess.run(
        ["git", "-C", str(root), "push", "-q", remote, f"HEAD:refs/heads/{branch}"], capture_output=True
    )
    return proc.returncode == 0, (proc.stdout + proc.stderr).decode("utf-8", "replace").strip()


def operation_in_progress(root: Path | str) -> str | None:
    """A merge, rebase, cherry-pick or revert that git has not finished, by name."""
    for name, marker in (
        ("merge", "MERGE_HEAD"),
        ("rebase", "rebase-merge"),
        ("rebase", "rebase-apply"),
        ("cherry-pick", "CHERRY_PICK_HEAD"),
        ("revert", "REVERT_HEAD"),
    ):
        where = Path(run(root, "rev-parse", "--git-path", marker).decode().strip())
        if not where.is_absolute():
            where = Path(root) / where
        if where.exists():
            return name
    return None


def tracked_changes(root: Path | str) -> list[str]:
    """Tracked files changed in the work tree or the index (untracked ones ignored)."""
    out = run(root, "status", "--porcelain", "--untracked-files=no").decode()
    return [line[3:] for line in out.splitlines() if line]
