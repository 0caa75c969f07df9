"""Atomic writes and the advisory locks (``flock``) that serialise processes working
on one repository.

A file is replaced whole or not at all (a temporary file in the same folder, then
``os.replace``), so a reader or a crash never sees half of it; writers (the CLI, the
MCP server, the web UI) take :func:`write_lock` in turn. A file with more than one name
(a hard link) is refused (:func:`refuse_hard_link`).
"""

from __future__ import annotations

import fcntl
import os
import stat
import threading
from collections.abc import Collection, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from scarwarden.git.temps import pid_alive
from scarwarden.repo import MemoryRepo


def atomic_write(path: Path, data: bytes, *, tidy: bool = True) -> None:
    """Write ``data`` to ``path`` via a temporary file in the same folder and a rename.

    A new file gets the mode a plain ``open()`` would give it (0644 under umask 022):
    ``mkstemp`` creates its file 0600, which would leave the playbook, episodes and
    AGENTS.md unreadable to other users and services (issue 16). A file replaced keeps
    its mode, as writing into it would: a read-only (0444) AGENTS.md or playbook stays
    read-only, and git sees no mode change. A hard-linked file is refused, nothing
    written (:func:`refuse_hard_link`). ``tidy``: first remove a killed write's
    temporary file of ``path`` (:func:`remove_stale_temps`, which lists the folder); a
    batch that tidied the folder once (:func:`remove_dead_temps`) passes False, else a
    batch of n new files in one folder listed it n times (4,000 episodes: 6 s of 17).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    refuse_hard_link(path)
    if tidy:
        remove_stale_temps(path)
    # The PID in the name lets the next run remove it as soon as this process is gone.
    try:
        import tempfile  # here: ~3 ms of start-up (shutil, random...) that a read never needs

        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}-", suffix=".tmp", dir=path.parent)
    except OSError as exc:  # name the folder that refused, not a temporary file never made
        raise OSError(exc.errno, exc.strerror, os.fspath(path.parent)) from None
    try:
        os.fchmod(fd, _mode_for(path))
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def refuse_hard_link(path: Path) -> None:
    """Refuse to replace a file that has other names (hard links): the rename would give
    ``path`` a new file and leave the other names with the old content, silently (git's
    checkout and Emacs's default backups break links the same way). Writing in place
    instead (vim's ``backupcopy=auto``) would give up atomicity, and write into whatever
    else shares the file: the original of a ``cp -al`` copy is another repository."""
    import shlex

    from scarwarden.errors import FileAccessError

    try:
        status = os.lstat(path)
    except OSError:
        return  # missing, or unreadable: the write says what is wrong
    if not stat.S_ISREG(status.st_mode) or status.st_nlink < 2:
        return
    name = shlex.quote(os.fspath(path))
    raise FileAccessError(
        f"{os.fspath(path)}: the file has {status.st_nlink} names (hard links); writing it "
        "gives this name a new file, and the other names would keep the old text; it was "
        "not written",
        hint=f"make it a file of its own (cp {name} {name}.copy && mv {name}.copy {name}), "
        f"then run the command again; to share it, make the other name a symlink to it "
        f"(ln -sf {name} OTHER-NAME)",
    )


def _mode_for(path: Path) -> int:
    """The mode of the file at ``path``; for a new one, what ``open()`` would give it."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:  # missing (or a dangling link): a new file
        return 0o666 & ~current_umask()


#: A temporary file of :func:`atomic_write` older than this belongs to a dead run (a
#: write takes milliseconds): the next write of the same file removes it.
STALE_TEMP_SECONDS = 600


def remove_stale_temps(path: Path) -> list[Path]:
    """Remove ``.<name>.*.tmp`` files next to ``path`` left by a killed write (issue 15):
    at once when the PID in the name is a dead process, else after
    :data:`STALE_TEMP_SECONDS`."""
    import time

    removed = []
    cutoff = time.time() - STALE_TEMP_SECONDS
    prefix = f".{path.name}."
    for candidate in path.parent.glob(f".{glob_escape(path.name)}.*.tmp"):
        pid = candidate.name[len(prefix) :].split("-", 1)[0]
        try:
            if (pid.isdigit() and not pid_alive(int(pid))) or candidate.lstat().st_mtime < cutoff:
                candidate.unlink()
                removed.append(candidate)
        except OSError:
            continue  # gone already, or not ours to remove
    return removed


def remove_dead_temps(folder: Path, names: Collection[str] = ()) -> list[Path]:
    """Remove every ``.*.<pid>-*.tmp`` in ``folder`` whose process is gone: a killed
    write of a new file (an episode) leaves one that no later write of the same name
    would find. ``names``: files about to be written there, whose temporaries are also
    removed after :data:`STALE_TEMP_SECONDS` (their PID reused), as
    :func:`remove_stale_temps` does for one name, in one listing for them all."""
    import time

    removed = []
    cutoff = time.time() - STALE_TEMP_SECONDS
    for candidate in folder.glob(".*.tmp"):
        # ".<name>.<pid>-<random>.tmp", as atomic_write names it
        head = candidate.name[1:-4]
        of, _, pid = (head.rpartition("-")[0] or head).rpartition(".")
        try:
            if (pid.isdigit() and not pid_alive(int(pid))) or (
                of in names and candidate.lstat().st_mtime < cutoff
            ):
                candidate.unlink()
                removed.append(candidate)
        except OSError:
            continue  # gone already, or not ours to remove
    return removed


def glob_escape(name: str) -> str:
    import glob

    return glob.escape(name)


_UMASK_LOCK = threading.Lock()


def current_umask() -> int:
    """The process's umask, read without changing it where Linux allows (``/proc``).

    ``os.umask`` can only be read by setting it; the fallback sets it back at once,
    under a lock, since the MCP server writes from worker threads.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    with _UMASK_LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (created if missing) for the block.

    Locks belong to the open file, so a second ``file_lock`` on the same path in the
    same process waits like any other process would: never nest them.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        _HELD.add(handle.fileno())
        try:
            yield
        finally:
            _HELD.discard(handle.fileno())
            fcntl.flock(handle, fcntl.LOCK_UN)


_HELD: set[int] = set()


def held_lock_fds() -> tuple[int, ...]:
    """The descriptors of the locks this process holds: a child given them (``pass_fds``)
    keeps the lock held until it exits, even if we are killed first (issue 15: the git
    steps that must not be interrupted run that way)."""
    return tuple(sorted(_HELD))


def write_lock(repo: MemoryRepo) -> AbstractContextManager[None]:
    """Serialise writers (CLI, MCP server, web UI) on one repository."""
    return file_lock(repo.state_dir / "write.lock")
