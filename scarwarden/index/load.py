"""Loading many episode files into the index at once (a full rebuild).

Parsing dominates a rebuild: at 100k episodes PyYAML's C loader alone takes seconds
(shared/NOTES.md), and every file must also pass :func:`parse_episode_bytes`, the one
validator. So files stream out of one ``git cat-file --batch`` in chunks; on a large
ledger two worker processes forked from this one parse them while git reads on, and
the rows come back in file order to be inserted with ``executemany`` in batches. The
secondary indexes on the episode tables are created after the load, which is cheaper
than maintaining them row by row.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import threading
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

from scarwarden import text
from scarwarden.errors import ScarwardenError
from scarwarden.files.episodes import Episode, parse_episode_bytes
from scarwarden.files.lineage_counts import application
from scarwarden.index.packed import at_seconds, blob_bytes, deflate, fts_text
from scarwarden.logs import log

#: Created after a rebuild's bulk load; :data:`scarwarden.index.SCHEMA` has the tables.
EPISODE_INDEXES = (
    "CREATE INDEX episodes_at ON episodes (at)",
    "CREATE INDEX episodes_agent ON episodes (agent)",
    "CREATE INDEX episodes_receipt ON episodes (receipt) WHERE receipt IS NOT NULL",
)
_INSERT_EPISODE = "INSERT INTO episodes (rowid, id, t, agent, receipt, z) VALUES (?, ?, ?, ?, ?, ?)"
#: The episode fields the full-text index holds (``episodes_fts``'s columns).
FTS_FIELDS = ("task", "action", "outcome", "correction")
_INSERT_FTS = "INSERT INTO episodes_fts (rowid, task, action, outcome, correction) VALUES (?, ?, ?, ?, ?)"
_INSERT_TAG = "INSERT OR IGNORE INTO episode_tags VALUES (?, ?)"
_INSERT_APPLIED = "INSERT INTO episode_rules VALUES (?, ?, ?, ?, ?, ?, ?)"
_INSERT_POSTING = "INSERT OR IGNORE INTO task_postings VALUES (?, ?)"
_DELETE_FTS = (
    "INSERT INTO episodes_fts (episodes_fts, rowid, task, action, outcome, correction) "
    "VALUES ('delete', ?, ?, ?, ?, ?)"
)
_DELETE_POSTING = "DELETE FROM task_postings WHERE term = ? AND episode_row = ?"
#: Below this many files one process is faster than forking workers.
PARALLEL_MIN = 5000
#: Files per task sent to a worker, and rows per ``executemany`` batch.
CHUNK = 2000

#: One of an episode's ``rules_applied`` as lineage counts it (rule, corrected, went
#: well, status: :func:`scarwarden.files.lineage_counts.application`).
Applied = tuple[str, int, int, str]
#: What the index keeps of a valid episode: (id, at, agent, ID of the recall receipt it
#: carries, its JSON packed, the text the full-text index is given (task, action,
#: outcome, correction), tags, rules applied, the distinct stems of its task).
Row = tuple[
    str, str, Any, str | None, bytes, tuple[Any, ...], tuple[str, ...], tuple[Applied, ...], tuple[str, ...]
]
#: (problem message, None) for an invalid file, (None, row) for a valid one.
Parsed = tuple[str | None, Row | None]


def parse_for_index(path: str, raw: bytes, episodes_dir: str) -> Parsed:
    """Validate one file with :func:`parse_episode_bytes` and flatten it to a row."""
    try:
        ep = parse_episode_bytes(raw, path, episodes_dir=episodes_dir)
    except ScarwardenError as exc:
        return _first_problem(exc), None
    d = ep.data
    recalled = d.get("recalled")
    receipt = recalled.get("receipt") if isinstance(recalled, dict) else None
    return None, (
        d["id"],
        d["at"],
        d.get("agent"),
        receipt if isinstance(receipt, str) else None,
        deflate(d),
        fts_text(d.get(key) for key in FTS_FIELDS),
        tuple(d.get("tags") or ()),
        tuple(_applied(ep, r) for r in d.get("rules_applied") or () if isinstance(r, str)),
        task_stems(d["task"]),
    )


def _first_problem(exc: ScarwardenError) -> str:
    """The first problem with its field ("field 'at': missing", not "missing"), and how
    many more there are."""
    if not exc.problems:
        return exc.message
    first = exc.problems[0]
    said = f"field '{first.field}': {first.message}" if first.field else first.message
    more = len(exc.problems) - 1
    return said + (f" (and {more} more problem{'s' if more > 1 else ''})" if more else "")


def task_stems(task: Any) -> tuple[str, ...]:
    """The distinct stems of a task: its ``task_postings`` (index/ledger_words.py)."""
    return tuple(sorted(set(text.stems(task)))) if isinstance(task, str) else ()


def _applied(ep: Episode, rule_id: str) -> Applied:
    app = application(ep, rule_id)
    return rule_id, int(app.corrected), int(app.went_well), app.status


def applied(row: Row) -> list[tuple[str, str, str, int, int, int, str]]:
    """The episode's ``episode_rules`` rows: (rule, at, episode, position in
    rules_applied, corrected, went well, status)."""
    return [
        (rule, row[1], row[0], seq, fixed, well, status)
        for seq, (rule, fixed, well, status) in enumerate(row[7])
    ]


def default_workers(files: int) -> int:
    """Worker processes for parsing ``files`` files: 1 (in-process) unless it pays."""
    if files < PARALLEL_MIN or not sys.platform.startswith("linux"):
        return 1
    # Forking a process that runs other threads (the web UI, the MCP server) can
    # deadlock the child on a lock some thread held; parse in-process there.
    if threading.active_count() > 1:
        return 1
    return max(1, min(2, os.cpu_count() or 1))


#: A file to index: (path, blob ID, bytes).
Item = tuple[str, str, bytes]


def _parse_chunk(episodes_dir: str, chunk: list[Item]) -> list[tuple[str, str, Parsed]]:
    return [(path, blob, parse_for_index(path, raw, episodes_dir)) for path, blob, raw in chunk]


def chunked(items: Iterable[Item], size: int | None = None) -> Iterator[list[Item]]:
    size = size or CHUNK
    chunk: list[Item] = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


@contextmanager
def parsed(
    chunks: Iterable[list[Item]], episodes_dir: str, workers: int = 1
) -> Iterator[Iterator[tuple[str, str, Parsed]]]:
    """Parse chunks of files; yields an iterator of (path, blob, result) in input order.

    With ``workers > 1`` the worker processes are forked on entry, before the caller
    opens a database or starts a reader process, and stopped on exit. ``chunks`` is
    consumed lazily (by the pool's feeder thread), so reading overlaps parsing.
    """
    work = partial(_parse_chunk, episodes_dir)
    if workers <= 1:
        yield (row for chunk in chunks for row in work(chunk))
        return
    import gc
    import multiprocessing

    # Frozen objects are never scanned by the children's garbage collector, so the
    # memory they share with this process is not copied page by page.
    gc.freeze()
    try:
        pool = multiprocessing.get_context("fork").Pool(workers)
    finally:
        gc.unfreeze()
    with pool:
        yield (row for part in pool.imap(work, chunks) for row in part)


class BulkLoader:
    """Buffers parsed episodes and inserts them with ``executemany`` in batches.

    Meant for an empty index inside one transaction: row IDs are assigned here and an
    ID seen twice is caught in memory (the first file in path order keeps it).
    """

    def __init__(self, conn: sqlite3.Connection, inodes: dict[str, int] | None = None) -> None:
        self.conn = conn
        self.inodes = inodes or {}
        self.added = 0
        self.invalid: list[str] = []
        self._owner: dict[str, str] = {}
        self._episodes: list[tuple[Any, ...]] = []
        self._fts: list[tuple[Any, ...]] = []
        self._tags: list[tuple[str, int]] = []
        self._rules: list[tuple[Any, ...]] = []
        self._postings: list[tuple[str, int]] = []
        self._files: list[tuple[str, bytes, int | None, int | None]] = []

    def add(self, path: str, blob: str, result: Parsed) -> None:
        problem, row = result
        if row is None:
            self.invalid.append(path)
            log.warning("skipped invalid episode %s: %s", path, problem)
            self._files.append((path, blob_bytes(blob), None, self.inodes.get(path)))
        elif row[0] in self._owner:
            self.invalid.append(path)
            log.warning("skipped %s: episode ID %s is also in %s", path, row[0], self._owner[row[0]])
            self._files.append((path, blob_bytes(blob), None, self.inodes.get(path)))
        else:
            ep_id = row[0]
            self._owner[ep_id] = path
            self.added += 1
            rowid = self.added
            self._episodes.append((rowid, row[0], at_seconds(row[1]), *row[2:5]))
            self._fts.append((rowid, *row[5]))
            self._tags.extend((tag, rowid) for tag in row[6])
            self._rules.extend(applied(row))
            self._postings.extend((stem, rowid) for stem in row[8])
            self._files.append((path, blob_bytes(blob), rowid, self.inodes.get(path)))
        if len(self._files) >= CHUNK:
            self.flush()

    def flush(self) -> None:
        conn = self.conn
        conn.executemany(_INSERT_EPISODE, self._episodes)
        conn.executemany(_INSERT_FTS, self._fts)
        conn.executemany(_INSERT_TAG, self._tags)
        conn.executemany(_INSERT_APPLIED, self._rules)
        conn.executemany(_INSERT_POSTING, self._postings)
        conn.executemany("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?)", self._files)
        self._episodes, self._fts, self._tags, self._rules, self._files = [], [], [], [], []
        self._postings = []

    def finish(self) -> None:
        """Insert what is buffered and create the secondary indexes."""
        self.flush()
        for statement in EPISODE_INDEXES:
            self.conn.execute(statement)


def insert_one(conn: sqlite3.Connection, path: str, blob: str, row: Row) -> int:
    """Insert one valid episode into a live index (an incremental refresh); its row."""
    rowid = conn.execute(_INSERT_EPISODE, (None, row[0], at_seconds(row[1]), *row[2:5])).lastrowid
    assert rowid is not None
    conn.execute(_INSERT_FTS, (rowid, *row[5]))
    conn.executemany(_INSERT_TAG, [(tag, rowid) for tag in row[6]])
    conn.executemany(_INSERT_APPLIED, applied(row))
    conn.executemany(_INSERT_POSTING, [(stem, rowid) for stem in row[8]])
    conn.execute("INSERT OR REPLACE INTO files VALUES (?, ?, ?, NULL)", (path, blob_bytes(blob), rowid))
    return rowid


def forget_one(conn: sqlite3.Connection, rowid: int, doc: dict[str, Any], task_df: Counter[str]) -> None:
    """Delete the episode of row ``rowid`` (its data ``doc``) from a live index: its
    rows everywhere, found by key from what it holds (no table keeps an index by
    episode); its task's stems are uncounted in ``task_df``."""
    # Contentless: the full-text index is told the text it was given.
    conn.execute(_DELETE_FTS, (rowid, *fts_text(doc.get(key) for key in FTS_FIELDS)))
    conn.execute("DELETE FROM episodes WHERE rowid = ?", (rowid,))
    tags = [(tag, rowid) for tag in doc.get("tags") or ()]
    conn.executemany("DELETE FROM episode_tags WHERE tag = ? AND episode_row = ?", tags)
    rules = [r for r in doc.get("rules_applied") or () if isinstance(r, str)]
    conn.execute(
        "DELETE FROM episode_rules WHERE rule_id IN (SELECT value FROM json_each(?)) "
        "AND at = ? AND episode_id = ?",
        (json.dumps(rules), doc["at"], doc["id"]),
    )
    stems = task_stems(doc.get("task"))
    conn.executemany(_DELETE_POSTING, [(stem, rowid) for stem in stems])
    task_df.subtract(stems)
