"""Talking to a remote and integrating what it has (``scarwarden sync``)."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

from scarwarden.errors import GitError
from scarwarden.git.index_commit import in_progress
from scarwarden.git.repository import git_dir
from scarwarden.git.run import run


def remote_url(root: Path | str, remote: str) -> str | None:
    proc = subprocess.run(["git", "-C", str(root), "remote", "get-url", remote], capture_output=True)
    return proc.stdout.decode().strip() if proc.returncode == 0 else None


def _unit(root: Path | str, script: str, *args: str, keep_fds: Sequence[int] = ()) -> tuple[int, str]:
    """Run a git step as a unit that a kill of our process group cannot cut in half: a
    small shell in a session of its own (given ``keep_fds``, the caller's write lock, so
    the next writer waits for it). A killed ``git rebase`` or ``merge`` would leave the
    operation half-done and ``index.lock`` behind; this one finishes, or aborts itself on
    a conflict, in the same unit (issue 15). (exit code, stdout + stderr)."""
    proc = subprocess.Popen(
        ["sh", "-c", script, "sync", *args],
        cwd=str(root),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        pass_fds=tuple(keep_fds),
    )
    interrupted = False
    while True:
        try:
            out, _ = proc.communicate()
            break
        except KeyboardInterrupt:  # let the unit finish: it leaves the repository whole
            interrupted = True
    if interrupted:
        raise KeyboardInterrupt
    return proc.returncode, out.decode("utf-8", "replace").strip()


def fetch_branch(root: Path | str, remote: str, branch: str, *, keep_fds: Sequence[int] = ()) -> str | None:
    """Fetch ``branch`` from ``remote``; the commit it names there, or ``None`` when the
    remote has no such branch (yet)."""
    code, message = _unit(
        root,
        'git fetch -q "$1" "$2"',
        remote,
        f"+refs/heads/{branch}:refs/remotes/{remote}/{branch}",
        keep_fds=keep_fds,
    )
    if code != 0:
        if "couldn't find remote ref" in message:
            return None
        raise GitError(f"git fetch {remote} failed: {message}")
    return run(root, "rev-parse", f"refs/remotes/{remote}/{branch}").decode().strip()


def fast_forward(root: Path | str, target: str, *, keep_fds: Sequence[int] = ()) -> bool:
    """Move the current branch (and work tree) to ``target`` if it is a fast-forward."""
    return _unit(root, 'git merge -q --ff-only "$1"', target, keep_fds=keep_fds)[0] == 0


def rebase_onto(root: Path | str, upstream: str, *, keep_fds: Sequence[int] = ()) -> tuple[bool, str]:
    """Rebase the current branch onto ``upstream``; on a conflict abort, so the branch,
    index and work tree are as they were. (ok, git's message)."""
    script = 'git rebase -q "$1" && exit 0; git rebase --abort; exit 1'
    code, message = _unit(root, script, upstream, keep_fds=keep_fds)
    return code == 0, "" if code == 0 else message


def merge_commit(
    root: Path | str, other: str, message: str, *, keep_fds: Sequence[int] = ()
) -> tuple[bool, str]:
    """Merge ``other`` into the current branch with a merge commit; on a conflict abort.
    (ok, git's message)."""
    script = 'git merge -q --no-ff -m "$2" "$1" && exit 0; git merge --abort; exit 1'
    code, detail = _unit(root, script, other, message, keep_fds=keep_fds)
    return code == 0, "" if code == 0 else detail


def push_branch(
    root: Path | str, remote: str, branch: str, *, keep_fds: Sequence[int] = ()
) -> tuple[bool, str]:
    """Push HEAD to ``remote``'s ``branch``. (ok, git's message); not ok when the remote
    moved meanwhile (rejected as not a fast-forward) or a hook refused."""
    code, message = _unit(root, 'git push -q "$1" "HEAD:refs/heads/$2"', remote, branch, keep_fds=keep_fds)
    return code == 0, message


def reset_keep(root: Path | str, target: str, *, keep_fds: Sequence[int] = ()) -> tuple[bool, str]:
    """Move the current branch, index and work tree back to ``target`` (``git reset
    --keep``: it refuses rather than overwrite a local change). (ok, git's message)."""
    code, message = _unit(root, 'git reset -q --keep "$1"', target, keep_fds=keep_fds)
    return code == 0, message


def operation_in_progress(root: Path | str) -> str | None:
    """A merge, rebase, cherry-pick or revert that git has not finished, by name."""
    return in_progress(git_dir(root))


def tracked_changes(root: Path | str) -> list[str]:
    """Tracked files changed in the work tree or the index (untracked ones ignored)."""
    out = run(root, "status", "--porcelain", "--untracked-files=no").decode()
    return [line[3:] for line in out.splitlines() if line]
