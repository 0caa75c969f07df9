"""Keeping the index fresh: every read opens it through :func:`open_index`, which
applies what changed since the last refresh, or rebuilds where it cannot.

What a refresh looks at (see the package docstring for the costs):

* committed changes since the indexed commit (``git diff --name-status``, in a thread
  while the folders are listed), or, when that commit is gone, stored blob IDs against
  ``git ls-files -s``;
* uncommitted files indexed earlier ("loose" ones), by their file signature;
* episode folders whose mtime moved, listed again (:mod:`~scarwarden.index.folders`:
  their rows are read only where the listing does not sum to what was kept);
* the playbook, by its signature (only changed rules get new postings).
"""

from __future__ import annotations

import errno
import json
import sqlite3
import time
from collections.abc import Callable

from scarwarden import git
from scarwarden.errors import GitError
from scarwarden.files.episode_fields import expected_relpath
from scarwarden.git import blob_id
from scarwarden.index.folders import changed_folders, list_moved
from scarwarden.index.packed import blob_bytes, blob_hex, load_doc
from scarwarden.index.queries import Index
from scarwarden.index.scan import file_sig, in_thread, playbook_signature, trusted_sig
from scarwarden.index.schema import (
    RefreshStats,
    connect,
    open_existing,
    rebuild_lock,
    remove_dead_temps,
    set_meta,
    transaction,
    writer_lock,
)
from scarwarden.logs import log
from scarwarden.regular_files import read_regular, read_with_inode
from scarwarden.repo import MemoryRepo


def open_index(
    repo: MemoryRepo, *, rebuild_now: bool = False, progress: Callable[[int, int], None] | None = None
) -> Index:
    """The index, refreshed (or rebuilt where it is missing, corrupt or out of date);
    ``progress(done, total)`` follows a rebuild's files (a refresh is too quick for it)."""
    remove_dead_temps(repo)  # a rebuild killed midway left its file (issue 15)
    if not rebuild_now:
        index, _, _ = _refreshed(repo, say=False)
        if index is not None:
            return index
    from scarwarden.index.build import rebuild  # a rebuild's own modules: only when one is due

    why: str | None = "requested"
    failed: sqlite3.DatabaseError | None = None
    with rebuild_lock(repo):
        if not rebuild_now:  # another thread or process may have rebuilt it meanwhile
            index, why, failed = _refreshed(repo)
            if index is not None:
                return index
        stats = rebuild(repo, reason=why or "requested", progress=progress)
    if failed is not None:  # said once rebuilt: a rebuild that fails says why itself
        _say_rebuilt(repo, failed)
    conn = connect(repo.index_path)
    if stats.edited:  # read from git's copy, asked while it was parsed: now from disk
        with writer_lock(repo):
            refresh(repo, conn)
    return Index(repo, conn, stats)


def _refreshed(
    repo: MemoryRepo, *, say: bool = True
) -> tuple[Index | None, str | None, sqlite3.DatabaseError | None]:
    """The existing index, refreshed; else None, why it must be rebuilt, and the error
    of a refresh that failed (``say``: :func:`open_existing`'s)."""
    with writer_lock(repo):
        conn, why = open_existing(repo, say=say)
        if conn is None:
            return None, why, None
        try:
            return Index(repo, conn, refresh(repo, conn)), None, None
        except sqlite3.DatabaseError as exc:
            conn.close()
            return None, "corrupt", exc


def _say_rebuilt(repo: MemoryRepo, exc: sqlite3.DatabaseError) -> None:
    """Why the refresh gave way to a rebuild: a damaged file, or one SQLite could not
    write (read-only, a full disk: an ``OperationalError``), which is no corruption."""
    if isinstance(exc, sqlite3.OperationalError):
        log.warning(
            "the index at %s could not be refreshed (SQLite says %s); rebuilt it from the files",
            repo.index_path,
            exc,
        )
    else:
        log.warning("the index at %s was corrupt; rebuilt it from the files", repo.index_path)


