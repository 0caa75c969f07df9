"""The SQLite index: a cache of the memory files, never their source.

``.scarwarden/index.db`` holds episodes, rules, citations both ways, tags, full-text
search over episodes and the postings recall scores with. It is rebuilt from the files
alone and refreshed incrementally before every read:

* committed changes: ``git diff --name-status <indexed commit> HEAD`` (a few ms);
* files added or removed in the working tree (staged or not): each episode month
  folder's mtime is remembered, and only folders whose mtime moved are listed;
* the playbook: its (size, mtime, inode) signature; when it moved, only the rules whose
  content changed get new postings;
* after a rebase or a reset that lost the indexed commit: stored blob IDs are compared
  with ``git ls-files -s`` (slower, still no re-parse of unchanged files).

A missing, corrupt or old-schema index is rebuilt without being asked, in a temporary
file swapped in with ``os.replace``, so a concurrent reader never sees half an index.
A rebuild streams the blobs out of one ``git cat-file --batch`` and, on a large ledger,
parses them in two forked worker processes (:mod:`scarwarden.index_load`; figures in
``bench/ledger_bench.py``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import sqlite3
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scarwarden import git, text
from scarwarden.errors import GitError, ValidationError
from scarwarden.files import playbook as pb
from scarwarden.files.atomic import file_lock
from scarwarden.files.episodes import Episode
from scarwarden.index import load as index_load
from scarwarden.repo import MemoryRepo

log = logging.getLogger("scarwarden")

#: Bump when the schema or what is stored changes; an index with another version is
#: rebuilt automatically.
SCHEMA_VERSION = 5

SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
-- The episode tables' secondary indexes are created after a rebuild's bulk load
-- (index_load.EPISODE_INDEXES).
CREATE TABLE files (path TEXT PRIMARY KEY, dir TEXT NOT NULL, blob TEXT,
                    episode_id TEXT) WITHOUT ROWID;
CREATE TABLE dirs (path TEXT PRIMARY KEY, mtime_ns INTEGER) WITHOUT ROWID;
CREATE TABLE episodes (
    rowid INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, path TEXT NOT NULL, at TEXT,
    agent TEXT, task TEXT, source TEXT, doc TEXT NOT NULL);
CREATE TABLE episode_tags (tag TEXT, episode_id TEXT, PRIMARY KEY (tag, episode_id))
    WITHOUT ROWID;
CREATE VIRTUAL TABLE episodes_fts USING fts5 (task, action, outcome, correction,
    tokenize = 'porter unicode61 remove_diacritics 2');
CREATE TABLE rules (
    id TEXT PRIMARY KEY, position INTEGER, title TEXT, text TEXT, tags TEXT,
    episode_ids TEXT, retired INTEGER, reason TEXT, replaced_by TEXT, line INTEGER,
    length INTEGER, digest TEXT) WITHOUT ROWID;
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
-- One row per (stem of a tag part, rule, tag); 'parts' is how many distinct stems the
-- tag has, so a tag hits when all its parts are among the task's stems.
CREATE TABLE rule_tag_stems (stem TEXT, rule_id TEXT, tag TEXT, parts INTEGER,
    PRIMARY KEY (stem, rule_id, tag)) WITHOUT ROWID;
CREATE INDEX rule_tag_stems_rule ON rule_tag_stems (rule_id);
CREATE TABLE recall_log (
    rowid INTEGER PRIMARY KEY, at TEXT, task TEXT, verdict TEXT, rule_ids TEXT,
    scores TEXT, playbook_commit TEXT, detail TEXT);
"""


@dataclass
class RefreshStats:
    """What a refresh did (for ``scarwarden index`` and the benchmarks)."""

    mode: str = "incremental"  # or "rebuild"
    episodes_added: int = 0
    episodes_removed: int = 0
    rules_changed: int = 0
    invalid_files: list[str] = field(default_factory=list)
    reason: str | None = None


