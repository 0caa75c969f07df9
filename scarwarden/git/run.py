"""Running the git binary: the one place a ``git`` process is started from argv.

Every other module of this package asks one named question through :func:`run` or
:func:`run_ok`; code outside the package calls those named functions, never these.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from scarwarden.errors import GitError


def no_git_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment minus ``GIT_*`` variables that pin git to another repository.

    Inside a hook git exports GIT_DIR, GIT_INDEX_FILE and friends; a git command run
    in *another* repository (a temporary clone, say) would otherwise act on the hook's
    repository. Same reasoning as pre-commit's ``no_git_env``; identity and config
    variables are kept.
    """
    env = dict(os.environ if environ is None else environ)
    keep = {
        "GIT_EXEC_PATH",
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_SSL_CAINFO",
        "GIT_SSL_NO_VERIFY",
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_SYSTEM",
        "GIT_CONFIG_NOSYSTEM",
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
        "GIT_AUTHOR_DATE",
        "GIT_COMMITTER_DATE",
    }
    return {k: v for k, v in env.items() if not k.startswith("GIT_") or k in keep}


#: Every git process Scarwarden starts reads objects as stored: ``git replace`` must not
#: change what ``episode show`` prints nor what the gate and ``verify`` judge (issue 15).
#: git exports it to its own children (hooks included) as ``GIT_NO_REPLACE_OBJECTS=1``.
NO_REPLACE = ("--no-replace-objects",)


@contextmanager
def without_index(environ: Mapping[str, str] | None = None) -> Iterator[dict[str, str]]:
    """An environment in which git's index is empty: ``GIT_INDEX_FILE`` names a file in
    a new temporary folder (a missing index file reads as an empty one).

    For commands that compare objects only but read the index anyway: ``git diff-tree``
    reads it whole on start (to reuse work-tree files for content it may diff), 0.2-0.3 s
    at 1M episodes (issue 30), and answers the same without it.
    """
    import tempfile  # here: ~3 ms of start-up (shutil, bz2, lzma, random) few commands need

    with tempfile.TemporaryDirectory(prefix="scarwarden-noindex-") as folder:
        yield {
            **(os.environ if environ is None else environ),
            "GIT_INDEX_FILE": os.path.join(folder, "index"),
        }


#: Whether git processes start in a session of their own (:func:`detach_from_terminal`).
_DETACHED = [False]


def detach_from_terminal() -> None:
    """Start every later git process (and the hooks it runs) in a session of its own.

    For a long-lived server that handles SIGINT itself (``scarwarden mcp``, which lets
    the write in flight finish): a Ctrl-C typed on its terminal signals the whole
    foreground process group, so a write's git processes died midway and the write was
    undone. The CLI never calls it: there Ctrl-C stops git with the command."""
    _DETACHED[0] = True


def own_session() -> bool:
    """``start_new_session`` for a git process (:func:`detach_from_terminal`)."""
    return _DETACHED[0]


def run(
    root: Path | str,
    *args: str,
    input: bytes | None = None,
    env: Mapping[str, str] | None = None,
    check: bool = True,
) -> bytes:
    """Run ``git -C root args...`` and return stdout; raise :class:`GitError` on failure."""
    import subprocess  # here: a recall on a current index starts no git (git/folder.py)

    proc = subprocess.run(
        ["git", *NO_REPLACE, "-C", str(root), *args],
        input=input,
        capture_output=True,
        env=None if env is None else dict(env),
        start_new_session=own_session(),
    )
    if check and proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip() or f"exit {proc.returncode}"
        raise GitError(f"git {' '.join(args[:2])} failed: {message}", hint=lock_hint(message))
    return proc.stdout


#: Bytes of arguments one command line of :func:`run_chunked` carries at most. Linux
#: refuses a command line (with the environment) longer than a quarter of the stack
#: limit, 2 MB by default and never less than 128 KiB ("Argument list too long").
ARGV_BUDGET = 64 * 1024


def run_chunked(
    root: Path | str, args: Sequence[str], items: Sequence[str], *, env: Mapping[str, str] | None = None
) -> bytes:
    """``run(root, *args, *items)`` for a list of paths of any length: one git process
    per :data:`ARGV_BUDGET` bytes of ``items`` (one for a usual list, and for none);
    their stdout, in order."""
    outs: list[bytes] = []
    chunk: list[str] = []
    size = 0
    for item in items:
        cost = len(os.fsencode(item)) + 9  # the string, its NUL, its pointer
        if chunk and size + cost > ARGV_BUDGET:
            outs.append(run(root, *args, *chunk, env=env))
            chunk, size = [], 0
        chunk.append(item)
        size += cost
    if chunk or not outs:
        outs.append(run(root, *args, *chunk, env=env))
    return b"".join(outs)


_LOCK_RE = re.compile(r"Unable to create '([^']+\.lock)': File exists")


def lock_hint(message: str) -> str | None:
    """The exact fix when git refuses because a lock file exists: a killed git (or a
    killed Scarwarden run, which was running git) leaves ``index.lock`` behind, and git
    then refuses every command that takes the index until it is removed (issue 15)."""
    import shlex

    match = _LOCK_RE.search(message)
    if not match:
        return None
    lock = match.group(1)
    age = ""
    try:
        import time

        age = f" (left {int(time.time() - os.stat(lock).st_mtime)} s ago)"
    except OSError:
        pass
    return (
        f"{lock} exists{age}: another git command is running, or one was killed and left it. "
        f"If no git or scarwarden command is running in this repository, remove it: rm {shlex.quote(lock)}"
    )


def run_ok(root: Path | str, *args: str, env: Mapping[str, str] | None = None) -> bool:
    """Run ``git -C root args...`` for its exit status alone: True when it is 0."""
    import subprocess

    proc = subprocess.run(
        ["git", *NO_REPLACE, "-C", str(root), *args],
        capture_output=True,
        env=None if env is None else dict(env),
        start_new_session=own_session(),
    )
    return proc.returncode == 0
