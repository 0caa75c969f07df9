"""The index file itself: its schema and version, connections, the writer lock, meta
rows and transactions, and what a build or a refresh reports."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sqlite3
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from scarwarden.errors import FileAccessError, file_access_error
from scarwarden.files.atomic import file_lock
from scarwarden.files.receipt import REDERIVED
from scarwarden.git.temps import pid_alive
from scarwarden.index.packed import inflate
from scarwarden.logs import log
from scarwarden.records import field, record
from scarwarden.regular_files import check_regular
from scarwarden.repo import MemoryRepo

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn

#: Bump when the schema or what is stored changes; an index with another version is
#: rebuilt automatically.
SCHEMA_VERSION = 22

#: The receipt versions the gate re-derives: an application's stored status (verified
#: or unverifiable, ``episode_rules``) depends on them, so an index stored under others
#: is rebuilt like one of another schema.
REDERIVED_STAMP = json.dumps(REDERIVED)

#: Each listed episode folder's listing summed (index/folders.py): how many ``.yaml``
#: files, their inodes, their names' CRC-32 and CRC-32 x inode (index/scan.py's
#: listing_sums), so a refresh trusts a folder that changed only by the files it reads
#: again without reading the folder's rows. Added after schema 18 without a rebuild:
#: a refresh makes the table where it is missing, and a folder without sums is
#: compared row by row.
FOLDER_SUMS = """CREATE TABLE IF NOT EXISTS folder_sums (
    path TEXT PRIMARY KEY, files INTEGER, inodes INTEGER, names INTEGER, pairs INTEGER) WITHOUT ROWID"""

SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
-- The episode tables' secondary indexes are created after a rebuild's bulk load
-- (index_load.EPISODE_INDEXES). Schema 18 packs what it keeps (index/packed.py).
-- A folder's files are a range of paths (index/folders.py's files_in): no folder
-- column nor index on it. inode: as the folder listed the file (index/scan.py
-- list_yaml), so an edit saved by rename is found without asking git.
CREATE TABLE files (path TEXT PRIMARY KEY, blob BLOB, episode_row INTEGER, inode INTEGER)
    WITHOUT ROWID;
CREATE TABLE dirs (path TEXT PRIMARY KEY, mtime_ns INTEGER) WITHOUT ROWID;
-- Each episode is stored once (index/packed.py): its ID, its time in seconds (t; at is
-- the text), its agent and the ID of the recall receipt it carries (what is searched
-- or sorted on: recall/log.py reads receipt), and the rest of its JSON deflated (z).
-- doc, the whole JSON, is a virtual column computed by scarwarden_doc (registered by
-- connect), and the columns after it are read from doc.
-- Its path is expected_relpath(id, at): a valid episode's file has no other name
-- (files/episodes.py), so it is not stored. Other tables name an episode by its row
-- (episode_row: a few bytes, where an ID takes 13).
CREATE TABLE episodes (
    rowid INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, t INTEGER NOT NULL, agent TEXT,
    receipt TEXT, z BLOB NOT NULL,
    at TEXT GENERATED ALWAYS AS (strftime('%Y-%m-%dT%H:%M:%SZ', t, 'unixepoch')) VIRTUAL,
    doc TEXT GENERATED ALWAYS AS (scarwarden_doc(z, id, at)) VIRTUAL,
    task TEXT GENERATED ALWAYS AS (json_extract(doc, '$.task')) VIRTUAL,
    source TEXT GENERATED ALWAYS AS (json_extract(doc, '$.source')) VIRTUAL,
    action TEXT GENERATED ALWAYS AS (json_extract(doc, '$.action')) VIRTUAL,
    outcome TEXT GENERATED ALWAYS AS (json_extract(doc, '$.outcome')) VIRTUAL,
    correction TEXT GENERATED ALWAYS AS (json_extract(doc, '$.correction')) VIRTUAL);
CREATE TABLE episode_tags (tag TEXT, episode_row INTEGER, PRIMARY KEY (tag, episode_row))
    WITHOUT ROWID;
-- Each episode's rules_applied, by rule, oldest first, with how lineage counts each
-- application (files/lineage_counts.application: corrected, went well, status), so
-- index/lineage.py reads a rule's applications here alone, never an episode's JSON;
-- seq keeps an episode naming a rule twice. No index by episode: a removed episode's
-- rows are found by its rules_applied and at.
CREATE TABLE episode_rules (rule_id TEXT, at TEXT, episode_id TEXT, seq INTEGER,
    corrected INTEGER, went_well INTEGER, status TEXT,
    PRIMARY KEY (rule_id, at, episode_id, seq)) WITHOUT ROWID;
-- Contentless (the text is given, and given again to forget it: index/packed.py's
-- fts_text), no positions (detail none: only words are asked for, index/queries.py's
-- fts_query), no per-row token counts (columnsize 0: bm25() needs them).
CREATE VIRTUAL TABLE episodes_fts USING fts5 (task, action, outcome, correction,
    content = '', columnsize = 0, detail = none,
    tokenize = "porter unicode61 remove_diacritics 2 tokenchars ''''");
CREATE TABLE rules (
    id TEXT PRIMARY KEY, position INTEGER, title TEXT, text TEXT, tags TEXT,
    episode_ids TEXT, retired INTEGER, reason TEXT, replaced_by TEXT, line INTEGER,
    length INTEGER, digest TEXT,
    applies_to TEXT) WITHOUT ROWID;  -- JSON list: '["images"]' for a visual rule (issue 19)
CREATE TABLE citations (rule_id TEXT, episode_id TEXT, PRIMARY KEY (rule_id, episode_id))
    WITHOUT ROWID;
CREATE INDEX citations_ep ON citations (episode_id, rule_id);
CREATE TABLE rule_tags (tag TEXT, rule_id TEXT, PRIMARY KEY (tag, rule_id)) WITHOUT ROWID;
CREATE INDEX rule_tags_rule ON rule_tags (rule_id);
-- Recall postings (active rules only): stemmed term -> rule, with term frequency and
-- the rule's length (copied from rules.length so scoring needs no join per posting).
CREATE TABLE rule_terms (term TEXT, rule_id TEXT, tf INTEGER, length INTEGER,
    PRIMARY KEY (term, rule_id)) WITHOUT ROWID;
CREATE INDEX rule_terms_rule ON rule_terms (rule_id, tf, length);  -- covering: recall's --explain
-- Document frequency of each term over active rules (BM25's idf), kept in step with
-- rule_terms so a query never counts postings.
CREATE TABLE rule_term_df (term TEXT PRIMARY KEY, df INTEGER) WITHOUT ROWID;
-- Recall's pairs (version 3): adjacent stems of a rule's title, and of its text
-- ('credit card'), with tf and the rule's length in stems; df over active rules.
CREATE TABLE rule_pair_terms (term TEXT, rule_id TEXT, tf INTEGER, length INTEGER,
    PRIMARY KEY (term, rule_id)) WITHOUT ROWID;
CREATE INDEX rule_pair_terms_rule ON rule_pair_terms (rule_id);
CREATE TABLE rule_pair_df (term TEXT PRIMARY KEY, df INTEGER) WITHOUT ROWID;
-- One row per (stem of a tag part, rule, tag); 'parts' is how many distinct stems the
-- tag has, so a tag hits when all its parts are among the task's stems.
CREATE TABLE rule_tag_stems (stem TEXT, rule_id TEXT, tag TEXT, parts INTEGER,
    PRIMARY KEY (stem, rule_id, tag)) WITHOUT ROWID;
CREATE INDEX rule_tag_stems_rule ON rule_tag_stems (rule_id);
-- The ledger's words (index/ledger_words.py): stems of each episode's task and how
-- many tasks say each one; under each active rule, the stems of the episodes it cites
-- (task, correction) and in how many rules' episodes each one occurs.
-- which past tasks say each stem: recall's nearest failed episodes when no rule is near
-- (ASK_HUMAN's candidates, recall.given.episode_candidates, through the view
-- task_terms). No index by episode: a removed episode's postings are the stems of its
-- task, read from its row before it goes, deleted by key.
CREATE TABLE task_postings (term TEXT, episode_row INTEGER, PRIMARY KEY (term, episode_row))
    WITHOUT ROWID;
CREATE VIEW task_terms AS SELECT p.term AS term, e.id AS episode_id
    FROM task_postings AS p JOIN episodes AS e ON e.rowid = p.episode_row;
CREATE TABLE task_term_df (term TEXT PRIMARY KEY, df INTEGER) WITHOUT ROWID;
CREATE TABLE rule_episode_terms (term TEXT, rule_id TEXT, episode_id TEXT, field TEXT,
    tf INTEGER, PRIMARY KEY (term, rule_id, episode_id, field)) WITHOUT ROWID;
CREATE INDEX rule_episode_terms_rule ON rule_episode_terms (rule_id);
CREATE TABLE rule_episode_df (term TEXT PRIMARY KEY, df INTEGER) WITHOUT ROWID;
CREATE TABLE rule_episode_state (rule_id TEXT PRIMARY KEY, digest TEXT) WITHOUT ROWID;
-- Schema 20: the same postings packed one entry per stem for recall's first pass
-- (index/packed_postings.py): kind 't' a stem's rules, 'g' a tag's, 'e' a stem's
-- cited episodes; ordinals for active rules and for cited episodes that say a word,
-- each with the other side of the citations (int32 BLOBs); a tag's stems.
CREATE TABLE packed (kind TEXT, key TEXT, ords BLOB, runs BLOB, PRIMARY KEY (kind, key)) WITHOUT ROWID;
CREATE TABLE rule_ords (ord INTEGER PRIMARY KEY, rule_id TEXT UNIQUE NOT NULL, episodes BLOB);
CREATE TABLE episode_ords (ord INTEGER PRIMARY KEY, episode_id TEXT UNIQUE NOT NULL, rules BLOB);
CREATE TABLE tag_stems (stem TEXT, tag TEXT, parts INTEGER, PRIMARY KEY (stem, tag)) WITHOUT ROWID;
CREATE TABLE recall_log (
    rowid INTEGER PRIMARY KEY, at TEXT, task TEXT, verdict TEXT, rule_ids TEXT,
    scores TEXT, playbook_commit TEXT, detail TEXT);
"""
SCHEMA += f"{FOLDER_SUMS};\n"


