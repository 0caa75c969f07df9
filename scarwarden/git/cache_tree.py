"""The tree git's index already knows it holds (its cache tree), read without reading
the index's entries (issue 30: the pre-commit hook at a million episodes).

``git commit`` brings the index's cache tree up to date and writes its trees before it
runs the pre-commit hook (``builtin/commit.c``, ``prepare_index``), and it commits that
very tree unless a hook changes the index. Comparing HEAD's tree with it
(``git diff-tree``) skips every folder whose tree ID did not change: O(change). Asking
``git diff --cached`` instead reads all of the index's entries first, ~130 ms of a
million-file index on 2 cores, before the diff itself.

The cache tree lives in the index's ``TREE`` extension, after the entries. Finding it
without walking the entries needs the ``EOIE`` extension (end of index entries), which
git writes when ``index.recordEndOfIndexEntries`` is set (:mod:`~scarwarden.git.scale`
sets it). The root's entry count is ``-1`` when any path under it changed since the tree
was last computed (``git add`` invalidates the folders above the file), so a valid root
is the tree of every entry; anything else (no extension, an invalid root, an index git
is in the middle of rewriting) answers ``None`` and the caller asks git's index as
before. Format: git's Documentation/gitformat-index.txt.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Mapping
from pathlib import Path

from scarwarden.git.repository import git_path
from scarwarden.git.run import run

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import BinaryIO

#: The hash lengths an index may use (SHA-1, SHA-256), told apart by EOIE's size.
_HASH_SIZES = (20, 32)


def index_file(root: Path | str, env: Mapping[str, str] | None = None) -> Path:
    """The index git would read under ``env`` (``GIT_INDEX_FILE`` honoured, resolved
    against ``root`` as git run in ``root`` resolves it)."""
    if env is None:  # git_path honours GIT_INDEX_FILE and is remembered in a session
        return Path(root) / git_path(root, "index")  # an absolute path stays itself
    named = env.get("GIT_INDEX_FILE") or os.fsdecode(run(root, "rev-parse", "--git-path", "index", env=env))
    return Path(root) / named.strip()


def staged_tree(index: Path) -> str | None:
    """The root tree ID of ``index``'s cache tree when it is valid, else ``None``."""
    try:
        with open(index, "rb") as f:
            return _root_tree(f)
    except (OSError, ValueError, struct.error):
        return None


def _root_tree(file: BinaryIO) -> str | None:
    header = file.read(12)
    if len(header) < 12 or header[:4] != b"DIRC":
        return None
    size = file.seek(0, os.SEEK_END)
    for hash_size in _HASH_SIZES:
        at = size - hash_size - 8 - (4 + hash_size)  # EOIE: the last extension
        if at < 12:
            continue
        file.seek(at)
        eoie = file.read(12)
        if eoie[:4] != b"EOIE" or struct.unpack(">I", eoie[4:8])[0] != 4 + hash_size:
            continue
        start = struct.unpack(">I", eoie[8:12])[0]
        if not 12 <= start <= at:
            return None
        file.seek(start)
        return _tree_in(file.read(at - start), hash_size)
    return None


def _tree_in(extensions: bytes, hash_size: int) -> str | None:
    """The valid root ID in the ``TREE`` extension among ``extensions``, if any."""
    i = 0
    while i + 8 <= len(extensions):
        signature = extensions[i : i + 4]
        (length,) = struct.unpack(">I", extensions[i + 4 : i + 8])
        body = extensions[i + 8 : i + 8 + length]
        if len(body) != length:
            return None
        if signature == b"TREE":
            nul = body.index(b"\0")  # the root's path is empty: nul == 0
            newline = body.index(b"\n", nul)
            count, _subtrees = body[nul + 1 : newline].split(b" ")
            if nul != 0 or int(count) < 0:
                return None
            oid = body[newline + 1 : newline + 1 + hash_size]
            return oid.hex() if len(oid) == hash_size else None
        i += 8 + length
    return None
