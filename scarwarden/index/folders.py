"""Episode folders whose mtime moved: the files added to or removed from them there, and
those saved there by rename (a new inode).

Such a folder is listed again (names and inode numbers, no stat): a file nobody told
git about, a hand-written episode, is found only there. Its files were then compared
with the index's rows for the folder, ~1 µs a row, and a new episode moves the mtime of
its month's folder, which holds 28,000 files at 1M episodes (issue 30: ~25 ms of SQL
for one episode). So each folder's listing is also kept summed (``folder_sums``,
:func:`~scarwarden.index.scan.listing_sums`). When the listing, less the files the
refresh reads again anyway (``known``: the committed diff, the loose files that
changed), sums to what was kept less the same files, and the index's rows for the
folder still count and sum their inodes to what was kept, nothing else changed there:
no row is read. Otherwise the rows are compared as before, and the sums kept again.
"""

from __future__ import annotations

import sqlite3

from scarwarden.index.scan import (
    SUMS_MODULUS,
    Sums,
    list_names,
    listing_sums,
    scan_dirs,
    sums_minus,
    trusted_mtime,
)
from scarwarden.index.schema import FOLDER_SUMS, RefreshStats, chunks
from scarwarden.records import record
from scarwarden.repo import MemoryRepo


@record
class Listed:
    """The episode folders (-> mtime), those the index has (-> mtime stored), and the
    listing of each folder whose mtime moved, with its sums."""

    dirs: dict[str, int]
    stored: dict[str, int]
    listings: dict[str, tuple[dict[str, int], Sums]]


def list_moved(conn: sqlite3.Connection, repo: MemoryRepo) -> Listed:
    """List the episode folders whose mtime moved (what :func:`changed_folders` needs of
    the disk, apart from the changes git reports: the two can run side by side)."""
    dirs = scan_dirs(repo)
    stored = dict(conn.execute("SELECT path, mtime_ns FROM dirs").fetchall())
    listings = {}
    for dir_rel, mtime in dirs.items():
        if stored.get(dir_rel) != mtime:
            listed = list_names(repo, dir_rel)
            listings[dir_rel] = (listed, listing_sums(listed))
    return Listed(dirs, stored, listings)


def changed_folders(
    conn: sqlite3.Connection,
    repo: MemoryRepo,
    listed_now: Listed,
    now_ns: int,
    known: set[str],
    moved: set[str],
    inodes: dict[str, int],
    stats: RefreshStats,
) -> set[str]:
    """Files added to or removed from episode folders whose mtime moved (or that
    appeared or went away), beyond the ``known`` changed paths; the folders' new
    mtimes and sums are stored, those that moved added to ``moved``, and their files
    whose inode is not the one stored (or that the refresh reads again) to ``inodes``;
    the folders compared row by row to ``stats.folders_compared``."""
    changed: set[str] = set()
    dirs, stored_dirs = listed_now.dirs, listed_now.stored
    if dirs != stored_dirs:
        conn.execute(FOLDER_SUMS)  # an index built before the table (schema 18) gets it here
    known_by_folder = _by_folder(known)
    for dir_rel, (listed, sums) in listed_now.listings.items():
        mtime = dirs[dir_rel]
        moved.add(dir_rel)
        here = known_by_folder.get(dir_rel, {})
        month = dir_rel.count("/") - repo.episodes_rel.count("/") == 2
        if not _only_known_changed(conn, dir_rel, month, listed, sums, here):
            stats.folders_compared.append(dir_rel)
            found = {f"{dir_rel}/{name}": inode for name, inode in listed.items()}
            indexed = files_in(conn, dir_rel)
            changed |= set(found) ^ set(indexed)
            inodes.update((path, inode) for path, inode in found.items() if indexed.get(path) != inode)
        # Files read again get their row anew: they keep the inode the folder lists.
        inodes.update((path, listed[name]) for name, path in here.items() if name in listed)
        conn.execute("INSERT OR REPLACE INTO dirs VALUES (?, ?)", (dir_rel, trusted_mtime(mtime, now_ns)))
        keep_sums(conn, dir_rel, sums)
    for dir_rel in set(stored_dirs) - set(dirs):
        changed |= set(files_in(conn, dir_rel))
        conn.execute("DELETE FROM dirs WHERE path = ?", (dir_rel,))
        conn.execute("DELETE FROM folder_sums WHERE path = ?", (dir_rel,))
    return changed


