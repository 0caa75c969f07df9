"""Atomic writes and the advisory locks (``flock``) that serialise processes working
on one repository.

A file is replaced whole or not at all (a temporary file in the same folder, then
``os.replace``), so a reader or a crash never sees half of it; writers (the CLI, the
MCP server, the web UI) take :func:`write_lock` in turn.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from scarwarden.repo import MemoryRepo


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file in the same folder and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (created if missing) for the block.

    Locks belong to the open file, so a second ``file_lock`` on the same path in the
    same process waits like any other process would: never nest them.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def write_lock(repo: MemoryRepo) -> AbstractContextManager[None]:
    """Serialise writers (CLI, MCP server, web UI) on one repository."""
    return file_lock(repo.state_dir / "write.lock")
