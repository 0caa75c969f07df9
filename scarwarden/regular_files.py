"""Reading a file that must be a regular file, never waiting on a FIFO.

Opening a FIFO for reading waits for a writer: a playbook, ``scarwarden.yaml`` or index
that is one would hang every command. A socket cannot be opened at all (``ENXIO``), and
a device is no file of ours. So these files are opened without blocking and refused
unless regular, as ``OSError(ENXIO)`` naming the path, which
:func:`scarwarden.errors.file_access_error` turns into one line (exit 2) at the CLI's
boundary and the Python API's.
"""

from __future__ import annotations

import errno
import io
import os
import stat
from pathlib import Path


def not_regular(path: Path | str) -> OSError:
    """The error for ``path``, which is there but is no regular file (nor a folder)."""
    return OSError(errno.ENXIO, "not a regular file", os.fspath(path))


def check_regular(mode: int, path: Path | str) -> None:
    """Raise for a ``st_mode`` that is neither a regular file nor a folder (a folder
    is refused by the read itself, as ``EISDIR``)."""
    if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        raise not_regular(path)


def is_refusal(exc: BaseException) -> bool:
    """Whether ``exc`` is the refusal of a FIFO, socket or device where a file should be:
    the user's to fix, so a best-effort reader raises it rather than warn and go on."""
    return isinstance(exc, OSError) and exc.errno == errno.ENXIO


def refuse_special(path: Path) -> None:
    """Raise ``ENXIO`` when ``path`` is a FIFO, socket or device, without opening it (so
    nothing waits); a path that is missing, a folder or cannot be looked at is left to
    whatever reads it next."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return
    check_regular(mode, path)


def read_regular(path: Path) -> bytes:
    """The bytes of the file at ``path``; ``OSError`` as :meth:`Path.read_bytes` raises
    it, and ``ENXIO`` for a FIFO, socket or device (checked before any read waits)."""
    return read_with_inode(path)[0]


def read_with_inode(path: Path) -> tuple[bytes, int]:
    """:func:`read_regular`, and the inode number of the file that was read."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):  # named, as Path.read_bytes names it
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), os.fspath(path))
        check_regular(st.st_mode, path)
        with open(fd, "rb", closefd=False) as file:
            return file.read(), st.st_ino
    finally:
        os.close(fd)


def read_regular_text(path: Path) -> str:
    """:func:`read_regular` as UTF-8 text, line endings read as :meth:`Path.read_text`
    reads them (universal newlines)."""
    return io.TextIOWrapper(io.BytesIO(read_regular(path)), encoding="utf-8").read()
