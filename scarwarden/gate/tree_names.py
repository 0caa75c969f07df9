"""The file names a folder's tree holds, kept per tree ID and looked up by name.

A checked range must prove that each episode ID it adds is nowhere in the tree it starts
from (its boundary, :mod:`scarwarden.gate.boundary`): at 1M episodes that meant reading
every month folder's tree, ~46 MB of tree objects and 0.3-0.5 s, in every hook run, CI
job and ``verify`` (issue 30). A tree's names are a pure function of its object ID, and
a commit changes one or two month trees; so the names of each tree read are kept in the
ledger cache folder, as ``names/<tree ID>``:

- a header line ``scarwarden-names 1 <tree ID> <count> <body bytes>``, then the body:
  the names of the tree's file entries (not its folders), sorted, each after a NUL
  (``\\0a.yaml\\0b.yaml\\0``; a name holds no NUL);
- checked before use (header, tree ID, body length; else read from git again), written
  whole to a temporary file then renamed, so a reader never sees half of one;
- looked up in the mapped file: the first name after every :data:`BLOCK` bytes is a
  fence, found once per tree (one C ``find`` each: ~130 for a 28,000-name month); an ID
  is placed between two fences by ``bisect`` and searched for, NUL to NUL, in the few
  kilobytes between them (one C ``find``). So a range costs the month trees it changed
  (each read from git once) and a lookup ~1 us at any size. A binary search over the
  names, step by step in Python, was ~5 us a lookup in such a month; a 100-commit
  ``verify`` at 1M episodes makes 4,100 (its 100 IDs in each of 41 folders, issue 30).

Like the ledger statistics (docs/receipts.md), ``SCARWARDEN_LEDGER_CACHE=off`` reads and
writes none: every tree is read from git. The newest :data:`KEEP` entries are kept.
"""

from __future__ import annotations

import bisect
import mmap
import os
from pathlib import Path

#: Entries kept (the most recently used): a few versions of every month folder.
KEEP = 512
FORMAT = b"scarwarden-names 1"
#: Modes of a file entry in a tree (a folder is ``40000``).
FILE_MODES = (b"100644", b"100755", b"120000", b"160000")
#: Bytes between two fences: a lookup searches about this many bytes (C speed). At 4 KB,
#: ~0.9 us a lookup and ~40 us of fences for a 28,000-name month (1 KB: 0.6 us and
#: 140 us; 16 KB: 4 us and 10 us): ~100 IDs are looked up in every tree of a range.
BLOCK = 4096


def file_names(raw: bytes, hash_bytes: int) -> list[bytes]:
    """The names of a raw tree object's file entries (``<mode> <name>\\0<hash>``)."""
    names = []
    pos, end = 0, len(raw)
    while pos < end:
        space = raw.index(b" ", pos)
        nul = raw.index(b"\0", space)
        if raw[pos:space] in FILE_MODES:
            names.append(raw[space + 1 : nul])
        pos = nul + 1 + hash_bytes
    return names


class Names:
    """The sorted names of one tree: a NUL-separated body from ``start`` to the end of
    ``data`` (bytes, or a mapped entry whose header comes first)."""

    def __init__(self, data: bytes | mmap.mmap, start: int = 0) -> None:
        self.data, self.start = data, start
        self._fenced: tuple[list[int], list[bytes]] | None = None

    @classmethod
    def of(cls, names: list[bytes]) -> Names:
        return cls(b"\0" + b"".join(n + b"\0" for n in sorted(set(names))))

    def body(self) -> bytes:
        return bytes(self.data[self.start :])

    def __contains__(self, name: bytes) -> bool:
        data, start = self.data, self.start
        needle = b"\0" + name + b"\0"
        if len(data) - start <= BLOCK:  # a small tree: search it whole
            return data.find(needle, start) >= 0
        fences, names = self._fences()
        # The name, if it is here, lies between the fence before it and the next one,
        # each of its NULs included: the names are sorted.
        j = bisect.bisect_right(names, name) - 1
        return j >= 0 and data.find(needle, fences[j], fences[j + 1] + 1) >= 0

    def _fences(self) -> tuple[list[int], list[bytes]]:
        """(positions of the NULs before the first name, before the first name after
        every :data:`BLOCK` bytes, and the last NUL; the names after each but the last),
        found once."""
        if self._fenced is None:
            data, start = self.data, self.start
            end = len(data) - 1  # the last NUL
            fences, names = [start], [bytes(data[start + 1 : data.find(b"\0", start + 1)])]
            at = data.find(b"\0", start + BLOCK)
            while 0 <= at < end:
                fences.append(at)
                names.append(bytes(data[at + 1 : data.find(b"\0", at + 1)]))
                at = data.find(b"\0", at + BLOCK)
            fences.append(end)
            self._fenced = fences, names
        return self._fenced


class NamesCache:
    """``names/`` under the ledger cache folder (``None``: nothing kept)."""

    def __init__(self, ledger_dir: Path | None) -> None:
        self.folder = ledger_dir / "names" if ledger_dir is not None else None

    def load(self, tree: str) -> Names | None:
        """The names kept for ``tree``, checked; ``None`` when there are none usable."""
        if self.folder is None:
            return None
        path = self.folder / tree
        try:
            with path.open("rb") as f:
                header = f.readline(200)
                fields = header.split()
                size = os.fstat(f.fileno()).st_size
                if len(fields) != 5 or b" ".join(fields[:2]) != FORMAT or fields[2].decode() != tree:
                    return None
                if int(fields[4]) != size - len(header) or int(fields[4]) < 1:
                    return None
                mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            os.utime(path)  # recently used: kept
        except (OSError, ValueError):
            return None
        if mapped[len(header) : len(header) + 1] != b"\0" or mapped[-1:] != b"\0":
            return None
        return Names(mapped, len(header))

    def save(self, tree: str, names: Names, count: int) -> None:
        """Keep ``names`` for ``tree`` (a failure to write only costs a later read)."""
        if self.folder is None:
            return
        body = names.body()
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            import tempfile  # only to write an entry: a hook reading the cache never needs it

            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".tmp-")
            with os.fdopen(fd, "wb") as f:
                f.write(b"%s %s %d %d\n" % (FORMAT, tree.encode(), count, len(body)))
                f.write(body)
            os.replace(tmp, self.folder / tree)
        except OSError:
            return
        self._prune()

    def _prune(self) -> None:
        assert self.folder is not None
        try:
            entries = [p for p in self.folder.iterdir() if not p.name.startswith(".")]
            if len(entries) <= KEEP:
                return
            entries.sort(key=lambda p: p.stat().st_mtime, reverse=True)
            for old in entries[KEEP:]:
                old.unlink(missing_ok=True)
        except OSError:
            return