def blob_id(data: bytes) -> str:
    """Git's blob ID of ``data`` (so files read from disk compare with git's)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()  # noqa: S324


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), timeout=30, isolation_level=None)
    conn.execute("PRAGMA busy_timeout = 30000")
    # A cache: NORMAL spares FULL's extra syncs per commit (5 ms typical, tails of
    # 20-80 ms measured on a busy disk), and the rare file hurt by a power cut at the
    # wrong moment is detected as corrupt and rebuilt.
    conn.execute("PRAGMA synchronous = NORMAL")
    return conn


class Index:
    """An open, fresh index. Use :func:`open_index` to get one."""

    def __init__(self, repo: MemoryRepo, conn: sqlite3.Connection, stats: RefreshStats):
        self.repo = repo
        self.conn = conn
        self.stats = stats

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- meta ---------------------------------------------------------------------
    def meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    @property
    def indexed_commit(self) -> str | None:
        return self.meta("head")

    def playbook_error(self) -> str | None:
        return self.meta("playbook_error")

    # -- episodes -----------------------------------------------------------------
    def episode_count(self) -> int:
        # Kept in meta by rebuild and refresh: count(*) reads the whole table (~8 ms at
        # 100k episodes, paid by every `scarwarden index`).
        stored = self.meta("episode_count")
        if stored is not None:
            return int(stored)
        return int(self.conn.execute("SELECT count(*) FROM episodes").fetchone()[0])

    def get_episode(self, episode_id: str) -> Episode | None:
        row = self.conn.execute("SELECT doc FROM episodes WHERE id = ?", (episode_id,)).fetchone()
        return None if row is None else Episode(json.loads(row[0]))

    def episode_path(self, episode_id: str) -> str | None:
        row = self.conn.execute("SELECT path FROM episodes WHERE id = ?", (episode_id,)).fetchone()
        return None if row is None else str(row[0])

    def existing_episode_ids(self, ids: Iterable[str]) -> set[str]:
        ids = list(dict.fromkeys(ids))
        found: set[str] = set()
        for chunk in _chunks(ids, 500):
            marks = ",".join("?" * len(chunk))
            found.update(r[0] for r in self.conn.execute(
                f"SELECT id FROM episodes WHERE id IN ({marks})", chunk))
        return found

    def list_episodes(self, *, tags: Iterable[str] = (), since: str | None = None,
                      until: str | None = None, agent: str | None = None,
                      grep: str | None = None, limit: int | None = None,
                      newest_first: bool = False, offset: int = 0) -> list[Episode]:
        """Episodes matching every filter, oldest first (by ``at``, then ID); ``offset``
        skips that many of them first (paging)."""
        where, args = self._episode_filters(tags, since, until, agent, grep)
        sql = "SELECT e.doc FROM episodes e" + where
        order = "DESC" if newest_first else "ASC"
        sql += f" ORDER BY e.at {order}, e.id {order}"
        if limit is not None or offset:
            sql += " LIMIT ? OFFSET ?"
            args += [-1 if limit is None else limit, max(0, offset)]
        return [Episode(json.loads(r[0])) for r in self.conn.execute(sql, args)]

    def count_episodes(self, *, tags: Iterable[str] = (), since: str | None = None,
                       until: str | None = None, agent: str | None = None,
                       grep: str | None = None) -> int:
        """How many episodes :meth:`list_episodes` would return with these filters."""
        where, args = self._episode_filters(tags, since, until, agent, grep)
        return int(self.conn.execute("SELECT count(*) FROM episodes e" + where, args).fetchone()[0])

    def _episode_filters(self, tags: Iterable[str], since: str | None, until: str | None,
                         agent: str | None, grep: str | None) -> tuple[str, list[Any]]:
        where: list[str] = []
        args: list[Any] = []
        for tag in tags:
            where.append("e.id IN (SELECT episode_id FROM episode_tags WHERE tag = ?)")
            args.append(tag.lower())
        if since:
            where.append("e.at >= ?")
            args.append(since)
        if until:
            where.append("e.at <= ?")
            args.append(until)
        if agent:
            where.append("e.agent = ?")
            args.append(agent)
        if grep:
            where.append("e.rowid IN (SELECT rowid FROM episodes_fts WHERE episodes_fts MATCH ?)")
            args.append(fts_query(grep))
        return (" WHERE " + " AND ".join(where) if where else ""), args

    def episode_months(self) -> list[tuple[str, int]]:
        return [(r[0], r[1]) for r in self.conn.execute(
            "SELECT substr(at, 1, 7) AS m, count(*) FROM episodes GROUP BY m ORDER BY m DESC")]

    def episode_tags(self) -> list[tuple[str, int]]:
        return [(r[0], r[1]) for r in self.conn.execute(
            "SELECT tag, count(*) FROM episode_tags GROUP BY tag ORDER BY count(*) DESC, tag")]

    def episode_agents(self) -> list[tuple[str, int]]:
        return [(r[0], r[1]) for r in self.conn.execute(
            "SELECT agent, count(*) FROM episodes WHERE agent IS NOT NULL "
            "GROUP BY agent ORDER BY count(*) DESC, agent")]

    # -- rules --------------------------------------------------------------------
    def require_playbook(self) -> None:
        error = self.playbook_error()
        if error:
            raise ValidationError(
                error, hint="fix the playbook; 'scarwarden check --all' lists every problem")

    def rules(self, *, include_retired: bool = False) -> list[pb.Rule]:
        sql = "SELECT id, title, text, tags, episode_ids, retired, reason, replaced_by, line FROM rules"
        if not include_retired:
            sql += " WHERE retired = 0"
        sql += " ORDER BY retired, position"
        return [_rule_from_row(r) for r in self.conn.execute(sql)]

    def get_rule(self, rule_id: str) -> pb.Rule | None:
        row = self.conn.execute(
            "SELECT id, title, text, tags, episode_ids, retired, reason, replaced_by, line "
            "FROM rules WHERE id = ?", (rule_id,)).fetchone()
        return None if row is None else _rule_from_row(row)

    def rules_citing(self, episode_id: str) -> list[str]:
        return [r[0] for r in self.conn.execute(
            "SELECT rule_id FROM citations WHERE episode_id = ? ORDER BY rule_id", (episode_id,))]

    def uncited_episode_ids(self) -> list[str]:
        return [r[0] for r in self.conn.execute(
            "SELECT id FROM episodes WHERE id NOT IN (SELECT episode_id FROM citations) "
            "ORDER BY at, id")]


def _rule_from_row(row: tuple[Any, ...]) -> pb.Rule:
    return pb.Rule(row[0], row[1], row[2], tuple(json.loads(row[3])),
                   tuple(json.loads(row[4])), bool(row[5]), row[6], row[7], row[8] or 0)


def fts_query(user_text: str) -> str:
    """Turn free text into a safe FTS5 query: every word must appear (prefix match)."""
    words = [w for w in text._TOKEN.findall(user_text.lower()) if w]
    if not words:
        return '""'
    return " AND ".join('"' + w.replace('"', '""') + '"*' for w in words)


def _chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


# -- building -------------------------------------------------------------------------

def _delete_file(conn: sqlite3.Connection, path: str) -> bool:
    row = conn.execute("SELECT episode_id FROM files WHERE path = ?", (path,)).fetchone()
    conn.execute("DELETE FROM files WHERE path = ?", (path,))
    if row is None or row[0] is None:
        return False
    ep_row = conn.execute("SELECT rowid FROM episodes WHERE id = ? AND path = ?",
                          (row[0], path)).fetchone()
    if ep_row is None:
        return False
    conn.execute("DELETE FROM episodes_fts WHERE rowid = ?", (ep_row[0],))
    conn.execute("DELETE FROM episodes WHERE rowid = ?", (ep_row[0],))
    conn.execute("DELETE FROM episode_tags WHERE episode_id = ?", (row[0],))
    return True


def _index_episode_bytes(conn: sqlite3.Connection, repo: MemoryRepo, path: str, raw: bytes,
                         blob: str, stats: RefreshStats) -> None:
    """Index one file of a live index (refresh); a full rebuild uses index_load.BulkLoader."""
    problem, row = index_load.parse_for_index(path, raw, repo.episodes_rel)
    if row is None:
        log.warning("skipped invalid episode %s: %s", path, problem)
    else:
        clash = conn.execute("SELECT path FROM episodes WHERE id = ?", (row[0],)).fetchone()
        if clash is None:
            index_load.insert_one(conn, path, blob, row)
            stats.episodes_added += 1
            return
        log.warning("skipped %s: episode ID %s is also in %s", path, row[0], clash[0])
    stats.invalid_files.append(path)
    conn.execute("INSERT OR REPLACE INTO files VALUES (?, ?, ?, NULL)",
                 (path, path.rsplit("/", 1)[0], blob))


def _scan_dirs(repo: MemoryRepo) -> dict[str, int]:
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


def _list_yaml(repo: MemoryRepo, dir_rel: str) -> set[str]:
    try:
        with os.scandir(repo.root / dir_rel) as it:
            return {f"{dir_rel}/{e.name}" for e in it
                    if e.name.endswith(".yaml") and e.is_file(follow_symlinks=False)}
    except (FileNotFoundError, NotADirectoryError):
        return set()


def _playbook_signature(repo: MemoryRepo) -> str:
    try:
        st = repo.playbook_path.stat()
    except FileNotFoundError:
        return "missing"
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"


#: A folder or file modified this recently may change again within the same clock tick
#: of the file system without its mtime moving (git's "racy" problem): such an mtime is
#: stored as unknown, so the next refresh looks again instead of trusting it.
RACY_NS = 2_000_000_000


def _trusted_mtime(mtime_ns: int, now_ns: int) -> int:
    return mtime_ns if now_ns - mtime_ns > RACY_NS else -1


def _trusted_sig(sig: str, now_ns: int) -> str:
    parts = sig.split(":")
    return "racy" if len(parts) >= 2 and now_ns - int(parts[1]) <= RACY_NS else sig


def _file_sig(path: Path, now_ns: int) -> str | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return _trusted_sig(f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}", now_ns)


def _loose_changes(conn: sqlite3.Connection, repo: MemoryRepo, meta: dict[str, str],
                   committed: set[str], now_ns: int) -> tuple[dict[str, str], set[str]]:
    """Uncommitted episode files indexed earlier, and those of them edited since.

    Editing a file in place moves neither HEAD nor its folder's mtime; the few files
    not yet committed (hand-written, staged, invalid ones waiting for a fix) are
    therefore stat'ed on every refresh. Right after a rebuild only the invalid files
    are known to be loose.
    """
    if "loose" in meta:
        loose: dict[str, str] = json.loads(meta["loose"])
    else:
        loose = {r[0]: "" for r in conn.execute(
            "SELECT path FROM files WHERE episode_id IS NULL")}
    for path in committed:
        loose.pop(path, None)
    changed: set[str] = set()
    for path, sig in loose.items():
        if sig != "racy" and _file_sig(repo.root / path, now_ns) == sig:
            continue
        # The signature cannot tell: compare content, so an untouched file is not
        # re-parsed (nor re-reported when invalid).
        row = conn.execute("SELECT blob FROM files WHERE path = ?", (path,)).fetchone()
        try:
            raw = (repo.root / path).read_bytes()
        except OSError:
            changed.add(path)
            continue
        if row is None or row[0] != blob_id(raw):
            changed.add(path)
    return loose, changed


def _rule_digest(rule: pb.Rule) -> str:
    payload = json.dumps([rule.title, rule.text, rule.tags, rule.episode_ids, rule.retired,
                          rule.reason, rule.replaced_by])
    return hashlib.sha1(payload.encode()).hexdigest()  # noqa: S324


def _index_playbook(conn: sqlite3.Connection, repo: MemoryRepo, stats: RefreshStats) -> None:
    """Bring the rule tables in line with the playbook file, touching changed rules only."""
    try:
        raw = repo.playbook_path.read_bytes()
    except FileNotFoundError:
        raw = b"# Playbook\n"
    try:
        playbook = pb.parse(raw.decode("utf-8"), source=repo.playbook_rel)
    except UnicodeDecodeError:
        _set_meta(conn, "playbook_error", f"{repo.playbook_rel}: not valid UTF-8")
        return
    except ValidationError as exc:
        _set_meta(conn, "playbook_error", exc.render().removeprefix("error: "))
        return
    conn.execute("DELETE FROM meta WHERE key = 'playbook_error'")
    stored = {r[0]: r[1] for r in conn.execute("SELECT id, digest FROM rules")}
    seen: set[str] = set()
    touched: set[str] = set()  # terms whose document frequency may have moved
    inserts: dict[str, list[tuple[Any, ...]]] = {}
    for position, rule in enumerate(playbook.all_rules()):
        seen.add(rule.id)
        digest = _rule_digest(rule)
        if stored.get(rule.id) == digest:
            conn.execute("UPDATE rules SET position = ?, line = ? WHERE id = ?",
                         (position, rule.line, rule.id))
            continue
        if rule.id in stored:  # a new rule has nothing to delete (and a full build none)
            touched |= _delete_rule(conn, rule.id)
        touched |= _rule_rows(rule, position, digest, inserts)
        stats.rules_changed += 1
    for rule_id in set(stored) - seen:
        touched |= _delete_rule(conn, rule_id)
        stats.rules_changed += 1
    _insert_rows(conn, inserts)
    _update_term_df(conn, touched, everything=not stored)
    total = conn.execute("SELECT count(*), coalesce(sum(length), 0) FROM rules "
                         "WHERE retired = 0").fetchone()
    _set_meta(conn, "rule_count", str(total[0]))
    _set_meta(conn, "rule_total_length", str(total[1]))


def _delete_rule(conn: sqlite3.Connection, rule_id: str) -> set[str]:
    """Remove a rule from every table; return the terms it had postings for."""
    terms = {r[0] for r in conn.execute("SELECT term FROM rule_terms WHERE rule_id = ?",
                                        (rule_id,))}
    for table, column in (("rules", "id"), ("citations", "rule_id"), ("rule_tags", "rule_id"),
                          ("rule_terms", "rule_id"), ("rule_tag_stems", "rule_id")):
        conn.execute(f"DELETE FROM {table} WHERE {column} = ?", (rule_id,))
    return terms


def _update_term_df(conn: sqlite3.Connection, terms: set[str], *, everything: bool) -> None:
    """Recount the document frequency of ``terms`` (of all terms on a first build)."""
    if everything:
        conn.execute("DELETE FROM rule_term_df")
        conn.execute("INSERT INTO rule_term_df SELECT term, count(*) FROM rule_terms "
                     "GROUP BY term")
        return
    for chunk in _chunks(sorted(terms), 500):
        marks = ",".join("?" * len(chunk))
        conn.execute(f"DELETE FROM rule_term_df WHERE term IN ({marks})", chunk)
        conn.execute(f"INSERT INTO rule_term_df SELECT term, count(*) FROM rule_terms "
                     f"WHERE term IN ({marks}) GROUP BY term", chunk)


def rule_terms(rule: pb.Rule) -> Counter[str]:
    """Stemmed term frequencies of a rule's title and text (what recall scores on)."""
    return Counter(text.stems(rule.title + "\n" + rule.text))