def refresh(repo: MemoryRepo, conn: sqlite3.Connection) -> RefreshStats:
    """Apply what changed since the last refresh (see the module docstring)."""
    stats = RefreshStats()
    with transaction(conn):
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        head = git.head(repo.root, known=meta.get("head"))  # the ref files, when they say it
        changed: set[str] = set()
        committed: set[str] = set()  # paths HEAD's tree now holds (not loose)
        diff = None
        if head != meta.get("head"):
            # git's tree diff (13 ms at 1M episodes) runs while the folders are listed
            # (30 ms): the thread waits on git's process, the GIL free.
            diff = in_thread(_committed_changes, repo, meta.get("head"), head)
        now_ns = time.time_ns()
        listed = list_moved(conn, repo)
        if diff is not None:
            changed, committed = _changed_since(conn, repo, diff())
            set_meta(conn, "head", head)
        loose, loose_changed = _loose_changes(conn, repo, meta, committed, now_ns)
        changed |= loose_changed
        moved: set[str] = set()
        inodes: dict[str, int] = {}  # files of those folders whose inode is not the one stored
        changed |= changed_folders(conn, repo, listed, now_ns, changed, moved, inodes, stats)
        if moved:
            edited, clean = _edited_in_place(conn, repo, head, moved, loose, set(inodes) - changed)
            changed |= edited
            committed |= clean
        for path in sorted(changed):
            if not path.endswith(".yaml") or not path.startswith(repo.episodes_rel + "/"):
                continue
            loose.pop(path, None)
            inode = _reindex_file(conn, repo, path, stats)
            if inode is None:
                continue
            # Its row is written anew: the inode the folder listed, or (its folder did
            # not move: an edit in place) the file's own, so the folder's sums still hold.
            inodes.setdefault(path, inode)
            if path not in committed:
                loose[path] = file_sig(repo.root / path, now_ns) or ""
        moves = sorted((inode, path) for path, inode in inodes.items())
        conn.executemany("UPDATE files SET inode = ? WHERE path = ?", moves)
        loose_json = json.dumps(loose, sort_keys=True)
        if loose_json != meta.get("loose"):
            set_meta(conn, "loose", loose_json)
        _update_episode_count(conn, meta, stats)
        sig = playbook_signature(repo)
        playbook_moved = sig != meta.get("playbook_sig")
        if playbook_moved:
            _index_playbook(conn, repo, stats)
            set_meta(conn, "playbook_sig", trusted_sig(sig, now_ns))
        episodes_moved = bool(stats.episodes_added or stats.episodes_removed)
        if episodes_moved or playbook_moved:
            from scarwarden.index.ledger_words import index_ledger_words

            index_ledger_words(
                conn, episodes=episodes_moved, rules=playbook_moved, moved=stats.moved, task_df=stats.task_df
            )
    return stats


def _index_playbook(conn: sqlite3.Connection, repo: MemoryRepo, stats: RefreshStats) -> None:
    """The playbook's rows again. Its parser and the postings' writers (and the ledger
    words' above) are imported only when something changed: a recall or a hook on a
    current index never pays for them (docs/architecture.md, "Start-up")."""
    from scarwarden.index.rules import index_playbook

    index_playbook(conn, repo, stats)


def _changed_since(
    conn: sqlite3.Connection, repo: MemoryRepo, diff: list[git.Change] | None
) -> tuple[set[str], set[str]]:
    """Episode files changed since the indexed commit (``diff``: :func:`_committed_changes`),
    and those of them that HEAD's tree (or git's index) now holds."""
    changed: set[str] = set()
    committed: set[str] = set()
    if diff is not None:
        for change in diff:
            changed.add(change.path)
            if change.status != "D":
                committed.add(change.path)
        return changed, committed
    # The indexed commit is gone (rebase + gc, reset) or there was none:
    # compare blob IDs with git's index instead of re-parsing everything.
    stored = {path: blob_hex(blob) for path, blob in conn.execute("SELECT path, blob FROM files")}
    staged = {e.path: e.blob for e in git.ls_files_stage(repo.root, repo.episodes_rel)}
    changed |= {p for p, blob in staged.items() if stored.get(p) != blob}
    # Indexed files git no longer tracks were removed or are untracked: re-read.
    changed |= set(stored) - set(staged)
    committed |= set(staged)
    return changed, committed


