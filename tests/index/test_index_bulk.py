"""The fast paths: bulk rebuild (in-process and with forked parsers), streamed blob reads,
the stored episode count, and the cheap commit of ``episode add``.

Each fast path is checked against the plain way of getting the same answer, on real
git repositories, so a shortcut that changes what is indexed or committed fails here.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest
from conftest import git
from index_tables import fts_vocabulary

from scarwarden import git as sgit
from scarwarden import index as idx
from scarwarden.files.episodes import Episode, render_episode
from scarwarden.files.record import add_episodes
from scarwarden.git import index_commit
from scarwarden.index import load as index_load
from scarwarden.index import open_index
from scarwarden.index.schema import connect
from scarwarden.repo import MemoryRepo

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from _gen import episode_data  # noqa: E402


def dump(repo: MemoryRepo) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every episode table (what a rebuild must reproduce exactly)."""
    conn = connect(repo.index_path)  # registers scarwarden_doc: SELECT * reads doc
    try:
        out = {
            table: sorted(conn.execute(f"SELECT * FROM {table}").fetchall(), key=repr)
            for table in ("episodes", "episode_tags", "task_postings", "files", "citations", "rules")
        }
        # Contentless since schema 18: its words and how many episodes say each.
        out["fts"] = fts_vocabulary(conn)
        out["grep"] = sorted(
            conn.execute("SELECT rowid FROM episodes_fts WHERE episodes_fts MATCH 'timezon*'").fetchall()
        )
        out["meta"] = sorted(
            conn.execute("SELECT key, value FROM meta WHERE key IN ('episode_count', 'head')").fetchall()
        )
        out["indexes"] = sorted(
            conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_autoindex%'"
            ).fetchall()
        )
    finally:
        conn.close()
    return out


