"""The ledger's words in the index, for recall (docs/recall.md, "Words from the ledger").

Two sets of postings, both computed from the episode files alone (never from the
recall log, a model or anything a clone does not have), so every clone ranks alike:

* ``task_term_df``: in how many episodes' tasks each stem occurs (meta ``task_count`` =
  the episodes counted; ``ledger_tasks`` the task each was counted with, whose stems
  are uncounted when it moves; ``task_terms`` which tasks say each stem, read by
  ASK_HUMAN's candidates when no rule is near: the nearest failed episodes).
  Recall weighs a query stem down when most past tasks say it ("customer", "agent",
  the role-play boilerplate of a support ledger).
* ``rule_episode_terms`` / ``rule_episode_df``: under each active rule, the stems of
  the episodes it cites (their ``task`` and ``correction``, which holds a human's
  answer), by episode and field, and in how many rules' episodes each stem occurs.
  Recall finds a rule through the words of the episodes that taught it, below the
  rule's own words, and says through which episode.

Both are kept in step incrementally: ``ledger_tasks`` remembers the task text each
episode was counted with, ``rule_episode_state`` the rule digest its postings were
built from; only episodes whose task changed and rules whose digest changed (or that
cite a changed episode) are re-read.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterable
from typing import Any

from scarwarden import text
from scarwarden.index.schema import chunks, recount_df, set_meta

#: The episode fields whose words are indexed under the rules that cite the episode.
FIELDS = ("task", "correction")


def index_ledger_words(
    conn: sqlite3.Connection, *, episodes: bool, rules: bool, moved: set[str] | None = None
) -> None:
    """Bring both sets of postings in line with the ``episodes`` and ``rules`` tables.

    ``episodes``: episodes may have been added or removed (``moved``: the IDs of those
    that were, when the caller knows them: only they are compared, so a refresh costs
    what changed); ``rules``: the playbook may have changed. Called inside the
    refresh's (or the build's) transaction.
    """
    changed: set[str] = _sync_task_terms(conn, moved) if episodes else set()
    if changed or rules:
        _sync_rule_episode_terms(conn, changed)


_FRESH = (
    "SELECT e.id, e.task FROM episodes AS e LEFT JOIN ledger_tasks AS l "
    "ON l.episode_id = e.id WHERE l.task IS NOT e.task"
)
_GONE = (
    "SELECT l.episode_id FROM ledger_tasks AS l LEFT JOIN episodes AS e "
    "ON e.id = l.episode_id WHERE e.id IS NULL"
)


def _moved_tasks(conn: sqlite3.Connection, moved: set[str] | None) -> tuple[list[Any], list[str]]:
    """(ID, task) of the episodes whose task is not counted as it is, and the IDs
    counted that are no longer episodes: among ``moved``, or over both tables."""
    if moved is None:
        return conn.execute(_FRESH).fetchall(), [r[0] for r in conn.execute(_GONE)]
    fresh: list[Any] = []
    gone: list[str] = []
    for chunk in chunks(sorted(moved), 500):
        marks = ",".join("?" * len(chunk))
        fresh += conn.execute(f"{_FRESH} AND e.id IN ({marks})", chunk).fetchall()
        gone += [r[0] for r in conn.execute(f"{_GONE} AND l.episode_id IN ({marks})", chunk)]
    return fresh, gone


def _sync_task_terms(conn: sqlite3.Connection, moved: set[str] | None = None) -> set[str]:
    """Count the tasks of new or changed episodes, uncount removed ones; return the IDs
    of every episode that moved."""
    first = conn.execute("SELECT 1 FROM ledger_tasks LIMIT 1").fetchone() is None
    fresh, gone = _moved_tasks(conn, None if first else moved)
    changed = {r[0] for r in fresh} | set(gone)
    if not changed:
        return changed
    delta: Counter[str] = Counter()  # how each stem's document frequency moves
    uncounted = 0
    if not first:  # a task's stems are taken from the text it was counted with
        for chunk in chunks(sorted(changed), 500):
            marks = ",".join("?" * len(chunk))
            counted = conn.execute(
                f"SELECT episode_id, task FROM ledger_tasks WHERE episode_id IN ({marks})", chunk
            ).fetchall()
            said_before: list[tuple[str, str]] = []  # its task_terms postings, by key
            for episode_id, task in counted:
                stems = set(text.stems(task or ""))
                delta.subtract(stems)
                said_before += [(stem, episode_id) for stem in stems]
            conn.executemany("DELETE FROM task_terms WHERE term = ? AND episode_id = ?", said_before)
            uncounted += conn.execute(
                f"DELETE FROM ledger_tasks WHERE episode_id IN ({marks})", chunk
            ).rowcount
    postings: list[tuple[str, str]] = []
    for episode_id, task in fresh:
        said = set(text.stems(task or ""))
        delta.update(said)
        postings += [(stem, episode_id) for stem in sorted(said)]
    if first:
        conn.execute("DELETE FROM task_term_df")
        conn.execute("DELETE FROM task_terms")
    conn.executemany("INSERT INTO ledger_tasks VALUES (?, ?)", fresh)
    conn.executemany("INSERT OR IGNORE INTO task_terms VALUES (?, ?)", postings)
    _move_df(conn, "task_term_df", delta)
    before = conn.execute("SELECT value FROM meta WHERE key = 'task_count'").fetchone()
    if first or before is None:
        count = conn.execute("SELECT count(*) FROM ledger_tasks").fetchone()[0]
    else:  # counting the table would cost what the ledger holds (~80 ms at 1M)
        count = int(before[0]) - uncounted + len(fresh)
    set_meta(conn, "task_count", str(count))
    # Words two tasks or more say (the only ones a ledger weight below 1 can touch):
    # when there are none, recall skips looking the rules' stems up in task_term_df.
    shared = conn.execute("SELECT count(*) FROM task_term_df WHERE df > 1").fetchone()[0]
    set_meta(conn, "task_terms_shared", str(shared))
    return changed


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
    if not first:
        ids = sorted(set(stale) | set(gone))
        touched |= _delete_where(conn, "rule_episode_terms", "rule_id", ids)
        for chunk in chunks(ids, 500):
            marks = ",".join("?" * len(chunk))
            conn.execute(f"DELETE FROM rule_episode_state WHERE rule_id IN ({marks})", chunk)
    rows = list(_episode_rows(conn, sorted(stale)))
    touched |= {row[0] for row in rows}
    conn.executemany("INSERT INTO rule_episode_terms VALUES (?, ?, ?, ?, ?)", rows)
    conn.executemany("INSERT INTO rule_episode_state VALUES (?, ?)", sorted(stale.items()))
    recount_df(
        conn,
        "rule_episode_df",
        "SELECT term, count(DISTINCT rule_id) FROM rule_episode_terms",
        touched,
        everything=first,
    )


def _episode_rows(conn: sqlite3.Connection, rule_ids: list[str]) -> Iterable[tuple[Any, ...]]:
    """(term, rule, episode, field, tf) for each stem of each cited episode's fields."""
    words: dict[str, dict[str, Counter[str]]] = {}  # episode -> field -> stems
    for chunk in chunks(rule_ids, 500):
        marks = ",".join("?" * len(chunk))
        cited = conn.execute(
            f"SELECT c.rule_id, e.id, e.task, json_extract(e.doc, '$.correction') FROM citations AS c "
            f"JOIN episodes AS e ON e.id = c.episode_id WHERE c.rule_id IN ({marks})",
            chunk,
        ).fetchall()
        for rule_id, episode_id, task, correction in cited:
            if episode_id not in words:
                words[episode_id] = {
                    field: Counter(text.stems(value))
                    for field, value in zip(FIELDS, (task, correction), strict=True)
                    if isinstance(value, str)
                }
            for field, counts in words[episode_id].items():
                for term, tf in counts.items():
                    yield (term, rule_id, episode_id, field, tf)


def _delete_where(conn: sqlite3.Connection, table: str, column: str, keys: list[str]) -> set[str]:
    """Delete ``table``'s rows whose ``column`` is in ``keys``; return their terms."""
    terms: set[str] = set()
    for chunk in chunks(keys, 500):
        marks = ",".join("?" * len(chunk))
        terms |= {r[0] for r in conn.execute(f"SELECT term FROM {table} WHERE {column} IN ({marks})", chunk)}
        conn.execute(f"DELETE FROM {table} WHERE {column} IN ({marks})", chunk)
    return terms