def keep_sums(conn: sqlite3.Connection, dir_rel: str, sums: Sums) -> None:
    """Store the sums of the folder's listing (what the index's rows for it now hold)."""
    conn.execute("INSERT OR REPLACE INTO folder_sums VALUES (?, ?, ?, ?, ?)", (dir_rel, *sums))


def files_in(conn: sqlite3.Connection, dir_rel: str) -> dict[str, int | None]:
    """The indexed files directly in folder ``dir_rel``, with their inodes: a range of
    the path key (``dir/`` up to ``dir0``, '0' following '/'), the subfolders' files
    left out. A month folder's range holds its own files only; a year's or the episodes
    folder's (read when a month or a year folder appears) holds those below it too."""
    rows = conn.execute(
        "SELECT path, inode FROM files WHERE path > ? AND path < ? AND instr(substr(path, ?), '/') = 0",
        (dir_rel + "/", dir_rel + "0", len(dir_rel) + 2),
    )
    return dict(rows.fetchall())


def _by_folder(paths: set[str]) -> dict[str, dict[str, str]]:
    """``paths`` by folder, then by file name."""
    out: dict[str, dict[str, str]] = {}
    for path in paths:
        folder, _, name = path.rpartition("/")
        out.setdefault(folder, {})[name] = path
    return out


def _only_known_changed(
    conn: sqlite3.Connection,
    dir_rel: str,
    month: bool,
    listed: dict[str, int],
    sums: Sums,
    here: dict[str, str],
) -> bool:
    """Whether the folder's listing is the one kept, but for the files in ``here``, and
    the index's rows for the folder are still those of the kept listing."""
    kept = conn.execute(
        "SELECT files, inodes, names, pairs FROM folder_sums WHERE path = ?", (dir_rel,)
    ).fetchone()
    if kept is None:
        return False
    # The rows, counted and summed by SQLite (~0.1 µs a row, none sent to Python): a
    # row written since without the sums (by a version before session 13, which wrote
    # a file read again while its folder did not move without its inode) fails this. A
    # month's range holds its own files only; a year's or the episodes folder's holds
    # those below it too, which are left out (as files_in does, ~0.4 µs a row).
    direct = "" if month else " AND instr(substr(path, ?), '/') = 0"
    try:
        rows, inode_sum = conn.execute(
            f"SELECT count(*), sum(inode) FROM files WHERE path > ? AND path < ?{direct}",
            (dir_rel + "/", dir_rel + "0", *([] if month else [len(dir_rel) + 2])),
        ).fetchone()
    except sqlite3.OperationalError:  # the sum passed 64 bits
        return False
    if (rows, (inode_sum or 0) % SUMS_MODULUS) != (kept[0], kept[1]):
        return False
    before: Sums = tuple(kept)
    indexed: dict[str, int | None] = {}
    for chunk in chunks(sorted(here.values()), 500):
        marks = ",".join("?" * len(chunk))
        rows_now = conn.execute(f"SELECT path, inode FROM files WHERE path IN ({marks})", chunk)
        indexed.update((path.rpartition("/")[2], inode) for path, inode in rows_now.fetchall())
    known_inodes = {name: inode for name, inode in indexed.items() if inode is not None}
    if len(known_inodes) < len(indexed):
        return False
    before = sums_minus(before, listing_sums(known_inodes))
    now = sums_minus(sums, listing_sums({name: listed[name] for name in here if name in listed}))
    return now == before