@pytest.fixture
def big_repo(demo_repo: MemoryRepo) -> MemoryRepo:
    """The demo memory plus 240 generated episodes (committed), an untracked one, an
    invalid one and a duplicate ID."""
    root = demo_repo.root
    for data in episode_data(240, seed=7):
        ep = Episode(data)
        target = root / ep.relpath(demo_repo.episodes_rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(render_episode(data))
    git(root, "add", "memory")
    git(root, "commit", "-q", "-m", "generated")
    extra = {
        "id": "ep-untracked01",
        "at": "2026-11-02T10:00:00Z",
        "task": "Loose one",
        "outcome": "not yet committed",
        "tags": ["loose"],
    }
    (root / Episode(extra).relpath()).write_text(render_episode(extra))
    (root / "memory/episodes/2026/11/ep-broken0001.yaml").write_text("id: [unclosed\n")
    dup = {"id": "ep-9ak5fm33w3", "at": "2026-10-09T00:00:00Z", "task": "Same ID", "outcome": "o"}
    (root / Episode(dup).relpath()).write_text(render_episode(dup))
    return demo_repo


def test_parallel_rebuild_equals_in_process_rebuild(
    big_repo: MemoryRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index_load, "CHUNK", 37)  # many chunks and flushes, odd sizes
    single = idx.rebuild(big_repo, workers=1)
    one = dump(big_repo)
    parallel = idx.rebuild(big_repo, workers=2)
    assert dump(big_repo) == one
    assert (single.episodes_added, single.invalid_files) == (parallel.episodes_added, parallel.invalid_files)
    assert single.episodes_added == 34 + 240 + 1  # the demo (34 with its visual episodes)
    # the broken file and the second copy of a known ID are skipped, never indexed
    assert sorted(single.invalid_files) == [
        "memory/episodes/2026/10/ep-9ak5fm33w3.yaml",
        "memory/episodes/2026/11/ep-broken0001.yaml",
    ]
    assert dict(one["meta"])["episode_count"] == str(len(one["episodes"])) == "275"
    assert ("episodes_at",) in one["indexes"] and ("episodes_agent",) in one["indexes"]
    assert one["grep"]  # full-text search works on the bulk-loaded table
    with open_index(big_repo) as index:
        assert index.episode_path("ep-9ak5fm33w3") == "memory/episodes/2026/11/ep-9ak5fm33w3.yaml"
        assert index.get_episode("ep-untracked01") is not None


def test_default_workers() -> None:
    assert index_load.default_workers(10) == 1
    big = index_load.default_workers(index_load.PARALLEL_MIN)
    # A thread left by another test (a server fixture) rightly forces in-process parsing.
    forks = sys.platform.startswith("linux") and threading.active_count() == 1
    assert big == (min(2, __import__("os").cpu_count() or 1) if forks else 1)


def test_episode_count_follows_refreshes(big_repo: MemoryRepo) -> None:
    def counts() -> tuple[int, int]:
        with open_index(big_repo) as index:
            return index.episode_count(), index.conn.execute("SELECT count(*) FROM episodes").fetchone()[0]

    first = counts()
    assert first[0] == first[1] == 275  # 34 demo + 240 generated + 1 loose
    (ep,) = add_episodes(big_repo, [{"task": "Counted", "outcome": "o"}])
    assert counts() == (276, 276)
    git(big_repo.root, "rm", "-q", ep.relpath())
    (big_repo.root / "memory/episodes/2026/11/ep-broken0001.yaml").write_text(
        render_episode({"id": "ep-broken0001", "at": "2026-11-03T00:00:00Z", "task": "Fixed", "outcome": "o"})
    )
    assert counts() == (276, 276)  # one removed, the fixed one added


def test_cat_file_stream_matches_batch(demo_repo: MemoryRepo) -> None:
    entries = sgit.ls_files_stage(demo_repo.root, demo_repo.episodes_rel)
    names = [e.blob for e in entries] + ["0" * 40, f"HEAD:{entries[0].path}"]
    assert list(sgit.cat_file_stream(demo_repo.root, names)) == sgit.cat_file_batch(demo_repo.root, names)
    assert list(sgit.cat_file_stream(demo_repo.root, [])) == []
    with pytest.raises(sgit.GitError):
        list(sgit.cat_file_stream(demo_repo.root / "nowhere", ["HEAD"]))


def test_a_stream_abandoned_halfway_leaves_no_process(demo_repo: MemoryRepo) -> None:
    entries = sgit.ls_files_stage(demo_repo.root, demo_repo.episodes_rel)
    stream = sgit.cat_file_stream(demo_repo.root, [e.blob for e in entries])
    assert next(stream)
    stream.close()  # must not hang nor raise


def test_episode_add_with_nothing_staged_commits_only_its_file(memory_repo: MemoryRepo) -> None:
    root = memory_repo.root
    (root / "untracked.txt").write_text("not staged\n")
    (ep,) = add_episodes(memory_repo, [{"task": "Plain commit", "outcome": "o"}])
    assert git(root, "show", "--name-only", "--format=", "HEAD").stdout.split() == [ep.relpath()]
    assert git(root, "status", "--porcelain").stdout == "?? untracked.txt\n"


def test_something_staged_besides_our_file_stays_staged_and_out(memory_repo: MemoryRepo) -> None:
    # Our file and someone else's are both staged in git's index: the commit (made in a
    # temporary index from HEAD, issue 15) holds ours alone.
    root = memory_repo.root
    before = git(root, "rev-parse", "HEAD").stdout.strip()
    ours = "memory/episodes/2026/11/ep-racecommit.yaml"
    (root / ours).parent.mkdir(parents=True, exist_ok=True)
    (root / ours).write_text(
        render_episode({"id": "ep-racecommit", "at": "2026-11-03T00:00:00Z", "task": "Race", "outcome": "o"})
    )
    (root / "theirs.txt").write_text("staged concurrently\n")
    git(root, "add", ours, "theirs.txt")
    index_commit.land(root, index_commit.prepare_commit(root, "episode: race\n", [ours]))
    assert git(root, "rev-parse", "HEAD~1").stdout.strip() == before  # one commit only
    assert git(root, "show", "--name-only", "--format=", "HEAD").stdout.split() == [ours]
    assert git(root, "diff", "--cached", "--name-only").stdout == "theirs.txt\n"