@record
class RefreshStats:
    """What a refresh did (for ``scarwarden index`` and the benchmarks)."""

    mode: str = "incremental"  # or "rebuild"
    episodes_added: int = 0
    episodes_removed: int = 0
    rules_changed: int = 0
    invalid_files: list[str] = field(default_factory=list)
    reason: str | None = None
    #: IDs of the episodes a refresh added or removed (what the ledger's words recount).
    moved: set[str] = field(default_factory=set)
    #: How each stem's count of tasks saying it moved with them (``task_term_df``).
    task_df: Counter[str] = field(default_factory=Counter)
    #: Folders whose listing was compared with the index's rows for them, row by row
    #: (no sums kept, or the listing changed by more than the files read again).
    folders_compared: list[str] = field(default_factory=list)
    #: A rebuild's tracked files edited since git's index took them: indexed from git's
    #: copy, then read from disk by the refresh :func:`~scarwarden.index.open_index` runs.
    edited: list[str] = field(default_factory=list)


#: How long a statement waits for another process's lock on the index (ms).
BUSY_MS = 30_000


def connect(path: Path) -> sqlite3.Connection:
    """A connection to the index file at ``path`` (created if missing), in autocommit
    mode: every operation takes its own :func:`transaction`."""
    conn = sqlite3.connect(str(path), timeout=BUSY_MS / 1000, isolation_level=None)
    conn.create_function("scarwarden_doc", 3, inflate, deterministic=True)
    conn.execute(f"PRAGMA busy_timeout = {int(BUSY_MS)}")
    # A cache: NORMAL spares FULL's extra syncs per commit (5 ms typical, tails of
    # 20-80 ms measured on a busy disk), and the rare file hurt by a power cut at the
    # wrong moment is detected as corrupt and rebuilt.
    conn.execute("PRAGMA synchronous = NORMAL")
    return conn


