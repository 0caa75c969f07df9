"""Each commit's diff against a parent, kept by the two commit IDs (issue 30).

A walk (``verify``, ``check --from-ref``, the reference-transaction and pre-push hooks)
diffs every commit of its range against its parents. At 1M episodes a month folder
holds ~28,000 files, and git reads both versions of that month's tree for every commit:
O(month) per commit, every time the same commit is walked again (each hook run, CI job
and ``verify`` over history the hooks already checked). A diff is a pure function of the
two commits (their IDs fix every byte of both trees), so it is kept, like the ledger
statistics, in the ledger cache folder: ``diffs/<commit>-<parent>`` (``root`` for a root
commit), a header line (format, the two commits, the folder diffed, the SHA-256 of the
rest) then the records as JSON. An entry is checked before use (else git is asked
again) and written whole then renamed; ``SCARWARDEN_LEDGER_CACHE=off`` reads and writes
none, so git diffs every commit (docs/receipts.md, the chain of trust).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scarwarden import git
from scarwarden.gate.ledger_files import cache_dir

FORMAT = "scarwarden-diff 1"
#: Entries kept (the most recently written): a few thousand commits of history.
KEEP = 4096
Pair = tuple[str, str | None]


def _name(pair: Pair) -> str:
    return f"{pair[0]}-{pair[1] or 'root'}"


def _header(pair: Pair, folder: str, body: bytes) -> dict[str, Any]:
    digest = hashlib.sha256(body).hexdigest()
    return {"format": FORMAT, "commit": pair[0], "parent": pair[1], "folder": folder, "sha256": digest}


def _encode(changes: list[git.RawChange]) -> bytes:
    rows = [[om, nm, ob, nb, c.status, c.path, c.old_path, c.score] for om, nm, ob, nb, c in changes]
    return json.dumps(rows, separators=(",", ":")).encode("ascii")


def _decode(body: bytes) -> list[git.RawChange]:
    rows = json.loads(body)
    return [
        (str(om), str(nm), str(ob), str(nb), git.Change(st, p, op, sc))
        for om, nm, ob, nb, st, p, op, sc in rows
    ]


class DiffCache:
    """``diffs/`` under the ledger cache folder of the repository at ``root``."""

    def __init__(self, root: Path) -> None:
        where = cache_dir(root)
        self.folder = None if where is None else where / "diffs"

    def load(self, pair: Pair, folder: str) -> list[git.RawChange] | None:
        if self.folder is None:
            return None
        try:
            head, _, body = (self.folder / _name(pair)).read_bytes().partition(b"\n")
            if json.loads(head) != _header(pair, folder, body):
                return None
            return _decode(body)
        except (OSError, ValueError, TypeError):
            return None  # missing or damaged: git diffs it again

    def save(self, pair: Pair, folder: str, changes: list[git.RawChange]) -> None:
        if self.folder is None:
            return
        body = _encode(changes)
        head = json.dumps(_header(pair, folder, body), sort_keys=True).encode("ascii")
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            import tempfile  # only to write an entry: a hook reading the cache never needs it

            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".tmp-")
            with os.fdopen(fd, "wb") as f:
                f.write(head + b"\n" + body)
            os.replace(tmp, self.folder / _name(pair))
        except OSError:
            pass  # a read-only git folder: diffed again next time

    def prune(self) -> None:
        if self.folder is None:
            return
        try:
            entries = [p for p in self.folder.iterdir() if not p.name.startswith(".")]
            if len(entries) > KEEP:
                entries.sort(key=lambda p: p.stat().st_mtime, reverse=True)
                for old in entries[KEEP:]:
                    old.unlink(missing_ok=True)
        except OSError:
            pass


def diff_pairs(root: Path, pairs: Sequence[Pair], folder: str) -> list[list[git.RawChange]]:
    """:func:`scarwarden.git.diff_tree_pairs` of ``pairs`` under ``folder``: the kept
    ones read, the others from one ``git diff-tree --stdin`` and kept."""
    cache = DiffCache(root)
    known = {p: d for p in dict.fromkeys(pairs) if (d := cache.load(p, folder)) is not None}
    missing = [p for p in dict.fromkeys(pairs) if p not in known]
    if missing:
        for pair, changes in zip(missing, git.diff_tree_pairs(root, missing, folder), strict=True):
            known[pair] = changes
            cache.save(pair, folder, changes)
        cache.prune()
    return [known[p] for p in pairs]
