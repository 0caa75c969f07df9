"""Our temporary files in the git directory: named with the PID that made them, so a
killed run's leftovers are recognised and removed by the next run
(:mod:`scarwarden.git.index_commit` writes a private index and a message file; the
gate's ledger cache, ``.git/scarwarden/ledger``, writes ``<file>.tmp-<pid>`` before
renaming it: a run killed mid-write left those behind for good, issue 27)."""

from __future__ import annotations

import os
from pathlib import Path

#: Names of our temporaries in the git directory: ``<prefix><pid>-<random>``.
INDEX_PREFIX = "scarwarden-index-"
MESSAGE_PREFIX = "scarwarden-msg-"
#: The index entries a staging shell reads (:mod:`scarwarden.git.staging`).
LIST_PREFIX = "scarwarden-list-"


def pid_alive(pid: int) -> bool:
    """Whether a process with this ID exists (another user's counts): whose leftovers
    are safe to remove (here, the files layer's temporaries, a rebuild's file)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # someone else's process, or no PID at all: left alone
    return True


#: Folders of the git directory whose files are written as ``<name>.tmp-<pid>`` first.
CACHE_FOLDERS = ("scarwarden/ledger",)


def remove_dead_temporaries(gitdir: Path) -> list[Path]:
    """Remove our temporary index, message and list files (and their ``.lock``), and the
    caches' ``.tmp-<pid>`` files, whose process is gone: what a killed run leaves in
    the git directory."""
    removed: list[Path] = []
    for prefix in (INDEX_PREFIX, MESSAGE_PREFIX, LIST_PREFIX):
        for path in gitdir.glob(f"{prefix}*"):
            _remove_if_dead(path, path.name[len(prefix) :].split("-", 1)[0], removed)
    for folder in CACHE_FOLDERS:
        for path in (gitdir / folder).glob("*.tmp-*"):
            _remove_if_dead(path, path.name.rpartition(".tmp-")[2], removed)
    return removed


def _remove_if_dead(path: Path, pid: str, removed: list[Path]) -> None:
    if pid.isdigit() and not pid_alive(int(pid)):
        try:
            path.unlink()
            removed.append(path)
        except OSError:
            pass


def temp_name(gitdir: Path, prefix: str) -> str:
    import tempfile  # here: ~3 ms of start-up (shutil, random...) that recall never needs

    fd, path = tempfile.mkstemp(prefix=f"{prefix}{os.getpid()}-", dir=str(gitdir))
    os.close(fd)
    return path


def drop(path: str) -> None:
    for leftover in (path, path + ".lock"):
        Path(leftover).unlink(missing_ok=True)