def writer_lock(repo: MemoryRepo) -> contextlib.AbstractContextManager[None]:
    """Held while the index file is opened and written, and while a rebuild swaps it.

    SQLite finds a rollback journal by *name* (``index.db-journal``). A writer still on
    a file that a rebuild has just replaced would leave a journal that the next process
    to open the new file "recovers" into it, corrupting it. So opening-and-refreshing
    and the swap take turns. Anything else that writes to ``Index.conn`` (the recall
    log) must hold this lock too.
    """
    return file_lock(repo.state_dir / "index.lock")


def rebuild_lock(repo: MemoryRepo) -> contextlib.AbstractContextManager[None]:
    """Held for a whole rebuild that opening the index found due: one at a time, in
    this process (an MCP server's tools run on threads, which shared the temporary
    file's name: a burst of recalls on a missing index failed, "table meta already
    exists") and across processes (the next one waits, then finds the index built,
    where it built a second copy). Taken before :func:`writer_lock`, never inside it."""
    return file_lock(repo.state_dir / "rebuild.lock")


def open_existing(repo: MemoryRepo, *, say: bool = True) -> tuple[sqlite3.Connection | None, str | None]:
    """Open the index if usable; otherwise (None, why it must be rebuilt). ``say``: warn
    of a corrupt file (False: a first look, which the rebuild's own look says)."""
    try:  # one stat, as exists() made: SQLite would wait for ever on a FIFO
        check_regular(repo.index_path.stat().st_mode, repo.index_path)
    except FileNotFoundError:
        return None, "missing"
    except OSError as exc:
        _refuse(exc, repo)
    try:
        conn = connect(repo.index_path)
        rows = dict(conn.execute(_OPENING, (json.dumps(_tables()),)).fetchall())
    except sqlite3.DatabaseError as exc:
        with contextlib.suppress(Exception):  # the file is garbage; we only need it closed
            conn.close()
        _busy(exc, repo)  # locked by another process past the wait: not garbage either
        _openable(repo)  # not garbage but no file this user can read: said so, left alone
        if say:
            log.warning("the index at %s was corrupt; rebuilt it from the files", repo.index_path)
        return None, "corrupt"
    if rows.get("schema_version") != str(SCHEMA_VERSION) or rows.get("rederived") != REDERIVED_STAMP:
        conn.close()
        return None, "old schema"
    if rows.get("memory_dir") != repo.memory_rel:
        conn.close()
        return None, "memory folder changed"
    if rows.get("tables") != len(_tables()):  # one dropped (by hand, a damaged file): every read
        conn.close()  # that needs it would fail, "no such table", until a rebuild
        if say:
            log.warning("the index at %s was corrupt; rebuilt it from the files", repo.index_path)
        return None, "corrupt"
    return conn, None


