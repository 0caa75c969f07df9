"""The recall log: every recall, appended to the ``recall_log`` table of the index.

It answers "why did the agent do X last Tuesday": the time, the task, the verdict, the
rules and scores, and the playbook commit they came from. It lives in the index
database (not in git; it is operational data, not memory) and survives index rebuilds
(:func:`scarwarden.index.build.rebuild` copies it over).

Writing it is the only write recall does, and it is best effort: with the database
read-only or locked for longer than :data:`BUSY_MS`, the recall still succeeds and
the line is dropped with a warning.

``playbook_commit`` is the last commit reachable from HEAD that changed the playbook
file, or ``None`` when the working-tree playbook differs from that commit's version
(uncommitted edits) or there is no commit yet. It is cached in the index's meta table,
keyed by HEAD and the playbook file's signature, so git runs only after either moved.
"""

from __future__ import annotations

import json
import sqlite3
import weakref
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from scarwarden.logs import log
from scarwarden.records import record
from scarwarden.regular_files import read_regular
from scarwarden.times import parse_when as parse_when  # re-exported for callers
from scarwarden.times import utc_now

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from scarwarden.index import Index
    from scarwarden.recall.result import RecallResult


#: How long a recall waits for a busy database before giving up on its log line.
BUSY_MS = 2000
#: Oldest lines beyond this many are dropped (checked every 1,000 recalls).
KEEP_ROWS = 100_000

_NORMAL_BUSY_MS = 30000

#: playbook_commit per open index (the meta cache cannot be trusted while the
#: playbook's signature is "racy", i.e. within a clock tick of its last write).
_MEMO: weakref.WeakKeyDictionary[Index, tuple[str, str | None]] = weakref.WeakKeyDictionary()


@record(frozen=True)
class LogEntry:
    """One line of the recall log."""

    id: int
    at: str
    task: str
    verdict: str
    rule_ids: list[str]
    scores: list[float]
    playbook_commit: str | None
    detail: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "at": self.at,
            "task": self.task,
            "verdict": self.verdict,
            "rule_ids": list(self.rule_ids),
            "scores": list(self.scores),
            "playbook_commit": self.playbook_commit,
            "detail": dict(self.detail),
        }


@contextmanager
def brief_write(index: Index) -> Iterator[sqlite3.Connection]:
    """The index's connection for one small write on the recall path: a short busy
    timeout (:data:`BUSY_MS`, restored after), taking turns with a rebuild's swap
    (:func:`scarwarden.index.writer_lock`). The caller decides what a failed write
    costs (a recall never fails because its log or a cache could not be written)."""
    from scarwarden.index import writer_lock

    conn = index.conn
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
        with writer_lock(index.repo):
            yield conn
    finally:
        try:
            conn.execute(f"PRAGMA busy_timeout = {_NORMAL_BUSY_MS}")
        except sqlite3.Error:
            pass


def remember(index: Index, key: str, value: str) -> None:
    """Keep ``value`` under ``key`` in the index's meta table (:func:`brief_write`); a
    read-only or busy index keeps nothing, and the caller computes it again next time."""
    try:
        with brief_write(index) as conn:
            conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))
    except (sqlite3.Error, OSError):
        pass


def append(index: Index, result: RecallResult, *, now: str | None = None) -> int | None:
    """Append ``result`` to the log; its rowid, or ``None`` when it could not be written."""
    detail: dict[str, Any] = {}
    if result.stats is not None:
        detail["best_score"] = result.stats.best_score
        detail["best_tag_hits"] = result.stats.best_tag_hits
        # What the router decided on (docs/recall.md), so a logged verdict can be re-derived.
        detail["best_confidence"] = result.stats.best_confidence
        detail["best_evidence"] = result.stats.best_evidence
        detail["act_threshold"] = result.stats.settings.act_threshold
        detail["floor"] = result.stats.settings.floor
        detail["rule_count"] = result.stats.rule_count
    if result.receipt is not None:
        # The whole receipt (issue 20): `log --export` shares it and episodes carry it.
        detail["receipt"] = result.receipt.to_json()
    row = (
        now or utc_now(),
        result.task,
        result.verdict,
        json.dumps([r.id for r in result.rules]),
        json.dumps([r.score for r in result.rules]),
        result.playbook_commit,
        json.dumps(detail, sort_keys=True),
    )
    try:
        with brief_write(index) as conn:
            cur = conn.execute(
                "INSERT INTO recall_log (at, task, verdict, rule_ids, scores, "
                "playbook_commit, detail) VALUES (?, ?, ?, ?, ?, ?, ?)",
                row,
            )
            rowid = cur.lastrowid
            if rowid is not None and rowid % 1000 == 0:
                conn.execute("DELETE FROM recall_log WHERE rowid <= ?", (rowid - KEEP_ROWS,))
        return rowid
    except (sqlite3.OperationalError, OSError) as exc:  # read-only, locked, disk full
        log.warning("this recall was not logged (%s)", exc)
        return None


