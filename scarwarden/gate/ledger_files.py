"""The ledger reader's small parts (:mod:`scarwarden.gate.ledger`): which files count,
where its cache lives, how a month tree is searched, and whether a diff leaves the cited
episodes' places as they were."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from scarwarden import git
from scarwarden.errors import GitError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def cited_doc(row: list[Any]) -> dict[str, Any]:
    doc = {"id": row[0], "at": row[1], "task": row[2]}
    return doc if row[3] is None else {**doc, "correction": row[3]}


def counts(path: str, mode: str = "100644") -> bool:
    """Whether a file of the episodes folder (path relative to it) can be an episode."""
    return mode in ("100644", "100755") and path.endswith(".yaml") and path.count("/") == 2


def file_blob(tree: bytes, name: str, size: int) -> str | None:
    """The blob ID of the regular file ``name`` in a raw tree object (``<mode> <name>\\0``
    then a ``size``-byte binary ID per entry), or ``None``. As the boundary's search
    (:func:`scarwarden.gate.boundary._has_file`): a name is taken where a file mode
    precedes it."""
    needle = b" " + name.encode("utf-8", "surrogateescape") + b"\0"
    at = tree.find(needle)
    while at >= 0:
        if tree[max(0, at - 6) : at] in (b"100644", b"100755"):
            end = at + len(needle)
            return tree[end : end + size].hex()
        at = tree.find(needle, at + 1)
    return None


def cache_dir(root: Path) -> Path | None:
    """``.git/scarwarden/ledger`` of the repository at ``root``; ``None`` when there is no
    git folder, or when ``SCARWARDEN_LEDGER_CACHE=off`` asks for every tree's statistics
    to be derived from its episodes (what a CI cache restored is then not read)."""
    if os.environ.get("SCARWARDEN_LEDGER_CACHE", "").lower() in ("off", "0", "no"):
        return None
    try:
        path = git.git_path(root, "scarwarden/ledger")
    except GitError:
        return None
    return path if path.is_absolute() else root / path


def untouched_by_diff(
    root: Path, base: str, tree: str, known: Mapping[str, Any], want: list[str], env: Mapping[str, str] | None
) -> set[str] | None:
    """The names (IDs) of the files the diff from ``base`` to ``tree`` touches, when
    ``known`` (``base``'s places) has every one of ``want`` and the diff (it names every
    file that differs) touches none of them: then each is where it was, or still absent
    (``None`` otherwise)."""
    if any(i not in known for i in want):
        return None
    try:
        changes = git.diff_name_status(root, base, tree, env=env)
    except GitError:
        return None
    touched = {c.path.rsplit("/", 1)[-1].removesuffix(".yaml") for c in changes}
    return None if touched & set(want) else touched
