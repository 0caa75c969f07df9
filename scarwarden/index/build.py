"""A full rebuild: a complete index from the files alone, in a temporary file swapped
in with ``os.replace``, so a concurrent reader never sees half an index.

The blobs stream out of one ``git cat-file --batch`` and, on a large ledger, are parsed
in two forked worker processes (:mod:`scarwarden.index.load`; figures in
``bench/ledger_bench.py``).
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TypeVar

from scarwarden import git
from scarwarden.errors import GitError
from scarwarden.git import blob_id
from scarwarden.index import load as index_load
from scarwarden.index.ledger_words import index_ledger_words
from scarwarden.index.rules import index_playbook
from scarwarden.index.scan import (
    Sums,
    file_sig,
    in_thread,
    list_names,
    listing_sums,
    playbook_signature,
    scan_dirs,
    trusted_mtime,
    trusted_sig,
)
from scarwarden.index.schema import (
    REDERIVED_STAMP,
    SCHEMA,
    SCHEMA_VERSION,
    RefreshStats,
    connect,
    remove_dead_temps,
    set_meta,
    transaction,
    writer_lock,
)
from scarwarden.logs import log
from scarwarden.repo import MemoryRepo

_T = TypeVar("_T")


def rebuild(
    repo: MemoryRepo,
    reason: str = "requested",
    *,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> RefreshStats:
    """Build a complete index in a temporary file and swap it in atomically.

    ``workers``: processes that parse the files (default: two on a large ledger where
    the machine has the cores, else none besides this one; see
    :mod:`scarwarden.index.load`). ``progress(done, total)`` is called as episode files
    are loaded (a bar on a terminal, issue 18).
    """
    stats = RefreshStats(mode="rebuild", reason=reason)
    repo.state_dir.mkdir(parents=True, exist_ok=True)
    _ensure_ignored(repo)
    remove_dead_temps(repo)
    tmp = repo.state_dir / f"index.db.tmp-{os.getpid()}"
    packed = repo.state_dir / f"index.db.tmp-packed-{os.getpid()}"
    tmp.unlink(missing_ok=True)
    packed.unlink(missing_ok=True)
    head = git.head(repo.root)
    scanned_ns = time.time_ns()  # before listing: what is racy is judged against this
    dirs, tracked, untracked, inodes, sums = _list_ledger(repo)
    if workers is None:
        workers = index_load.default_workers(len(tracked) + len(untracked))
    # Workers are forked before the database is opened and git is started.
    chunks = index_load.chunked(_read_files(repo, tracked, untracked))
    with index_load.parsed(chunks, repo.episodes_rel, workers) as results:
        # The index holds the files as they are: git says which tracked ones were edited
        # since its index took them, stat'ing every one (~0.7 s at 100k episodes, ~9 s
        # at 1M, more with the inodes not cached), while the files are parsed.
        edited = in_thread(_modified, repo)
        conn = connect(tmp)
        try:
            if progress is not None:
                results = _counted(results, len(tracked) + len(untracked), progress)
            _fill_new_index(conn, repo, head, dirs, results, stats, scanned_ns, inodes, sums)
            modified = edited()
            loose = _loose(conn, repo, head, untracked, scanned_ns, modified)
            stats.edited = sorted(modified & set(loose))
            with transaction(conn):
                set_meta(conn, "loose", json.dumps(loose, sort_keys=True))
            _carry_over_recall_log(conn, repo.index_path)
            # Written again in key order: the postings tables, filled in episode order,
            # have pages ~2/3 full (5% of the file at 10k episodes).
            conn.execute("VACUUM INTO ?", (str(packed),))
            conn.close()
            tmp.unlink()
            with writer_lock(repo):  # never under a writer's journal (see writer_lock)
                os.replace(packed, repo.index_path)
        except BaseException:
            conn.close()
            tmp.unlink(missing_ok=True)
            packed.unlink(missing_ok=True)
            raise
    if progress is not None:
        progress(len(tracked) + len(untracked), len(tracked) + len(untracked))
    return stats


def _modified(repo: MemoryRepo) -> set[str]:
    """The tracked episode files edited since git's index took them (none when git
    cannot say: the next refresh of their folder still compares them)."""
    try:
        return git.ls_files_modified(repo.root, repo.episodes_rel)
    except GitError:
        return set()


def _loose(
    conn: sqlite3.Connection,
    repo: MemoryRepo,
    head: str | None,
    untracked: list[str],
    now_ns: int,
    edited: set[str],
) -> dict[str, str]:
    """The episode files just indexed that HEAD's tree does not hold, and the invalid
    ones: what every refresh checks again ("loose", :mod:`scarwarden.index.refresh`).
    Untracked files were read from disk (their signature now); staged ones, and the
    ``edited`` ones (tracked, edited since git's index took them), from git's index (no
    signature: the next refresh compares their content, and reads an edited one from
    disk). Without this, a valid uncommitted episode present at a rebuild passed for
    committed: receipts named HEAD's ledger without ``+uncommitted``, and an edit of it
    in place went unseen."""
    indexed = dict(conn.execute("SELECT path, episode_row IS NULL FROM files").fetchall())
    loose = {p: file_sig(repo.root / p, now_ns) or "" for p in untracked if p in indexed}
    if head is None:
        staged = set(indexed)
    else:
        changes = git.diff_name_status(repo.root, head, None, repo.episodes_rel, cached=True)
        staged = {c.path for c in changes if c.status != "D"} & set(indexed)
    staged |= {p for p, invalid in indexed.items() if invalid}
    staged |= edited & set(indexed)
    loose.update((p, "") for p in staged - set(loose))
    return loose


def _counted(items: Iterable[_T], total: int, progress: Callable[[int, int], None]) -> Iterator[_T]:
    """``items``, reporting every 500th: a call per file would cost more than the bar shows."""
    done = 0
    for item in items:
        yield item
        done += 1
        if done % 500 == 0:
            progress(done, total)


def _list_ledger(
    repo: MemoryRepo,
) -> tuple[dict[str, int], list[tuple[str, str]], list[str], dict[str, int], dict[str, Sums]]:
    """Episode folders with their mtimes; tracked files (path, blob) as git's index has
    them; untracked files; every file's inode; each folder's listing summed
    (:mod:`scarwarden.index.folders`)."""
    dirs = scan_dirs(repo)
    on_disk: dict[str, int] = {}
    sums: dict[str, Sums] = {}
    for dir_rel in dirs:
        listed = list_names(repo, dir_rel)
        sums[dir_rel] = listing_sums(listed)
        on_disk.update((f"{dir_rel}/{name}", inode) for name, inode in listed.items())
    tracked = sorted(
        (e.path, e.blob) for e in git.ls_files_stage(repo.root, repo.episodes_rel) if e.path in on_disk
    )
    untracked = sorted(set(on_disk) - {path for path, _blob in tracked})
    return dirs, tracked, untracked, on_disk, sums


def _read_files(
    repo: MemoryRepo, tracked: list[tuple[str, str]], untracked: list[str]
) -> Iterator[index_load.Item]:
    """(path, blob, bytes) of every episode file: tracked ones as git's index has them,
    read with one streaming ``cat-file --batch`` (packed objects read far faster than
    100k small files; one edited since is read again from disk after, see
    :func:`rebuild`), the others from disk."""
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


def _fill_new_index(
    conn: sqlite3.Connection,
    repo: MemoryRepo,
    head: str | None,
    dirs: dict[str, int],
    files: Iterable[tuple[str, str, index_load.Parsed]],
    stats: RefreshStats,
    now_ns: int,
    inodes: dict[str, int],
    sums: dict[str, Sums],
) -> None:
    # A file nobody else sees until it is swapped in: no journal, no syncs.
    conn.execute("PRAGMA journal_mode = OFF")
    conn.execute("PRAGMA synchronous = OFF")
    conn.executescript(SCHEMA)
    with transaction(conn):
        loader = index_load.BulkLoader(conn, inodes)
        for path, blob, result in files:
            loader.add(path, blob, result)
        loader.finish()
        stats.episodes_added = loader.added
        stats.invalid_files = loader.invalid
        set_meta(conn, "episode_count", str(loader.added))
        conn.executemany(
            "INSERT INTO dirs VALUES (?, ?)", [(d, trusted_mtime(m, now_ns)) for d, m in dirs.items()]
        )
        conn.executemany("INSERT INTO folder_sums VALUES (?, ?, ?, ?, ?)", [(d, *s) for d, s in sums.items()])
        index_playbook(conn, repo, stats)
        index_ledger_words(conn, episodes=True, rules=True)
        set_meta(conn, "schema_version", str(SCHEMA_VERSION))
        set_meta(conn, "rederived", REDERIVED_STAMP)
        set_meta(conn, "memory_dir", repo.memory_rel)
        set_meta(conn, "head", head)
        set_meta(conn, "playbook_sig", trusted_sig(playbook_signature(repo), now_ns))


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
            "playbook_commit, detail FROM old.recall_log ORDER BY rowid"
        )
    except sqlite3.DatabaseError as exc:
        log.warning("the recall log of the old index could not be kept: %s", exc)
    finally:
        conn.execute("DETACH DATABASE old")


def _ensure_ignored(repo: MemoryRepo) -> None:
    """Keep the cache out of git even where ``init`` did not write .gitignore."""
    marker = repo.state_dir / ".gitignore"
    if not marker.exists():
        marker.write_text("*\n")