def read_log(
    index: Index,
    *,
    limit: int | None = 20,
    since: str | None = None,
    until: str | None = None,
    task_grep: str | None = None,
    verdict: str | None = None,
) -> list[LogEntry]:
    """Log lines, newest first, filtered; ``since``/``until`` as
    :func:`scarwarden.times.parse_when` gives them."""
    where, args = [], []
    if since:
        where.append("at >= ?")
        args.append(since)
    if until:
        where.append("at <= ?")
        args.append(until)
    if verdict:
        where.append("verdict = ?")
        args.append(verdict.upper())
    sql = "SELECT rowid, at, task, verdict, rule_ids, scores, playbook_commit, detail FROM recall_log"
    if where:
        sql += " WHERE " + " AND ".join(where)
    # By time: lines merged from another clone (log --import) take their place.
    sql += " ORDER BY at DESC, rowid DESC"
    needle = task_grep.casefold() if task_grep else None
    out: list[LogEntry] = []
    # The task filter runs in Python: SQLite's lower() folds ASCII only.
    for row in index.conn.execute(sql, args):
        if needle is not None and needle not in str(row[2]).casefold():
            continue
        out.append(_entry(row))
        if limit is not None and len(out) >= limit:
            break
    return out


def episodes_carrying(index: Index, entries: list[LogEntry]) -> dict[int, list[str]]:
    """Log line ID -> the IDs of the episodes that carry its recall receipt (issue 20):
    what each recall led to, as recorded. Read through the index on the receipt IDs the
    episodes carry (``episodes.receipt``)."""
    by_receipt: dict[str, list[int]] = {}
    for entry in entries:
        receipt = entry.detail.get("receipt")
        if isinstance(receipt, Mapping) and isinstance(receipt.get("receipt"), str):
            by_receipt.setdefault(receipt["receipt"], []).append(entry.id)
    found: dict[int, list[str]] = {}
    if not by_receipt:
        return found
    rows = index.conn.execute(
        "SELECT id, receipt FROM episodes WHERE receipt IN (SELECT value FROM json_each(?)) ORDER BY at, id",
        (json.dumps(sorted(by_receipt)),),
    )
    for episode_id, receipt_id in rows:
        for line in by_receipt.get(receipt_id, []):
            found.setdefault(line, []).append(episode_id)
    return found


def _entry(row: tuple[Any, ...]) -> LogEntry:
    # A damaged row (invalid JSON, or JSON of another shape: a number for a list) reads
    # as empty where it is damaged: one bad line must not hide the whole log.
    def load(raw: Any, default: Any) -> Any:
        try:
            value = json.loads(raw) if raw else default
        except ValueError:
            return default
        return value if type(value) is type(default) else default

    rule_ids = [str(rule) for rule in load(row[4], [])]
    scores = load(row[5], [])
    return LogEntry(
        id=int(row[0]),
        at=str(row[1]),
        task=str(row[2]),
        verdict=str(row[3]),
        rule_ids=rule_ids,
        scores=scores if all(type(s) in (int, float) for s in scores) else [],
        playbook_commit=row[6],
        detail=load(row[7], {}),
    )


# -- which playbook a recall used ---------------------------------------------------


def playbook_commit(index: Index, meta: Mapping[str, str | None] | None = None) -> str | None:
    """The commit the recalled playbook is from (see the module docstring), cached.
    ``meta``: the index's ``head`` and ``playbook_sig``, read already (a recall reads
    its meta values in one statement); None: read here."""
    from scarwarden import git

    repo = index.repo
    head, sig = (
        (meta["head"], meta["playbook_sig"])
        if meta is not None
        else (index.meta("head"), index.meta("playbook_sig"))
    )
    key = f"{head}:{sig}"
    memo = _MEMO.get(index)
    if memo is not None and memo[0] == key:
        # An open index is not refreshed, so neither is the playbook it describes.
        return memo[1]
    cached = _cached(index)
    # A "racy" signature (file written within the last clock tick) does not identify
    # the file's content, so it is never trusted as a cache key.
    if cached.get("key") == key and "racy" not in key:
        _MEMO[index] = (key, cached.get("commit"))  # the next recall on this index reads no meta for it
        return cached.get("commit")
    commit: str | None = None
    if head:
        old_head, last_change = cached.get("head"), cached.get("last_change")
        if not (old_head and last_change and _unchanged(index, old_head, head)):
            entries = git.log(repo.root, "-1", head, "--", repo.playbook_rel)
            last_change = entries[0].sha if entries else None
        if last_change is not None and _clean(index, last_change):
            commit = last_change
        cached = {"key": key, "commit": commit, "head": head, "last_change": last_change}
    else:
        cached = {"key": key, "commit": None}
    _MEMO[index] = (key, commit)
    remember(index, "recall_playbook_commit", json.dumps(cached))
    return commit


def _cached(index: Index) -> Mapping[str, Any]:
    raw = index.meta("recall_playbook_commit")
    try:
        value = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _unchanged(index: Index, old_head: str, head: str) -> bool:
    """Did HEAD move without touching the playbook (one ``git diff``)?"""
    from scarwarden import git
    from scarwarden.errors import GitError

    if old_head == head:
        return True
    try:
        return not git.diff_name_status(index.repo.root, old_head, head, index.repo.playbook_rel)
    except GitError:  # the old HEAD is gone (rebase, gc): ask git log instead
        return False


def _clean(index: Index, commit: str) -> bool:
    """Is the working-tree playbook byte-identical to its version in ``commit``?"""
    from scarwarden import git
    from scarwarden.index import blob_id

    repo = index.repo
    entries = git.ls_tree(repo.root, commit, repo.playbook_rel)
    try:
        raw = read_regular(repo.playbook_path)
    except FileNotFoundError:
        return not entries
    return bool(entries) and entries[0].blob == blob_id(raw)