#: What opening the index reads: its meta keys, and how many of its tables are there.
_OPENING = (
    "SELECT key, value FROM meta WHERE key IN ('schema_version', 'memory_dir', 'rederived') "
    "UNION ALL SELECT 'tables', count(*) FROM sqlite_master "
    "WHERE type = 'table' AND name IN (SELECT value FROM json_each(?))"
)


@functools.cache
def _tables() -> list[str]:
    """The tables of :data:`SCHEMA` (not ``folder_sums``: the refresh makes it where an
    index built before it lacks it)."""
    import re

    names = re.findall(r"CREATE (?:VIRTUAL )?TABLE (?:IF NOT EXISTS )?(\w+)", SCHEMA)
    return sorted(set(names) - {"folder_sums"})


def _busy(exc: sqlite3.DatabaseError, repo: MemoryRepo) -> None:
    """SQLite's "database is locked" after :data:`BUSY_MS` (another program holds the
    file: an ``sqlite3`` shell in a transaction) as :class:`FileAccessError` (exit 2),
    nothing changed: it was called corrupt and rebuilt under the other's lock."""
    if getattr(exc, "sqlite_errorcode", None) not in (5, 6):  # SQLITE_BUSY, SQLITE_LOCKED (3.11+)
        return
    raise FileAccessError(
        f"{repo.index_path.relative_to(repo.root)} is locked by another program "
        f"(waited {BUSY_MS / 1000:g} s): {exc}; nothing was changed",
        hint="finish or close what holds it (an sqlite3 shell's open transaction?), "
        "then run the command again",
    )


