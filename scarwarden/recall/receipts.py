"""Issuing recall receipts: every recall says which playbook blob and which ledger it
read and what it returned, so an episode can prove what memory the agent was given
(issue 20).

The format (fields, content hash, validation) is the episode format's
(:mod:`scarwarden.files.receipt`); the gate proves a receipt by re-running recall on the
playbook at its blob and the ledger at its tree (:mod:`scarwarden.gate.proofs`).
Issuing costs one hash of a few hundred bytes: the playbook's blob ID is remembered by
the index when it reads the file, and the ledger's tree ID (``HEAD:<episodes>``) is
asked of git once per HEAD and remembered in the index's meta table.
"""

from __future__ import annotations

import json
import re

from scarwarden.config import RecallSettings
from scarwarden.errors import GitError, UsageError
from scarwarden.files.receipt import CANDIDATES_SINCE, HASH_CHARS, UNCOMMITTED, Receipt
from scarwarden.recall.evidence import given_evidence
from scarwarden.recall.nearest import shown_candidates
from scarwarden.recall.version import ALGORITHM
from scarwarden.regular_files import read_regular

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from scarwarden.index import Index
    from scarwarden.recall.result import RecallResult
    from scarwarden.repo import MemoryRepo

_ID_RE = re.compile(rf"^[0-9a-f]{{{HASH_CHARS}}}\Z")


def make_receipt(
    result: RecallResult, playbook: str, settings: RecallSettings, limit: int, *, ledger: str | None
) -> Receipt:
    """The receipt of ``result``, recalled from the playbook blob ``playbook`` and the
    ledger ``ledger`` (:func:`ledger_state`; ``None`` for a version-1 receipt). On
    ``ASK_HUMAN`` it names the candidates shown (issue 26)."""
    shown = shown_candidates(result) if ALGORITHM >= CANDIDATES_SINCE else None
    return Receipt.make(
        task=result.task,
        playbook=playbook,
        ledger=ledger,
        algorithm=ALGORITHM,
        settings={
            "act_threshold": settings.act_threshold,
            "floor": settings.floor,
            "act_tag_hits": settings.act_tag_hits,
            "limit": limit,
        },
        verdict=result.verdict,
        rules=[r.id for r in result.rules],
        evidence=given_evidence(result) if ALGORITHM >= 4 else None,
        candidates=None if shown is None else shown[0],
        candidate_evidence=None if shown is None else shown[1],
    )


def playbook_blob(index: Index, meta: Mapping[str, str | None] | None = None) -> str:
    """The git blob ID of the playbook the index holds (remembered when it was read;
    an index written before receipts existed hashes the file once). ``meta``: the
    index's ``playbook_blob``, read already; None: read here."""
    blob = meta["playbook_blob"] if meta is not None else index.meta("playbook_blob")
    if not blob:
        from scarwarden.index import blob_id

        try:
            raw = read_regular(index.repo.playbook_path)
        except FileNotFoundError:
            raw = b"# Playbook\n"  # what the index reads for a missing file
        blob = blob_id(raw)
    return blob


def ledger_state(index: Index, meta: Mapping[str, str | None] | None = None) -> str:
    """The ledger recall read, as a receipt names it: the tree ID of the episodes folder
    at the commit the index reflects (``HEAD:<episodes>``; git's empty tree when there
    is none), with :data:`~scarwarden.files.receipt.UNCOMMITTED` appended when the
    index also holds valid episode files that commit does not have.

    The tree ID is asked of git once per HEAD (one ``rev-parse``) and kept in the
    index's meta table; the uncommitted files are the refresh's "loose" ones. ``meta``:
    the index's ``head``, ``receipt_ledger`` and ``loose``, read already (a recall reads
    its meta values in one statement); None: read here.
    """
    from scarwarden import git

    meta = meta if meta is not None else index.metas(*LEDGER_META)
    head = meta["head"]
    tree = _head_tree(index, head, meta["receipt_ledger"]) if head else git.EMPTY_TREE
    return tree + UNCOMMITTED if _holds_uncommitted(index, head, meta["loose"]) else tree


#: The meta values :func:`ledger_state` reads.
LEDGER_META = ("head", "receipt_ledger", "loose")


def _head_tree(index: Index, head: str, cached: str | None) -> str:
    from scarwarden import git

    if cached and cached.startswith(head + " "):
        return cached.split(" ", 1)[1]
    try:
        tree = git.tree_id(index.repo.root, head, index.repo.episodes_rel)
    except GitError:
        tree = None
    tree = tree or git.EMPTY_TREE  # no episodes folder in that commit
    from scarwarden.recall.log import remember

    remember(index, "receipt_ledger", f"{head} {tree}")
    return tree


def _holds_uncommitted(index: Index, head: str | None, stored: str | None) -> bool:
    """Whether the index holds a valid episode file that HEAD's tree does not: one the
    refresh keeps as "loose" (uncommitted: ``stored``, meta ``loose``), or any at all
    before the first commit."""
    if head is None:
        return index.episode_count() > 0
    try:
        loose = json.loads(stored or "{}")
    except ValueError:
        return True
    if not loose:
        return False
    row = index.conn.execute(
        "SELECT 1 FROM files WHERE episode_row IS NOT NULL "
        "AND path IN (SELECT value FROM json_each(?)) LIMIT 1",
        (json.dumps(sorted(loose)),),
    ).fetchone()
    return row is not None


def resolve(repo: MemoryRepo, value: Any, *, source: str = "--receipt") -> dict[str, Any]:
    """A receipt given to a door (``episode add --receipt``, MCP ``record_episode``), as
    the ``recalled:`` block to store: a mapping (the receipt, or a whole recall
    ``--json`` document), JSON text, or a receipt's ID found in this clone's recall log.
    :class:`ValidationError` when it is not a valid receipt (a forged hash included)."""
    from scarwarden.files import receipt as receipt_format

    if isinstance(value, str) and _ID_RE.match(value.strip()):
        value = _from_log(repo, value.strip(), source)
    return receipt_format.parse(value, source=source).to_json()


def _from_log(repo: MemoryRepo, receipt_id: str, source: str) -> dict[str, Any]:
    """The receipt with this ID in the recall log (newest first)."""
    import json

    from scarwarden.index import open_index

    with open_index(repo) as index:
        row = index.conn.execute(
            "SELECT detail FROM recall_log WHERE json_extract(detail, '$.receipt.receipt') = ? "
            "ORDER BY rowid DESC LIMIT 1",
            (receipt_id,),
        ).fetchone()
    if row is None:
        raise UsageError(
            f"{source}: no recall with receipt {receipt_id} in this clone's recall log",
            hint="pass the receipt object recall printed (scarwarden recall --json), or a file holding it",
        )
    found: dict[str, Any] = json.loads(row[0])["receipt"]
    return found
