"""A file the refresh reads again keeps its inode in the index's row, also when its
folder did not move (an edit in place). Before, such a row's inode was lost (NULL), so
the folder's kept sums no longer held: the next episode in that folder made the refresh
compare every row of it (28,000 at 1M episodes) and read the file once more."""

from __future__ import annotations

import json
import os
import time

from conftest import git
from helpers import write_episode
from test_refresh_folders import IN_MONTH, MONTH, assert_matches_rebuild, committed, refresh

from scarwarden.index import open_index
from scarwarden.index.scan import RACY_NS
from scarwarden.repo import MemoryRepo


def test_a_loose_file_edited_in_place_keeps_its_inode(demo_repo: MemoryRepo) -> None:
    rel = write_episode(demo_repo, "ep-handmade01", at=IN_MONTH, task="Hand-written")
    path = demo_repo.root / rel
    for old in (path, path.parent):  # older than a clock tick: the refresh trusts the mtimes
        os.utime(old, ns=(old.stat().st_atime_ns, time.time_ns() - 10 * RACY_NS))
    refresh(demo_repo)
    inode, folder_mtime = path.stat().st_ino, path.parent.stat().st_mtime_ns
    text = path.read_text().replace("Hand-written", "Written again")
    with path.open("r+") as file:  # in place: same inode, the folder's mtime unmoved
        file.write(text)
        file.truncate()
    assert (path.stat().st_ino, path.parent.stat().st_mtime_ns) == (inode, folder_mtime)
    stats = refresh(demo_repo)
    assert (stats.episodes_added, stats.episodes_removed) == (1, 1)
    with open_index(demo_repo) as index:
        row = index.conn.execute("SELECT inode FROM files WHERE path = ?", (rel,)).fetchone()
        episode = index.get_episode("ep-handmade01")
    assert row == (inode,) and episode is not None and episode.task == "Written again"
    committed(demo_repo, "Post the recap")  # the month's folder moves: its sums still hold
    assert refresh(demo_repo).folders_compared == []
    assert_matches_rebuild(demo_repo)


def test_a_committed_file_edited_in_place_keeps_its_inode(demo_repo: MemoryRepo) -> None:
    """The edit committed: the refresh learns of it from git's diff between the indexed
    commit and HEAD (the folder did not move) and reads the file again, keeping its inode."""
    rel = f"{MONTH}/ep-9ak5fm33w3.yaml"
    path = demo_repo.root / rel
    for old in (path, path.parent):  # older than a clock tick: the refresh trusts the mtimes
        os.utime(old, ns=(old.stat().st_atime_ns, time.time_ns() - 10 * RACY_NS))
    refresh(demo_repo)
    inode, folder_mtime = path.stat().st_ino, path.parent.stat().st_mtime_ns
    text = path.read_text().replace("task: ", "task: Edited, ", 1)
    with path.open("r+") as file:  # in place: same inode, the folder's mtime unmoved
        file.write(text)
        file.truncate()
    # Episodes are append-only for the gate: committed past the hooks, as a hand edit would be.
    git(demo_repo.root, "commit", "-qam", "edit in place", "--no-verify")
    assert (path.stat().st_ino, path.parent.stat().st_mtime_ns) == (inode, folder_mtime)
    stats = refresh(demo_repo)
    assert (stats.episodes_added, stats.episodes_removed, stats.folders_compared) == (1, 1, [])
    with open_index(demo_repo) as index:
        row = index.conn.execute("SELECT inode FROM files WHERE path = ?", (rel,)).fetchone()
        episode = index.get_episode("ep-9ak5fm33w3")
        loose = json.loads(index.meta("loose") or "{}")
    assert row == (inode,) and episode is not None and episode.task.startswith("Edited, ")
    assert rel not in loose  # committed: not stat'ed again by every refresh
    committed(demo_repo, "Post the recap")  # the month's folder moves: its sums still hold
    assert refresh(demo_repo).folders_compared == []
    assert_matches_rebuild(demo_repo)
