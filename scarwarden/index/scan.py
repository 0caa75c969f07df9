"""What is on disk: episode folders and their mtimes, the YAML files in them (and their
listing summed), file signatures and git blob IDs, judged with git's "racy" caution;
and :func:`in_thread`, which lets a refresh or a rebuild wait on git while it reads
the disk."""

from __future__ import annotations

import operator
import os
import threading
import zlib
from collections.abc import Callable, Mapping
from itertools import repeat
from pathlib import Path

from scarwarden.logs import log
from scarwarden.repo import MemoryRepo

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeVar

    _T = TypeVar("_T")

#: A folder or file modified this recently may change again within the same clock tick
#: of the file system without its mtime moving (git's "racy" problem): such an mtime is
#: stored as unknown, so the next refresh looks again instead of trusting it.
RACY_NS = 2_000_000_000


def scan_dirs(repo: MemoryRepo) -> dict[str, int]:
    """Episode folders (``episodes``, ``YYYY``, ``YYYY/MM``) -> mtime_ns."""
    out: dict[str, int] = {}
    base = repo.episodes_dir
    rel = repo.episodes_rel

    def walk(path: Path, relpath: str, depth: int) -> None:
        try:
            st = path.stat()
        except FileNotFoundError:
            return
        out[relpath] = st.st_mtime_ns
        if depth == 2:
            return
        try:
            with os.scandir(path) as it:
                for entry in it:
                    if entry.is_dir(follow_symlinks=False):
                        walk(Path(entry.path), f"{relpath}/{entry.name}", depth + 1)
        except FileNotFoundError:
            return

    walk(base, rel, 0)
    return out


def list_yaml(repo: MemoryRepo, dir_rel: str) -> dict[str, int]:
    """The ``.yaml`` files directly in one folder (paths relative to the root), with
    their inode numbers as the folder lists them (no stat: a file saved by rename over
    the old one, as ``sed -i`` and most editors do, has a new one)."""
    return {f"{dir_rel}/{name}": inode for name, inode in list_names(repo, dir_rel).items()}


def list_names(repo: MemoryRepo, dir_rel: str) -> dict[str, int]:
    """:func:`list_yaml` by file name (no path built per file: a month folder holds
    28,000 files at 1M episodes, and a refresh needs the paths of the few that changed)."""
    names: dict[str, int] = {}
    try:
        with os.scandir(repo.root / dir_rel) as it:
            for e in it:
                if not e.name.endswith(".yaml"):
                    continue
                if e.is_file(follow_symlinks=False):
                    names[e.name] = e.inode()
                else:  # a FIFO, a socket, a link or a folder: no episode, and git adds none
                    log.warning("skipped %s/%s: not a regular file", dir_rel, e.name)
    except (FileNotFoundError, NotADirectoryError):
        return {}
    return names


#: A folder's listing summed: (files, sum of inodes, sum of the names' CRC-32, sum of
#: CRC-32 x inode), each modulo 2**63 (what SQLite's INTEGER holds).
Sums = tuple[int, int, int, int]
SUMS_MODULUS = 1 << 63


def listing_sums(listing: Mapping[str, int]) -> Sums:
    """The sums of a folder's listing (file name -> inode). Sums, so that files can be
    taken out of them (:func:`sums_minus`). Any one file added, removed or replaced
    (a new inode), and any two files that swapped names, change them; a change they
    miss needs two or more at once whose inodes cancel out and whose names' CRC-32
    sums collide (1 in 2**32)."""
    # Names as the file system gives them (undecodable bytes as surrogates).
    names = map(str.encode, listing, repeat("utf-8"), repeat("surrogateescape"))
    crcs = list(map(zlib.crc32, names))
    inodes = listing.values()
    return (
        len(crcs),
        sum(inodes) % SUMS_MODULUS,
        sum(crcs) % SUMS_MODULUS,
        sum(map(operator.mul, crcs, inodes)) % SUMS_MODULUS,
    )


def sums_minus(sums: Sums, taken: Sums) -> Sums:
    """``sums`` without the files summed in ``taken``."""
    return (
        sums[0] - taken[0],
        (sums[1] - taken[1]) % SUMS_MODULUS,
        (sums[2] - taken[2]) % SUMS_MODULUS,
        (sums[3] - taken[3]) % SUMS_MODULUS,
    )


def playbook_signature(repo: MemoryRepo) -> str:
    """The playbook file's (size, mtime, inode), or ``missing``: when it moves, the
    rules are read again."""
    try:
        st = repo.playbook_path.stat()
    except FileNotFoundError:
        return "missing"
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"


def trusted_mtime(mtime_ns: int, now_ns: int) -> int:
    """``mtime_ns``, or -1 (unknown) when it is too recent to trust (:data:`RACY_NS`)."""
    return mtime_ns if now_ns - mtime_ns > RACY_NS else -1


def trusted_sig(sig: str, now_ns: int) -> str:
    """A file signature, or ``racy`` when its mtime is too recent to trust."""
    parts = sig.split(":")
    return "racy" if len(parts) >= 2 and now_ns - int(parts[1]) <= RACY_NS else sig


def file_sig(path: Path, now_ns: int) -> str | None:
    """A file's trusted (size, mtime, inode) signature; ``None`` when it is gone."""
    try:
        st = path.stat()
    except OSError:
        return None
    return trusted_sig(f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}", now_ns)


def in_thread(work: Callable[..., _T], *args: object) -> Callable[[], _T]:
    """Start ``work(*args)`` in a thread; the function returned waits for its result
    (or raises what it raised)."""
    out: list[_T] = []
    failed: list[Exception] = []

    def target() -> None:
        try:
            out.append(work(*args))
        except Exception as exc:  # noqa: BLE001 - not lost in the thread: raised again by result()
            failed.append(exc)

    thread = threading.Thread(target=target, name="scarwarden-git", daemon=True)
    thread.start()

    def result() -> _T:
        thread.join()
        if failed:
            raise failed[0]
        return out[0]

    return result