_INSERTS = {
    "rules": "INSERT INTO rules VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
    "citations": "INSERT OR IGNORE INTO citations VALUES (?, ?)",
    "rule_tags": "INSERT OR IGNORE INTO rule_tags VALUES (?, ?)",
    "rule_terms": "INSERT INTO rule_terms VALUES (?, ?, ?, ?)",
    "rule_tag_stems": "INSERT OR IGNORE INTO rule_tag_stems VALUES (?, ?, ?, ?)",
}


def _rule_rows(rule: pb.Rule, position: int, digest: str,
               out: dict[str, list[tuple[Any, ...]]]) -> set[str]:
    """Add a rule's rows (postings only when active) to ``out``; return its terms."""
    terms = rule_terms(rule)
    length = sum(terms.values())
    out.setdefault("rules", []).append(
        (rule.id, position, rule.title, rule.text, json.dumps(list(rule.tags)),
         json.dumps(list(rule.episode_ids)), int(rule.retired), rule.reason, rule.replaced_by,
         rule.line, length, digest))
    out.setdefault("citations", []).extend((rule.id, ep) for ep in rule.episode_ids)
    out.setdefault("rule_tags", []).extend((tag, rule.id) for tag in rule.tags)
    if rule.retired:
        return set()
    out.setdefault("rule_terms", []).extend(
        (term, rule.id, tf, length) for term, tf in terms.items())
    stems = out.setdefault("rule_tag_stems", [])
    for tag in rule.tags:
        parts = text.tag_stems(tag)
        stems.extend((s, rule.id, tag, len(parts)) for s in parts)
    return set(terms)


