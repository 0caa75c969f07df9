"""The repository itself: where it is, what HEAD points at, its settings.

(Git's own repository; :mod:`scarwarden.repo` is the memory folder inside it.)
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path

from scarwarden.errors import UsageError
from scarwarden.git import batch
from scarwarden.git.run import NO_REPLACE, run


def toplevel(path: Path | str) -> Path | None:
    """The work tree root containing ``path``, or ``None`` outside a git repository."""
    proc = subprocess.run(["git", "-C", str(path), "rev-parse", "--show-toplevel"], capture_output=True)
    if proc.returncode != 0:
        return None
    return Path(proc.stdout.decode().strip())


def require_toplevel(path: Path | str) -> Path:
    """Like :func:`toplevel`, but refuse (with a hint) outside a git repository."""
    root = toplevel(path)
    if root is None:
        _refuse_git_folder(path)
        raise UsageError(
            f"{path} is not inside a git repository", hint="run 'git init' first, or pass --repo PATH"
        )
    return root


def _refuse_git_folder(path: Path | str) -> None:
    """A bare repository, or a folder inside a ``.git``: a repository with no working
    tree for the memory files here, where 'git init' would be the wrong advice."""
    args = ["git", "-C", str(path), "rev-parse", "--is-bare-repository", "--is-inside-git-dir"]
    proc = subprocess.run(args, capture_output=True)
    bare, inside = (proc.stdout.decode().split() + ["", ""])[:2]
    if proc.returncode != 0 or inside != "true":
        return
    if bare == "true":
        said, hint = "is a bare git repository", f"clone it (git clone {path}) and run in the clone"
    else:
        said, hint = "is inside a git folder", "run in the working tree the git folder belongs to"
    raise UsageError(f"{path} {said}: it has no working tree for the memory files", hint=hint)


def init_repo(root: Path | str, env: Mapping[str, str] | None = None) -> None:
    """``git init``: make ``root`` (which must exist) a new, empty repository."""
    run(root, "init", "-q", env=env)


def git_dir(root: Path | str) -> Path:
    """The repository's git directory (``.git``, or wherever a worktree keeps it)."""
    out = run(root, "rev-parse", "--absolute-git-dir").decode().strip()
    return Path(out)


def git_dirs(root: Path | str) -> list[Path]:
    """Every folder git keeps this repository in, resolved: its git directory and, in a
    linked worktree, the common one (config, objects, refs) it shares with the others."""
    out = run(root, "rev-parse", "--absolute-git-dir", "--git-common-dir").decode().splitlines()
    return list(dict.fromkeys((Path(root) / line).resolve() for line in out if line))


def git_path(root: Path | str, name: str) -> Path:
    """Where git keeps ``name`` (``rev-parse --git-path``: ``core.hooksPath`` and
    worktrees honoured), as git prints it: relative to ``root`` unless absolute."""
    known = batch.remembered_path(root, name)
    if known is None:
        known = Path(run(root, "rev-parse", "--git-path", name).decode().strip())
        batch.remember_path(root, name, known)
    return known


def head(root: Path | str) -> str | None:
    """The commit HEAD points at, or ``None`` before the first commit."""
    return rev_parse(root, "HEAD")


def rev_parse(root: Path | str, rev: str) -> str | None:
    """The commit ``rev`` names, or ``None`` when it names none."""
    if batch.serves([rev]) and not rev.startswith("-"):
        fields = batch.info(root, [f"{rev}^{{commit}}"], None)[0]
        return None if fields[-1] in (b"missing", b"ambiguous") else fields[0].decode()
    proc = subprocess.run(
        ["git", *NO_REPLACE, "-C", str(root), "rev-parse", "-q", "--verify", f"{rev}^{{commit}}"],
        capture_output=True,
    )
    if proc.returncode != 0:
        return None
    return proc.stdout.decode().strip()


def current_branch(root: Path | str) -> str | None:
    """The branch HEAD is on, or ``None`` on a detached HEAD."""
    proc = subprocess.run(
        ["git", "-C", str(root), "symbolic-ref", "-q", "--short", "HEAD"], capture_output=True
    )
    return proc.stdout.decode().strip() or None if proc.returncode == 0 else None


def config_get(root: Path | str, key: str) -> str | None:
    """A git setting's value, or ``None`` when it is not set."""
    proc = subprocess.run(["git", "-C", str(root), "config", "--get", key], capture_output=True)
    return proc.stdout.decode().strip() if proc.returncode == 0 else None


def set_config(root: Path | str, key: str, value: str, env: Mapping[str, str] | None = None) -> None:
    """Set a git setting in the repository's own config (``git config key value``)."""
    run(root, "config", key, value, env=env)