def _committed_changes(repo: MemoryRepo, old_head: str | None, head: str | None) -> list[git.Change] | None:
    """Episode files changed between the indexed commit and HEAD; ``None`` when there
    is no indexed commit or it is gone (rewritten away by a rebase or reset + gc)."""
    if not old_head or not head:
        return None
    try:  # one git process; a separate existence check would cost another
        return git.diff_name_status(repo.root, old_head, head, repo.episodes_rel)
    except GitError:
        return None


def _loose_changes(
    conn: sqlite3.Connection, repo: MemoryRepo, meta: dict[str, str], committed: set[str], now_ns: int
) -> tuple[dict[str, str], set[str]]:
    """Uncommitted episode files indexed earlier, and those of them edited since.

    Editing a file in place moves neither HEAD nor its folder's mtime; the few files
    not yet committed (hand-written, staged, invalid ones waiting for a fix) are
    therefore stat'ed on every refresh. Right after a rebuild only the invalid files
    are known to be loose.
    """
    if "loose" in meta:
        loose: dict[str, str] = json.loads(meta["loose"])
    else:
        loose = {r[0]: "" for r in conn.execute("SELECT path FROM files WHERE episode_row IS NULL")}
    for path in committed:
        loose.pop(path, None)
    changed: set[str] = set()
    for path, sig in loose.items():
        if sig != "racy" and file_sig(repo.root / path, now_ns) == sig:
            continue
        # The signature cannot tell: compare content, so an untouched file is not
        # re-parsed (nor re-reported when invalid).
        if _differs(conn, repo, path):
            changed.add(path)
    return loose, changed


def _edited_in_place(
    conn: sqlite3.Connection,
    repo: MemoryRepo,
    head: str | None,
    moved: set[str],
    loose: dict[str, str],
    renamed: set[str],
) -> tuple[set[str], set[str]]:
    """Committed episode files of the folders whose mtime moved that differ from git's
    index (edited in place: ``sed -i`` and most editors save by rename, which moves the
    folder's mtime), and the loose files there that no longer differ (issue 28: such an
    edit was seen only by ``index --rebuild``).

    The index holds the files as they are (what a rebuild reads too): a file there
    that the refresh does not re-read anyway, whose inode is not the one stored
    (``renamed``) and whose bytes are not those indexed, is read again whatever git's
    index holds (an edit staged with ``git add`` included). git is asked only about the
    loose files there (which are clean again): one ``git ls-files
    -m``, which compares content wherever only the file times moved. Usually there are
    none (a new episode moves its folder and nothing else there changed), and git is
    not started: it reads its whole index (0.2 s at 1M episodes) and stats each file of
    the folders it is given, ~11 times (1.2-4 s for one month's 28,000 files at 1M)."""
    here = {path for path in loose if path.rsplit("/", 1)[0] in moved}
    # A loose file whose bytes changed is read again already (_loose_changes compares
    # every one whose signature moved): git only tells which are committed text again.
    edited = _differ_from_indexed(conn, repo, renamed - set(here))
    if not here or head is None:  # no commit yet: nothing is committed text
        return edited, set()
    asked = sorted(here) if len(here) <= _ASK_AT_MOST else sorted(moved)
    try:
        modified = {p for p in git.ls_files_modified(repo.root, *asked) if p.endswith(".yaml")}
    except GitError:
        return edited, set()
    # Clean: as committed in HEAD, neither edited nor staged (a staged file is still loose).
    dirs = sorted(moved)
    in_head = git.run(repo.root, "ls-tree", "-r", "-z", "--name-only", "HEAD", "--", *dirs)
    staged = git.run(repo.root, "diff-index", "--cached", "--name-only", "-z", "HEAD", "--", *dirs)
    committed = set(in_head.decode("utf-8", "surrogateescape").split("\0"))
    committed -= set(staged.decode("utf-8", "surrogateescape").split("\0"))
    return edited, {path for path in here if path in committed and path not in modified}


