"""The ledger's words in the index, for recall (docs/recall.md, "Words from the ledger").

Two sets of postings, both computed from the episode files alone (never from the
recall log, a model or anything a clone does not have), so every clone ranks alike:

* ``task_term_df``: in how many episodes' tasks each stem occurs (meta ``task_count`` =
  the episodes counted); ``task_postings`` which tasks say each stem (by episode row;
  the view ``task_terms`` by ID), read by ASK_HUMAN's candidates when no rule is near:
  the nearest failed episodes. The postings are written and deleted with the episode
  (index/load.py, index/refresh.py), which says how the counts move.
  Recall weighs a query stem down when most past tasks say it ("customer", "agent",
  the role-play boilerplate of a support ledger).
* ``rule_episode_terms`` / ``rule_episode_df``: under each active rule, the stems of
  the episodes it cites (their ``task`` and ``correction``, which holds a human's
  answer), by episode and field, and in how many rules' episodes each stem occurs.
  Recall finds a rule through the words of the episodes that taught it, below the
  rule's own words, and says through which episode.

Both are kept in step incrementally: a task's stems are uncounted from the episode's
row as it is removed, ``rule_episode_state`` keeps the rule digest its postings were
built from; only the episodes that moved and the rules whose digest changed (or that
cite a moved episode) are re-read.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterable
from typing import Any

from scarwarden import text
from scarwarden.index.packed import load_doc
from scarwarden.index.packed_postings import sync_episodes
from scarwarden.index.schema import chunks, new_stamp, recount_df, set_meta

#: The episode fields whose words are indexed under the rules that cite the episode.
FIELDS = ("task", "correction")


def index_ledger_words(
    conn: sqlite3.Connection,
    *,
    episodes: bool,
    rules: bool,
    moved: set[str] | None = None,
    task_df: Counter[str] | None = None,
) -> None:
    """Bring both sets of postings in line with the ``episodes`` and ``rules`` tables.

    ``episodes``: episodes may have been added or removed: ``moved``, the IDs of those
    that were, and ``task_df``, how their tasks move each stem's count (a refresh:
    :class:`scarwarden.index.schema.RefreshStats`), or ``None``: count everything (a
    build). ``rules``: the playbook may have changed. Called inside the refresh's (or
    the build's) transaction, after ``task_postings`` and ``meta.episode_count`` were
    brought in line (index/load.py, index/refresh.py).
    """
    if episodes:
        _count_tasks(conn, task_df)
    changed = (moved or set()) if episodes else set()
    if changed or rules:
        _sync_rule_episode_terms(conn, changed)


def _count_tasks(conn: sqlite3.Connection, task_df: Counter[str] | None) -> None:
    """Move ``task_term_df`` by ``task_df``, or count it from ``task_postings``; the
    task count is the episode count (every episode has a task)."""
    if task_df is None:
        recount_df(conn, "task_term_df", "SELECT term, count(*) FROM task_postings", set(), everything=True)
    else:
        _move_df(conn, "task_term_df", task_df)
    # What recall keeps of task_term_df between recalls is keyed by it (recall/term_counts.py).
    new_stamp(conn, "task_df_stamp")
    count = conn.execute("SELECT value FROM meta WHERE key = 'episode_count'").fetchone()
    set_meta(conn, "task_count", count[0] if count else "0")
    # Words two tasks or more say (the only ones a ledger weight below 1 can touch):
    # when there are none, recall skips looking the rules' stems up in task_term_df.
    shared = conn.execute("SELECT count(*) FROM task_term_df WHERE df > 1").fetchone()[0]
    set_meta(conn, "task_terms_shared", str(shared))


def _move_df(conn: sqlite3.Connection, table: str, delta: Counter[str]) -> None:
    """Add ``delta`` to ``table``'s document frequencies; drop the terms at zero."""
    moves = [(term, d) for term, d in sorted(delta.items()) if d]
    conn.executemany(
        f"INSERT INTO {table} (term, df) VALUES (?, ?) "
        "ON CONFLICT (term) DO UPDATE SET df = df + excluded.df",
        moves,
    )
    for chunk in chunks([term for term, _d in moves], 500):
        marks = ",".join("?" * len(chunk))
        conn.execute(f"DELETE FROM {table} WHERE df <= 0 AND term IN ({marks})", chunk)