def _insert_rows(conn: sqlite3.Connection, rows: dict[str, list[tuple[Any, ...]]]) -> None:
    """Insert collected rows with one ``executemany`` per table.

    A big batch (a first build) gets a larger page cache while it runs: postings go
    into the B-trees in random order, and with SQLite's default 2 MB cache a 100k-rule
    build spends most of its time re-reading pages.
    """
    count = sum(len(v) for v in rows.values())
    old = conn.execute("PRAGMA cache_size").fetchone()[0]
    if count > 50_000:
        conn.execute("PRAGMA cache_size = -262144")  # a ceiling (256 MiB), not an allocation
    try:
        for table, sql in _INSERTS.items():
            if rows.get(table):
                conn.executemany(sql, rows[table])
    finally:
        conn.execute(f"PRAGMA cache_size = {int(old)}")


def _set_meta(conn: sqlite3.Connection, key: str, value: str | None) -> None:
    conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))


@contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[None]:
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _list_ledger(repo: MemoryRepo) -> tuple[dict[str, int], list[tuple[str, str]], list[str]]:
    """Episode folders with their mtimes; tracked files (path, blob); untracked files."""
    dirs = _scan_dirs(repo)
    on_disk: set[str] = set()
    for dir_rel in dirs:
        on_disk |= _list_yaml(repo, dir_rel)
    tracked = sorted((e.path, e.blob) for e in git.ls_files_stage(repo.root, repo.episodes_rel)
                     if e.path in on_disk)
    untracked = sorted(on_disk - {path for path, _blob in tracked})
    return dirs, tracked, untracked