def _differ_from_indexed(conn: sqlite3.Connection, repo: MemoryRepo, paths: set[str]) -> set[str]:
    """The files among ``paths`` whose bytes are not those indexed (one written again
    with what it held, by a checkout or a copy, is not asked about)."""
    return {path for path in paths if _differs(conn, repo, path)}


def _differs(conn: sqlite3.Connection, repo: MemoryRepo, path: str) -> bool:
    """Whether the file at ``path`` (gone, or unknown to the index) is not what was indexed."""
    row = conn.execute("SELECT blob FROM files WHERE path = ?", (path,)).fetchone()
    try:
        raw = read_regular(repo.root / path)
    except OSError:
        return True
    return row is None or blob_hex(row[0]) != blob_id(raw)


#: Above this many files to ask about, git is given their folders instead.
_ASK_AT_MOST = 500


def _reindex_file(conn: sqlite3.Connection, repo: MemoryRepo, path: str, stats: RefreshStats) -> int | None:
    """Drop what the index holds for ``path`` and index the file as it is now; the
    inode of the file read, or ``None`` when there is no file to index any more (gone,
    or a folder, FIFO or socket: a folder's listing leaves those out too)."""
    if (gone := _delete_file(conn, path, repo.episodes_rel, stats)) is not None:
        stats.episodes_removed += 1
        stats.moved.add(gone)
    try:
        raw, inode = read_with_inode(repo.root / path)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    except OSError as exc:
        if exc.errno != errno.ENXIO:
            raise
        return None
    _index_episode_bytes(conn, repo, path, raw, blob_id(raw), stats)
    return inode


def _delete_file(conn: sqlite3.Connection, path: str, episodes_rel: str, stats: RefreshStats) -> str | None:
    """Drop ``path`` from the index; the ID of the episode it held (``None``: none)."""
    row = conn.execute("SELECT episode_row FROM files WHERE path = ?", (path,)).fetchone()
    conn.execute("DELETE FROM files WHERE path = ?", (path,))
    if row is None or row[0] is None:
        return None
    found = conn.execute("SELECT id, at, z FROM episodes WHERE rowid = ?", (row[0],)).fetchone()
    if found is None or expected_relpath(found[0], found[1], episodes_rel) != path:
        return None
    from scarwarden.index import load as index_load  # episodes' parser: only for a change

    index_load.forget_one(conn, row[0], load_doc(found[2], found[0], found[1]), stats.task_df)
    return str(found[0])


def _index_episode_bytes(
    conn: sqlite3.Connection, repo: MemoryRepo, path: str, raw: bytes, blob: str, stats: RefreshStats
) -> None:
    """Index one file of a live index (refresh); a full rebuild uses index_load.BulkLoader."""
    from scarwarden.index import load as index_load

    problem, row = index_load.parse_for_index(path, raw, repo.episodes_rel)
    if row is None:
        log.warning("skipped invalid episode %s: %s", path, problem)
    else:
        clash = conn.execute("SELECT at FROM episodes WHERE id = ?", (row[0],)).fetchone()
        if clash is None:
            index_load.insert_one(conn, path, blob, row)
            stats.task_df.update(row[8])
            stats.episodes_added += 1
            stats.moved.add(row[0])
            return
        elsewhere = expected_relpath(row[0], clash[0], repo.episodes_rel)
        log.warning("skipped %s: episode ID %s is also in %s", path, row[0], elsewhere)
    stats.invalid_files.append(path)
    conn.execute("INSERT OR REPLACE INTO files VALUES (?, ?, NULL, NULL)", (path, blob_bytes(blob)))


def _update_episode_count(conn: sqlite3.Connection, meta: dict[str, str], stats: RefreshStats) -> None:
    """Keep ``meta.episode_count`` in step (counting the table costs ~8 ms at 100k)."""
    if stats.episodes_added or stats.episodes_removed:
        set_meta(
            conn,
            "episode_count",
            str(
                int(meta["episode_count"]) + stats.episodes_added - stats.episodes_removed
                if "episode_count" in meta
                else conn.execute("SELECT count(*) FROM episodes").fetchone()[0]
            ),
        )