def _sync_rule_episode_terms(conn: sqlite3.Connection, changed_episodes: set[str]) -> None:
    """Rebuild the episode postings of rules whose digest moved or that cite a moved
    episode; drop those of rules no longer active."""
    stale = {
        r[0]: r[1]
        for r in conn.execute(
            "SELECT r.id, r.digest FROM rules AS r LEFT JOIN rule_episode_state AS s "
            "ON s.rule_id = r.id WHERE r.retired = 0 AND s.digest IS NOT r.digest"
        )
    }
    for chunk in chunks(sorted(changed_episodes), 500):
        marks = ",".join("?" * len(chunk))
        stale.update(
            conn.execute(
                f"SELECT r.id, r.digest FROM citations AS c JOIN rules AS r ON r.id = c.rule_id "
                f"WHERE r.retired = 0 AND c.episode_id IN ({marks})",
                chunk,
            ).fetchall()
        )
    gone = [
        r[0]
        for r in conn.execute(
            "SELECT rule_id FROM rule_episode_state WHERE rule_id NOT IN "
            "(SELECT id FROM rules WHERE retired = 0)"
        )
    ]
    first = conn.execute("SELECT 1 FROM rule_episode_state LIMIT 1").fetchone() is None
    if not stale and not gone:
        return
    touched: set[str] = set()
    dropped: set[str] = set()  # episodes whose rows go
    if not first:
        ids = sorted(set(stale) | set(gone))
        touched |= _delete_where(conn, "rule_episode_terms", "rule_id", ids, dropped)
        for chunk in chunks(ids, 500):
            marks = ",".join("?" * len(chunk))
            conn.execute(f"DELETE FROM rule_episode_state WHERE rule_id IN ({marks})", chunk)
    words: dict[str, dict[str, Counter[str]]] = {}  # episode -> field -> stems
    rows = list(_episode_rows(conn, sorted(stale), words))
    touched |= {row[0] for row in rows}
    conn.executemany("INSERT INTO rule_episode_terms VALUES (?, ?, ?, ?, ?)", rows)
    etf = {episode: sum(fields.values(), Counter()) for episode, fields in words.items()}
    sync_episodes(conn, etf, set(stale) | set(gone), dropped, touched)
    conn.executemany("INSERT INTO rule_episode_state VALUES (?, ?)", sorted(stale.items()))
    recount_df(
        conn,
        "rule_episode_df",
        _EPISODE_DF,
        touched,
        everything=first,
    )


#: Each stem's rules (df): in how many active rules' cited episodes it occurs.
_EPISODE_DF = "SELECT term, count(DISTINCT rule_id) FROM rule_episode_terms"


def _episode_rows(
    conn: sqlite3.Connection, rule_ids: list[str], words: dict[str, dict[str, Counter[str]]]
) -> Iterable[tuple[Any, ...]]:
    """(term, rule, episode, field, tf) for each stem of each cited episode's fields;
    each episode's stems by field go into ``words``."""
    for chunk in chunks(rule_ids, 500):
        marks = ",".join("?" * len(chunk))
        cited = conn.execute(
            f"SELECT c.rule_id, e.id, e.at, e.z FROM citations AS c "
            f"JOIN episodes AS e ON e.id = c.episode_id WHERE c.rule_id IN ({marks})",
            chunk,
        ).fetchall()
        for rule_id, episode_id, at, packed in cited:
            if episode_id not in words:
                doc = load_doc(packed, episode_id, at)
                words[episode_id] = {
                    field: Counter(text.stems(doc[field]))
                    for field in FIELDS
                    if isinstance(doc.get(field), str)
                }
            for field, counts in words[episode_id].items():
                for term, tf in counts.items():
                    yield (term, rule_id, episode_id, field, tf)


def _delete_where(
    conn: sqlite3.Connection, table: str, column: str, keys: list[str], episodes: set[str]
) -> set[str]:
    """Delete ``table``'s rows whose ``column`` is in ``keys``; return their terms, and
    add their episodes to ``episodes``."""
    terms: set[str] = set()
    for chunk in chunks(keys, 500):
        marks = ",".join("?" * len(chunk))
        for term, episode in conn.execute(
            f"SELECT term, episode_id FROM {table} WHERE {column} IN ({marks})", chunk
        ):
            terms.add(term)
            episodes.add(episode)
        conn.execute(f"DELETE FROM {table} WHERE {column} IN ({marks})", chunk)
    return terms
