"""The index at scale (issue 30): a rule's applications are read by rule, and a refresh
after an episode moves the ledger's words by what changed, to what a rebuild gives."""

from __future__ import annotations

import sqlite3
from typing import Any

from conftest import git
from index_tables import TAGS, fts_vocabulary

from scarwarden import text
from scarwarden.files.record import add_episodes
from scarwarden.index import open_index
from scarwarden.index.lineage import applications
from scarwarden.index.packed import deflate
from scarwarden.repo import MemoryRepo

#: The tables a refresh keeps in step, by episode ID where a table keys episodes by row
#: (schema 18: a rebuild numbers the rows afresh).
TABLES = {
    "task_term_df": "SELECT * FROM task_term_df",
    "episode_rules": "SELECT * FROM episode_rules",
    "task_terms": "SELECT * FROM task_terms",
    "episode_tags": TAGS,
    "files": "SELECT f.path, f.blob, e.id, f.inode FROM files AS f "
    "LEFT JOIN episodes AS e ON e.rowid = f.episode_row",
    "tasks": "SELECT id, task FROM episodes",
    "rule_episode_df": "SELECT * FROM rule_episode_df",
}


def snapshot(repo: MemoryRepo) -> dict[str, Any]:
    with open_index(repo) as index:
        conn: sqlite3.Connection = index.conn
        out: dict[str, Any] = {t: sorted(conn.execute(sql).fetchall()) for t, sql in TABLES.items()}
        out["fts"] = fts_vocabulary(conn)
        # (not the stamp: drawn afresh whenever task_term_df moves, by a refresh or a build)
        sql = "SELECT key, value FROM meta WHERE key LIKE 'task_%' AND key NOT LIKE '%_stamp'"
        meta = dict(conn.execute(sql).fetchall())
        return {**out, "meta": meta}


def test_applications_come_from_the_rule_table(demo_repo: MemoryRepo) -> None:
    [twice, once] = add_episodes(
        demo_repo,
        [
            {"task": "Post the launch", "outcome": "Fine", "rules_applied": ["PB-02", "PB-01"]},
            {"task": "Post the recap", "outcome": "Fine", "rules_applied": ["PB-02"]},
        ],
    )
    with open_index(demo_repo) as index:
        rows = index.conn.execute(
            "SELECT rule_id, seq FROM episode_rules WHERE episode_id = ? ORDER BY rule_id", (twice.id,)
        ).fetchall()
        assert rows == [("PB-01", 1), ("PB-02", 0)]
        mine = applications(index, ["PB-01", "PB-02"])
    assert [a.id for a in mine["PB-01"] if a.id in (twice.id, once.id)] == [twice.id]
    assert sorted(a.id for a in mine["PB-02"] if a.id in (twice.id, once.id)) == sorted([twice.id, once.id])
    # The table is what the episodes say: removing one takes its applications away.
    git(
        demo_repo.root,
        "rm",
        "-q",
        f"{demo_repo.episodes_rel}/{twice.at[0:4]}/{twice.at[5:7]}/{twice.id}.yaml",
    )
    git(demo_repo.root, "commit", "-q", "--no-verify", "-m", "gone")
    with open_index(demo_repo) as index:
        mine = applications(index, ["PB-01", "PB-02"])
        assert (
            index.conn.execute("SELECT 1 FROM episode_rules WHERE episode_id = ?", (twice.id,)).fetchone()
            is None
        )
    assert twice.id not in [a.id for a in mine.get("PB-01", [])]
    assert [a.id for a in mine["PB-02"] if a.id in (twice.id, once.id)] == [once.id]


def test_applications_are_read_without_the_episodes(demo_repo: MemoryRepo) -> None:
    """A rule's lineage reads its own rows (schema 14): each application as counted
    when the episode was indexed, never the episode's JSON (cold recall parsed every
    application's episode: ~2,500 at 100k episodes, ten times that at 1M)."""
    [fixed, fine] = add_episodes(
        demo_repo,
        [
            {
                "task": "Post the launch",
                "outcome": "Meh",
                "correction": "Shorter",
                "rules_applied": ["PB-02"],
            },
            {"task": "Post the recap", "outcome": "Fine", "rules_applied": ["PB-02"]},
        ],
    )
    with open_index(demo_repo) as index:
        before = applications(index, ["PB-02"])["PB-02"]
        # no episode left to read: each keeps its ID and time, nothing else
        index.conn.execute("UPDATE episodes SET z = ?", (deflate({}),))
        after = applications(index, ["PB-02"])["PB-02"]
    assert after == before
    mine = {a.id: (a.corrected, a.went_well, a.status) for a in after}
    assert mine[fixed.id] == (True, False, "claimed")
    assert mine[fine.id] == (False, True, "claimed")
    assert [a.at for a in after] == sorted(a.at for a in after)  # oldest first


def test_a_refresh_counts_what_changed_as_a_rebuild_does(demo_repo: MemoryRepo) -> None:
    snapshot(demo_repo)  # the index exists before the episodes arrive
    added = add_episodes(
        demo_repo,
        [
            {"task": "Write the webinar invite", "outcome": "Fine", "rules_applied": ["PB-01"]},
            {
                "task": "Write the webinar recap",
                "outcome": "Fine",
                "tags": ["webinar", "recap"],
                "rules_applied": ["PB-02", "PB-01", "PB-02"],
            },
            {"task": "Translate the webinar invite", "outcome": "Fine"},
        ],
    )
    gone = added[1]
    git(demo_repo.root, "rm", "-q", f"{demo_repo.episodes_rel}/{gone.at[0:4]}/{gone.at[5:7]}/{gone.id}.yaml")
    git(demo_repo.root, "commit", "-q", "--no-verify", "-m", "one less")
    refreshed = snapshot(demo_repo)
    assert refreshed["meta"]["task_count"] == str(len(refreshed["tasks"]))
    df = dict(refreshed["task_term_df"])
    tasks = [task for _ep, task in refreshed["tasks"]]
    assert df["webinar"] == sum(1 for task in tasks if "webinar" in text.stems(task)) >= 2
    assert "translat" in df and "recap" not in df
    # a removed episode leaves no tag, application nor task posting behind
    assert gone.id not in {row[1] for row in refreshed["episode_tags"] + refreshed["task_terms"]}
    assert gone.id not in {row[2] for row in refreshed["episode_rules"]}
    with open_index(demo_repo) as index:  # the full-text index keeps no copy of the text
        assert (
            index.conn.execute(
                "SELECT name FROM sqlite_master WHERE name = 'episodes_fts_content'"
            ).fetchone()
            is None
        )
        assert "recap" not in {word for word, _n in refreshed["fts"]}  # forgotten with its episode
        index.conn.execute("INSERT INTO episodes_fts (episodes_fts, rank) VALUES ('integrity-check', 1)")
        found = (
            "SELECT e.id FROM episodes_fts JOIN episodes e ON e.rowid = episodes_fts.rowid "
            "WHERE episodes_fts MATCH ?"
        )
        assert index.conn.execute(found, ("recap",)).fetchall() == []
        assert added[2].id in [r[0] for r in index.conn.execute(found, ("translate",))]
    with open_index(demo_repo, rebuild_now=True):
        pass
    assert snapshot(demo_repo) == refreshed
