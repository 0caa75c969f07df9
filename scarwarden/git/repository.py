"""The repository itself: where it is, what HEAD points at, its settings.

(Git's own repository; :mod:`scarwarden.repo` is the memory folder inside it.)
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from scarwarden.errors import UsageError
from scarwarden.git import batch, folder
from scarwarden.git.run import NO_REPLACE, own_session, run


def toplevel(path: Path | str) -> Path | None:
    """The work tree root containing ``path``, or ``None`` outside a git repository.
    Read from the folders where they are plain (:mod:`scarwarden.git.folder`), else
    asked of git."""
    found = folder.toplevel(os.fspath(path))
    if found is not None:
        return Path(found)
    import subprocess  # ~13M instructions: only when git is asked (issue 30)

    proc = subprocess.run(
        ["git", "-C", str(path), "rev-parse", "--show-toplevel"],
        capture_output=True,
        start_new_session=own_session(),
    )
    if proc.returncode != 0:
        return None
    return Path(os.fsdecode(proc.stdout.rstrip(b"\n")))  # a folder name need not be UTF-8


def require_toplevel(path: Path | str) -> Path:
    """Like :func:`toplevel`, but refuse (with a hint) outside a git repository."""
    root = toplevel(path)
    if root is None:
        import subprocess

        proc = subprocess.run(
            ["git", "-C", str(path), "rev-parse", "--is-bare-repository", "--is-inside-git-dir"],
            capture_output=True,
            start_new_session=own_session(),
        )
        bare, _, inside = proc.stdout.decode().partition("\n")
        if proc.returncode == 0 and bare == "true":
            raise UsageError(
                f"{path} is a bare git repository: it has no working tree",
                hint=f"Scarwarden works in a clone with one: git clone {path}, then run it there",
            )
        if proc.returncode == 0 and inside.strip() == "true":
            raise UsageError(
                f"{path} is inside a git folder (.git), not in a working tree",
                hint="run it in the repository's own folder, the one that holds .git",
            )
        fatal = [line[7:] for line in os.fsdecode(proc.stderr).splitlines() if line.startswith("fatal: ")]
        if fatal and "not a git repository" not in fatal[0]:  # a bad config, dubious ownership...
            raise UsageError(
                f"git cannot open the repository at {path}: {fatal[0]}",
                hint="fix what git says ('git status' there says it in full), then run the command again",
            )
        raise UsageError(
            f"{path} is not inside a git repository", hint="run 'git init' first, or pass --repo PATH"
        )
    return root


def init_repo(root: Path | str, env: Mapping[str, str] | None = None) -> None:
    """``git init``: make ``root`` (which must exist) a new, empty repository."""
    run(root, "init", "-q", env=env)


def git_dir(root: Path | str) -> Path:
    """The repository's git directory (``.git``, or wherever a worktree keeps it)."""
    out = os.fsdecode(run(root, "rev-parse", "--absolute-git-dir")).strip()
    return Path(out)


def git_dirs(root: Path | str) -> list[Path]:
    """Every folder git keeps this repository in, resolved: its git directory and, in a
    linked worktree, the common one (config, objects, refs) it shares with the others."""
    out = os.fsdecode(run(root, "rev-parse", "--absolute-git-dir", "--git-common-dir")).splitlines()
    return list(dict.fromkeys((Path(root) / line).resolve() for line in out if line))


def git_path(root: Path | str, name: str) -> Path:
    """Where git keeps ``name`` (``rev-parse --git-path``: ``core.hooksPath`` and
    worktrees honoured), as git prints it: relative to ``root`` unless absolute."""
    known = batch.remembered_path(root, name)
    if known is None:
        known = (_index_path(root) if name == "index" else None) or Path(
            os.fsdecode(run(root, "rev-parse", "--git-path", name)).strip()
        )
        batch.remember_path(root, name, known)
    return known


def _index_path(root: Path | str) -> Path | None:
    """git's ``--git-path index`` when ``root`` is a plain work tree's root
    (:func:`scarwarden.git.folder.toplevel`): ``GIT_INDEX_FILE`` as set (git, which runs
    at the root, prints it as it is; a hook gets it from every commit), else
    ``.git/index``. None: git is asked."""
    if folder.toplevel(os.fspath(root)) != os.path.realpath(root):
        return None
    named = os.environ.get("GIT_INDEX_FILE")
    if named is None:
        return Path(".git", "index")
    return Path(named) if named else None  # set but empty: git's own answer ("./")


def head(root: Path | str, *, known: str | None = None) -> str | None:
    """The commit HEAD points at, or ``None`` before the first commit. ``known``: the
    commit git said HEAD named before (the index's); when HEAD's ref files still name
    it, it is the answer without asking git (:func:`scarwarden.git.folder.head_is`)."""
    if known is not None and folder.head_is(os.fspath(root), known):
        return known
    return rev_parse(root, "HEAD")


def rev_parse(root: Path | str, rev: str) -> str | None:
    """The commit ``rev`` names, or ``None`` when it names none."""
    if batch.serves([rev]) and not rev.startswith("-"):
        fields = batch.info(root, [f"{rev}^{{commit}}"], None)[0]
        return None if fields[-1] in (b"missing", b"ambiguous") else fields[0].decode()
    import subprocess

    proc = subprocess.run(
        ["git", *NO_REPLACE, "-C", str(root), "rev-parse", "-q", "--verify", f"{rev}^{{commit}}"],
        capture_output=True,
        start_new_session=own_session(),
    )
    if proc.returncode != 0:
        return None
    return proc.stdout.decode().strip()


def current_branch(root: Path | str) -> str | None:
    """The branch HEAD is on, or ``None`` on a detached HEAD."""
    import subprocess

    proc = subprocess.run(
        ["git", "-C", str(root), "symbolic-ref", "-q", "--short", "HEAD"],
        capture_output=True,
        start_new_session=own_session(),
    )
    return os.fsdecode(proc.stdout).strip() or None if proc.returncode == 0 else None


def config_get(root: Path | str, key: str, *, kind: str | None = None) -> str | None:
    """A git setting's value, or ``None`` when it is not set; ``kind="bool"``: as git
    reads it (``yes``, ``on`` and ``1`` are ``true``)."""
    import subprocess

    typed = [f"--type={kind}"] if kind else []
    proc = subprocess.run(
        ["git", "-C", str(root), "config", *typed, "--get", key],
        capture_output=True,
        start_new_session=own_session(),
    )
    return os.fsdecode(proc.stdout).strip() if proc.returncode == 0 else None


def signs_commits(root: Path | str) -> bool:
    """Whether ``commit.gpgSign`` asks for every commit to be signed: ``git commit``
    reads it, ``git commit-tree`` (what the write doors use) does not."""
    return config_get(root, "commit.gpgSign", kind="bool") == "true"


def set_config(root: Path | str, key: str, value: str, env: Mapping[str, str] | None = None) -> None:
    """Set a git setting in the repository's own config (``git config key value``)."""
    run(root, "config", key, value, env=env)
