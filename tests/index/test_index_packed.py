"""Schema 18 packs what the index keeps (issue 30: within ~1.5x the ledger's files):
each episode's JSON deflated less its ID and time, the time in seconds, blob IDs as
bytes, a contentless full-text index without positions, postings by episode row. What
the index answers must not change: every episode reads back as its file says, a search
finds the same words, and an index of schema 17 is rebuilt on open."""

from __future__ import annotations

import json
import sqlite3

from conftest import git

from scarwarden.files.episodes import parse_episode_bytes
from scarwarden.files.record import add_episodes
from scarwarden.index import open_index
from scarwarden.index.schema import SCHEMA_VERSION
from scarwarden.repo import MemoryRepo


def test_every_episode_reads_back_as_its_file_says(demo_repo: MemoryRepo) -> None:
    [odd] = add_episodes(
        demo_repo,
        [
            {
                "task": 'Résumé the café\'s "naïve" brief: 東京 launch',
                "at": "0001-01-01T00:00:00Z",
                "outcome": "Fine",
                "tags": ["cafe-brief"],
            }
        ],
    )
    files = sorted(demo_repo.episodes_dir.rglob("*.yaml"))
    with open_index(demo_repo) as index:
        for path in files:
            rel = str(path.relative_to(demo_repo.root))
            data = parse_episode_bytes(path.read_bytes(), rel, episodes_dir=demo_repo.episodes_rel).data
            ep = index.get_episode(data["id"])
            assert ep is not None and ep.data == data and list(ep.data) == list(data)
            # SQL reads the same JSON (the doc column, through scarwarden_doc)
            doc, at = index.conn.execute(
                "SELECT doc, at FROM episodes WHERE id = ?", (data["id"],)
            ).fetchone()
            assert doc == json.dumps(data, ensure_ascii=False) and at == data["at"]
        assert [e.id for e in index.list_episodes(tags=["cafe-brief"])] == [odd.id]
        assert index.episode_path(odd.id) == f"{demo_repo.episodes_rel}/0001/01/{odd.id}.yaml"
        assert len(index.list_episodes()) == len(files)


def test_a_search_finds_words_with_apostrophes(demo_repo: MemoryRepo) -> None:
    """The full-text index keeps no positions (no phrase query): a word with an
    apostrophe is one token, curly or straight, and quotes around a word are not."""
    said = add_episodes(
        demo_repo,
        [
            {"task": "Answer the quux's refund", "outcome": "They shan't want it"},
            {"task": "Answer the reseller", "outcome": "Zed said \u2018nope\u2019 and oughtn\u2019t sign"},
            {"task": "Answer the partner", "outcome": "Fine", "correction": "Say 'perhapsy' first"},
        ],
    )
    found = {}
    with open_index(demo_repo) as index:
        for words in (
            "shan't",
            "quux's",
            "quux",
            "oughtn't",
            "oughtn\u2019t",
            "oughtn",
            "nope",
            "perhapsy",
            "zed sign",
        ):
            found[words] = [e.id for e in index.list_episodes(grep=words)]
    assert found["shan't"] == found["quux's"] == found["quux"] == [said[0].id]
    assert found["oughtn't"] == found["oughtn\u2019t"] == found["oughtn"] == found["zed sign"] == [said[1].id]
    assert found["nope"] == [said[1].id]  # quoted: the quotes are not part of the word
    assert found["perhapsy"] == [said[2].id]
    # removed, its words go with it (the index is told the text it was given)
    path = next(demo_repo.episodes_dir.rglob(f"{said[1].id}.yaml"))
    git(demo_repo.root, "rm", "-q", str(path))
    git(demo_repo.root, "commit", "-q", "--no-verify", "-m", "gone")
    with open_index(demo_repo) as index:
        assert index.list_episodes(grep="oughtn't") == []
        assert index.conn.execute("SELECT count(*) FROM task_postings").fetchone()[0] > 0
        assert not index.conn.execute(
            "SELECT 1 FROM task_postings WHERE episode_row NOT IN (SELECT rowid FROM episodes)"
        ).fetchall()


def test_an_index_of_schema_17_is_rebuilt_on_open(demo_repo: MemoryRepo) -> None:
    open_index(demo_repo).close()
    conn = sqlite3.connect(demo_repo.index_path)  # as session 4's code left it
    conn.executescript(
        "DROP TABLE episodes; CREATE TABLE episodes (rowid INTEGER PRIMARY KEY, id TEXT, doc TEXT);"
        "INSERT INTO episodes (id, doc) VALUES ('ep-hkgnqdz88f', '{}');"
        "UPDATE meta SET value = '17' WHERE key = 'schema_version';"
        "INSERT INTO recall_log (at, task, verdict) VALUES ('2026-01-01T00:00:00Z', 'kept', 'ACT');"
    )
    conn.commit()
    conn.close()
    with open_index(demo_repo) as index:
        assert (index.stats.mode, index.stats.reason) == ("rebuild", "old schema")
        assert index.meta("schema_version") == str(SCHEMA_VERSION) == "22"
        ep = index.get_episode("ep-hkgnqdz88f")
        assert ep is not None and ep.data["task"].startswith("Draft a LinkedIn post")
        assert index.conn.execute("SELECT task FROM recall_log").fetchall() == [("kept",)]
    assert sorted(p.name for p in demo_repo.state_dir.glob("index.db*")) == ["index.db"]  # no temp left
