"""The support check's result at a tree, kept by what decides it (issue 30: the hooks).

Every range check ends with the support check of the tree at its end
(:func:`scarwarden.gate.support.check_tree_support`): every active rule's sentences
against the episodes they name. A branch move that adds one episode leaves the playbook
and its cited episodes as they were, yet the check parsed the ~120 cited episodes and
stemmed every sentence again: ~40% of the reference-transaction hook's time at 1k
episodes (profiled). Its result is a pure function of the playbook's bytes, the blob of
each cited episode (a blob ID fixes its bytes) and this code (:data:`VERSION`), so it
is kept under a key made of exactly those (:func:`key`), in the ledger statistics' folder
(``.git/scarwarden/ledger/support/``: a CI cache that restores the statistics restores
these too). ``SCARWARDEN_LEDGER_CACHE=off`` (no cache folder) derives it every time, as
``verify`` does when asked to trust nothing kept.

A result is kept only when every cited episode's blob was read (a blob missing from a
partial clone would otherwise be remembered as absent).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

#: Bump when what the support check decides changes (``support.py``, the stems,
#: ``claims``' generic words): a result kept by older code is then never read.
VERSION = 1
#: A kept result: one row per unsupported sentence, :class:`~scarwarden.gate.support.
#: Unsupported`'s fields in order (rule, number, sentence, episode IDs, severity, kind, line).
Row = list[Any]
_TYPES = (str, int, str, list, str, str, int)
FOLDER = "support"
#: Results kept (the newest by time of use); each is a few hundred bytes.
MAX_KEPT = 256
_HEX = frozenset("0123456789abcdef")


def key(playbook: bytes, blobs: Mapping[str, str]) -> str | None:
    """The key of the result for ``playbook`` (its bytes) and the cited episodes'
    ``blobs`` (ID -> blob ID); ``None`` when a blob is not named by its object ID."""
    digest = hashlib.sha256(f"scarwarden support v{VERSION}\n".encode())
    digest.update(hashlib.sha256(playbook).digest())
    for ep in sorted(blobs):
        blob = blobs[ep]
        if len(blob) not in (40, 64) or not set(blob) <= _HEX:
            return None
        digest.update(f"{ep} {blob}\n".encode())
    return digest.hexdigest()


def memoised(
    cache: Path | None,
    playbook: bytes,
    blobs: Mapping[str, str],
    compute: Callable[[], tuple[list[Row], bool]],
) -> list[Row]:
    """The kept rows under ``cache`` (the ledger statistics' folder; ``None``: keep
    nothing), else ``compute()``'s, kept when it says every blob was read."""
    name = key(playbook, blobs) if cache is not None else None
    path = cache / FOLDER / f"{name}.json" if cache is not None and name else None
    if path is not None and (found := _load(path)) is not None:
        return found
    found, complete = compute()
    if path is not None and complete:
        _save(path, found)
    return found


def _load(path: Path) -> list[Row] | None:
    try:
        rows = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None  # missing or damaged: derived again
    if not isinstance(rows, list) or not all(_is_row(r) for r in rows):
        return None
    try:
        os.utime(path)  # used: kept longest
    except OSError:
        pass
    return rows


def _is_row(row: object) -> bool:
    return (
        isinstance(row, list)
        and len(row) == len(_TYPES)
        and all(isinstance(v, t) and not isinstance(v, bool) for v, t in zip(row, _TYPES, strict=True))
        and all(isinstance(ep, str) for ep in row[3])
    )


def _save(path: Path, rows: list[Row]) -> None:
    tmp = path.with_name(f".{path.stem}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, path)
        _prune(path.parent)
    except OSError:
        tmp.unlink(missing_ok=True)  # a cache: the check stands without it


def _prune(folder: Path) -> None:
    """Keep the :data:`MAX_KEPT` results used last."""
    entries = list(os.scandir(folder))
    if len(entries) <= MAX_KEPT:
        return
    entries.sort(key=lambda e: e.stat().st_mtime, reverse=True)
    for entry in entries[MAX_KEPT:]:
        try:
            os.unlink(entry.path)
        except OSError:
            pass
