"""Changing the repository: staging, committing, moving refs, branches.

The second half builds commits that never touch the work tree (``distill --branch``):
a private index file, ``write-tree``, ``commit-tree`` and a new branch ref.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from scarwarden.errors import GitError
from scarwarden.git.read import StagedEntry
from scarwarden.git.repository import git_dir, head, signs_commits
from scarwarden.git.run import NO_REPLACE, lock_hint, own_session, run, run_chunked, run_ok


def add(root: Path | str, paths: Iterable[str], env: Mapping[str, str] | None = None) -> None:
    """Stage ``paths`` (``git add``); nothing happens for none."""
    paths = list(paths)
    if paths:
        run(root, "add", "--", *paths, env=env)


def unstage(root: Path | str, paths: Iterable[str]) -> None:
    """Drop paths from the index (used to undo a failed write; HEAD may not exist)."""
    paths = list(paths)
    if paths:
        run(root, "rm", "-q", "--cached", "--ignore-unmatch", "--", *paths, check=False)


def restore_index_entry(root: Path | str, entry: StagedEntry) -> None:
    """Put back exactly the index entry (mode, blob) a path had; best effort, as it is
    used while undoing a failed write."""
    run(root, "update-index", "--add", "--cacheinfo", f"{entry.mode},{entry.blob},{entry.path}", check=False)


def commit(
    root: Path | str,
    message: str,
    *,
    only: Sequence[str] | None = None,
    allow_empty: bool = False,
    no_verify: bool = False,
    env: Mapping[str, str] | None = None,
) -> str:
    """Commit and return the new HEAD.

    With ``only`` the commit holds exactly those paths (``git commit --only``): whatever
    else the user had staged stays staged and out of the commit.
    """
    args = ["commit", "-q", "-F", "-"]
    if allow_empty:
        args.append("--allow-empty")
    if no_verify:
        args.append("--no-verify")
    if only is not None:
        args += ["--only", "--", *only]
    # Not run(): a hook's complaint may be on stdout, and the error carries both.
    proc = subprocess.run(
        ["git", *NO_REPLACE, "-C", str(root), *args],
        input=message.encode("utf-8"),
        capture_output=True,
        env=None if env is None else dict(env),
        start_new_session=own_session(),
    )
    if proc.returncode != 0:
        detail = (proc.stdout + proc.stderr).decode("utf-8", "replace").strip()
        raise GitError(
            "git commit failed" + (f":\n{detail}" if detail else ""),
            hint=lock_hint(detail) or "if a hook rejected the commit, its message above says why",
        )
    sha = head(root)
    assert sha is not None
    return sha


def reset_soft(root: Path | str, rev: str) -> None:
    """Move the current branch to ``rev``; the index and the work tree stay as they are."""
    run(root, "reset", "-q", "--soft", rev)


def delete_ref(root: Path | str, ref: str, old_sha: str) -> None:
    """Delete ``ref`` if it still points at ``old_sha`` (``HEAD``: the branch it is on,
    which is then unborn again)."""
    run(root, "update-ref", "-d", ref, old_sha)


# -- commits that do not touch the work tree (distill --branch) ----------------------


@contextmanager
def temporary_index(
    root: Path | str, rev: str, env: Mapping[str, str] | None = None
) -> Iterator[dict[str, str]]:
    """A private index file holding ``rev``'s tree; yields the env that selects it.

    Lets a command build a commit for another branch (``read-tree`` + ``update-index``
    + ``write-tree``) while the user's index, HEAD and working tree stay untouched.
    """
    import tempfile

    # Named with our PID, as index_commit's are, so a killed run's file is removed.
    fd, path = tempfile.mkstemp(prefix=f"scarwarden-index-{os.getpid()}-", dir=str(git_dir(root)))
    os.close(fd)
    os.unlink(path)  # git wants to create the index itself
    private = dict(os.environ if env is None else env)
    private["GIT_INDEX_FILE"] = path
    try:
        run(root, "read-tree", rev, env=private)
        yield private
    finally:
        for leftover in (path, path + ".lock"):
            if os.path.exists(leftover):
                os.unlink(leftover)


def stage_bytes(root: Path | str, path: str, data: bytes, *, env: Mapping[str, str] | None = None) -> str:
    """Write ``data`` as a blob and stage it at ``path`` (in the index ``env`` selects)."""
    blob = run(root, "hash-object", "-w", "--stdin", input=data, env=env).decode().strip()
    run(root, "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env)
    return blob


def store_files(root: Path | str, paths: Sequence[str]) -> list[str]:
    """Store the bytes of ``paths`` as they are on disk (no filters) as blobs
    (``hash-object -w``: no index, no lock); their IDs, in order."""
    if not paths:
        return []
    return run_chunked(root, ("hash-object", "-w", "--no-filters", "--"), paths).decode().split()


def write_tree(root: Path | str, env: Mapping[str, str] | None = None) -> str:
    """A tree object of the index (the one ``env`` selects); returns its ID."""
    return run(root, "write-tree", env=env).decode().strip()


def commit_tree(
    root: Path | str, tree: str, parents: Sequence[str], message: str, env: Mapping[str, str] | None = None
) -> str:
    """A commit object for ``tree`` (no ref moves, no hooks run)."""
    signed = signs_commits(root)  # as 'git commit' would: commit-tree does not read it
    args = ["commit-tree", tree] + (["-S"] if signed else [])
    for parent in parents:
        args += ["-p", parent]
    try:
        return run(root, *args, input=message.encode("utf-8"), env=env).decode().strip()
    except GitError as exc:
        if not signed:
            raise
        raise GitError(
            exc.message,
            hint="commit.gpgSign is set and git could not sign the commit: fix gpg (gpg.program, "
            "user.signingKey), or stop signing (git config commit.gpgSign false)",
        ) from exc


def valid_branch_name(root: Path | str, name: str) -> bool:
    """Whether git accepts ``name`` as a new branch's name."""
    return run_ok(root, "check-ref-format", "--branch", name) and not name.startswith("-")


def create_branch(root: Path | str, name: str, sha: str) -> None:
    """Point the new branch ``name`` at ``sha``; fails if the branch already exists."""
    run(root, "update-ref", f"refs/heads/{name}", sha, "")  # "": must not exist yet