def _openable(repo: MemoryRepo) -> None:
    """The index file opens as a file (asked once SQLite could not read it): SQLite calls
    a folder, or a file this user may not read, corrupt, and a rebuild over it fails or
    replaces what is not ours to replace. :class:`FileAccessError` (exit 2) names it;
    nothing is changed."""
    try:
        with repo.index_path.open("rb"):
            pass
    except OSError as exc:
        _refuse(exc, repo)


def _refuse(exc: OSError, repo: MemoryRepo) -> NoReturn:
    """``exc``, an error opening the index file, as :class:`FileAccessError` (exit 2)."""
    error = file_access_error(exc, root=str(repo.root))
    if error is None:
        raise exc
    raise FileAccessError(
        error.message,
        hint=f"the index is a cache of the files: fix its owner and mode, or remove it "
        f"(rm -r {repo.index_path.relative_to(repo.root)}) to have it rebuilt",
    ) from None


def set_meta(conn: sqlite3.Connection, key: str, value: str | None) -> None:
    """Store one ``meta`` row (the indexed commit, counts, signatures...)."""
    conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))


def new_stamp(conn: sqlite3.Connection, key: str) -> None:
    """Draw a new random ``meta`` stamp ``key``: what a process keeps under the old one
    (recall's caches) is stale."""
    set_meta(conn, key, os.urandom(8).hex())


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """One write transaction, taken at once (``BEGIN IMMEDIATE``); rolled back on error."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def chunks(items: list[str], size: int) -> Iterator[list[str]]:
    """``items`` in slices of ``size``: SQLite caps the ``?`` parameters of one query."""
    for i in range(0, len(items), size):
        yield items[i : i + size]


def recount_df(
    conn: sqlite3.Connection, table: str, select: str, terms: set[str], *, everything: bool
) -> None:
    """Recount the document frequency of ``terms`` in ``table`` from ``select`` (a
    ``SELECT term, ... FROM postings`` grouped by term here), or of every term."""
    if everything:
        conn.execute(f"DELETE FROM {table}")
        conn.execute(f"INSERT INTO {table} {select} GROUP BY term")
        return
    for chunk in chunks(sorted(terms), 500):
        marks = ",".join("?" * len(chunk))
        conn.execute(f"DELETE FROM {table} WHERE term IN ({marks})", chunk)
        conn.execute(f"INSERT INTO {table} {select} WHERE term IN ({marks}) GROUP BY term", chunk)


def remove_dead_temps(repo: MemoryRepo) -> None:
    """``index.db.tmp-<pid>`` files whose process is gone: a rebuild killed midway
    (issue 15). A live process's file is left alone, whoever it is."""
    for tmp in repo.state_dir.glob("index.db.tmp-*"):
        pid = tmp.name.rpartition("-")[2]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        if not pid_alive(int(pid)):
            tmp.unlink(missing_ok=True)