def _read_files(repo: MemoryRepo, tracked: list[tuple[str, str]],
                untracked: list[str]) -> Iterator[index_load.Item]:
    """(path, blob, bytes) of every episode file: tracked ones as git's index has them,
    read with one streaming ``cat-file --batch`` (packed objects read far faster than
    100k small files), untracked ones from disk."""
    contents = git.cat_file_stream(repo.root, [blob for _path, blob in tracked])
    for (path, blob), raw in zip(tracked, contents, strict=True):
        if raw is not None:
            yield path, blob, raw
    for path in untracked:
        try:
            raw = (repo.root / path).read_bytes()
        except OSError:
            continue  # removed since it was listed
        yield path, blob_id(raw), raw


def rebuild(repo: MemoryRepo, reason: str = "requested", *,
            workers: int | None = None) -> RefreshStats:
    """Build a complete index in a temporary file and swap it in atomically.

    ``workers``: processes that parse the files (default: two on a large ledger where
    the machine has the cores, else none besides this one; see
    :mod:`scarwarden.index_load`).
    """
    stats = RefreshStats(mode="rebuild", reason=reason)
    repo.state_dir.mkdir(parents=True, exist_ok=True)
    _ensure_ignored(repo)
    tmp = repo.state_dir / f"index.db.tmp-{os.getpid()}"
    tmp.unlink(missing_ok=True)
    head = git.head(repo.root)
    scanned_ns = time.time_ns()  # before listing: what is racy is judged against this
    dirs, tracked, untracked = _list_ledger(repo)
    if workers is None:
        workers = index_load.default_workers(len(tracked) + len(untracked))
    # Workers are forked before the database is opened and git is started.
    chunks = index_load.chunked(_read_files(repo, tracked, untracked))
    with index_load.parsed(chunks, repo.episodes_rel, workers) as results:
        conn = _connect(tmp)
        try:
            _fill_new_index(conn, repo, head, dirs, results, stats, scanned_ns)
            _carry_over_recall_log(conn, repo.index_path)
            conn.close()
            with writer_lock(repo):  # never under a writer's journal (see writer_lock)
                os.replace(tmp, repo.index_path)
        except BaseException:
            conn.close()
            tmp.unlink(missing_ok=True)
            raise
    return stats


def _fill_new_index(conn: sqlite3.Connection, repo: MemoryRepo, head: str | None,
                    dirs: dict[str, int],
                    files: Iterable[tuple[str, str, index_load.Parsed]],
                    stats: RefreshStats, now_ns: int) -> None:
    conn.execute("PRAGMA journal_mode = OFF")
    conn.execute("PRAGMA synchronous = OFF")
    conn.executescript(SCHEMA)
    with _transaction(conn):
        loader = index_load.BulkLoader(conn)
        for path, blob, result in files:
            loader.add(path, blob, result)
        loader.finish()
        stats.episodes_added = loader.added
        stats.invalid_files = loader.invalid
        _set_meta(conn, "episode_count", str(loader.added))
        conn.executemany("INSERT INTO dirs VALUES (?, ?)",
                         [(d, _trusted_mtime(m, now_ns)) for d, m in dirs.items()])
        _index_playbook(conn, repo, stats)
        _set_meta(conn, "schema_version", str(SCHEMA_VERSION))
        _set_meta(conn, "memory_dir", repo.memory_rel)
        _set_meta(conn, "head", head)
        _set_meta(conn, "playbook_sig", _trusted_sig(_playbook_signature(repo), now_ns))


def _carry_over_recall_log(conn: sqlite3.Connection, old_path: Path) -> None:
    """Copy the recall log from the index being replaced.

    The log is the one thing in the index that is not derived from the files ("why did
    the agent do X last Tuesday"), so a rebuild (schema change, ``index --rebuild``)
    must not lose it. A corrupt old file loses its log: nothing else can be done.
    """
    if not old_path.exists():
        return
    try:
        conn.execute("ATTACH DATABASE ? AS old", (str(old_path),))
    except sqlite3.DatabaseError:
        return
    try:
        conn.execute(
            "INSERT INTO recall_log (rowid, at, task, verdict, rule_ids, scores, "
            "playbook_commit, detail) SELECT rowid, at, task, verdict, rule_ids, scores, "
            "playbook_commit, detail FROM old.recall_log ORDER BY rowid")
    except sqlite3.DatabaseError as exc:
        log.warning("the recall log of the old index could not be kept: %s", exc)
    finally:
        conn.execute("DETACH DATABASE old")


def _ensure_ignored(repo: MemoryRepo) -> None:
    """Keep the cache out of git even where ``init`` did not write .gitignore."""
    marker = repo.state_dir / ".gitignore"
    if not marker.exists():
        marker.write_text("*\n")


def _open_existing(repo: MemoryRepo) -> tuple[sqlite3.Connection | None, str | None]:
    """Open the index if usable; otherwise (None, why it must be rebuilt)."""
    if not repo.index_path.exists():
        return None, "missing"
    try:
        conn = _connect(repo.index_path)
        rows = dict(conn.execute("SELECT key, value FROM meta WHERE key IN "
                                 "('schema_version', 'memory_dir')").fetchall())
    except sqlite3.DatabaseError:
        with contextlib.suppress(Exception):  # the file is garbage; we only need it closed
            conn.close()
        log.warning("the index at %s was corrupt; rebuilt it from the files", repo.index_path)
        return None, "corrupt"
    if rows.get("schema_version") != str(SCHEMA_VERSION):
        conn.close()
        return None, "old schema"
    if rows.get("memory_dir") != repo.memory_rel:
        conn.close()
        return None, "memory folder changed"
    return conn, None


def _committed_changes(repo: MemoryRepo, old_head: str | None,
                       head: str | None) -> list[git.Change] | None:
    """Episode files changed between the indexed commit and HEAD; ``None`` when there
    is no indexed commit or it is gone (rewritten away by a rebase or reset + gc)."""
    if not old_head or not head:
        return None
    try:  # one git process; a separate existence check would cost another
        return git.diff_name_status(repo.root, old_head, head, repo.episodes_rel)
    except GitError:
        return None


def refresh(repo: MemoryRepo, conn: sqlite3.Connection) -> RefreshStats:
    """Apply what changed since the last refresh (see the module docstring)."""
    stats = RefreshStats()
    head = git.head(repo.root)
    with _transaction(conn):
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        changed: set[str] = set()
        committed: set[str] = set()  # paths HEAD's tree now holds (not loose)
        old_head = meta.get("head")
        if head != old_head:
            diff = _committed_changes(repo, old_head, head)
            if diff is not None:
                for change in diff:
                    changed.add(change.path)
                    if change.status != "D":
                        committed.add(change.path)
            else:
                # The indexed commit is gone (rebase + gc, reset) or there was none:
                # compare blob IDs with git's index instead of re-parsing everything.
                stored = dict(conn.execute("SELECT path, blob FROM files").fetchall())
                staged = {e.path: e.blob for e in git.ls_files_stage(repo.root, repo.episodes_rel)}
                changed |= {p for p, blob in staged.items() if stored.get(p) != blob}
                # Indexed files git no longer tracks were removed or are untracked: re-read.
                changed |= set(stored) - set(staged)
                committed |= set(staged)
            _set_meta(conn, "head", head)
        now_ns = time.time_ns()
        loose, loose_changed = _loose_changes(conn, repo, meta, committed, now_ns)
        changed |= loose_changed
        dirs = _scan_dirs(repo)
        stored_dirs = dict(conn.execute("SELECT path, mtime_ns FROM dirs").fetchall())
        for dir_rel, mtime in dirs.items():
            if stored_dirs.get(dir_rel) == mtime:
                continue
            listed = _list_yaml(repo, dir_rel)
            known = {r[0] for r in conn.execute("SELECT path FROM files WHERE dir = ?", (dir_rel,))}
            changed |= listed ^ known
            conn.execute("INSERT OR REPLACE INTO dirs VALUES (?, ?)",
                         (dir_rel, _trusted_mtime(mtime, now_ns)))
        for dir_rel in set(stored_dirs) - set(dirs):
            changed |= {r[0] for r in conn.execute("SELECT path FROM files WHERE dir = ?",
                                                   (dir_rel,))}
            conn.execute("DELETE FROM dirs WHERE path = ?", (dir_rel,))
        for path in sorted(changed):
            if not path.endswith(".yaml") or not path.startswith(repo.episodes_rel + "/"):
                continue
            if _delete_file(conn, path):
                stats.episodes_removed += 1
            loose.pop(path, None)
            try:
                raw = (repo.root / path).read_bytes()
            except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
                continue
            _index_episode_bytes(conn, repo, path, raw, blob_id(raw), stats)
            if path not in committed:
                loose[path] = _file_sig(repo.root / path, now_ns) or ""
        loose_json = json.dumps(loose, sort_keys=True)
        if loose_json != meta.get("loose"):
            _set_meta(conn, "loose", loose_json)
        if stats.episodes_added or stats.episodes_removed:
            _set_meta(conn, "episode_count", str(
                int(meta["episode_count"]) + stats.episodes_added - stats.episodes_removed
                if "episode_count" in meta else
                conn.execute("SELECT count(*) FROM episodes").fetchone()[0]))
        sig = _playbook_signature(repo)
        if sig != meta.get("playbook_sig"):
            _index_playbook(conn, repo, stats)
            _set_meta(conn, "playbook_sig", _trusted_sig(sig, now_ns))
    return stats


def writer_lock(repo: MemoryRepo) -> contextlib.AbstractContextManager[None]:
    """Held while the index file is opened and written, and while a rebuild swaps it.

    SQLite finds a rollback journal by *name* (``index.db-journal``). A writer still on
    a file that a rebuild has just replaced would leave a journal that the next process
    to open the new file "recovers" into it, corrupting it. So opening-and-refreshing
    and the swap take turns. Anything else that writes to ``Index.conn`` (the recall
    log) must hold this lock too.
    """
    return file_lock(repo.state_dir / "index.lock")


def open_index(repo: MemoryRepo, *, rebuild_now: bool = False) -> Index:
    """The index, refreshed (or rebuilt where it is missing, corrupt or out of date)."""
    why: str | None = "requested"
    if not rebuild_now:
        with writer_lock(repo):
            conn, why = _open_existing(repo)
            if conn is not None:
                try:
                    return Index(repo, conn, refresh(repo, conn))
                except sqlite3.DatabaseError:
                    conn.close()
                    log.warning("the index at %s was corrupt; rebuilt it from the files",
                                repo.index_path)
                    why = "corrupt"
    stats = rebuild(repo, reason=why or "requested")
    return Index(repo, _connect(repo.index_path), stats)
