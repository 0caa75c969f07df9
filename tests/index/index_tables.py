"""Reading the index's tables in tests the way a rebuild and a refresh can be compared:
by episode ID (schema 18 keys the episode tables by row, which a rebuild numbers
afresh) and the full-text index by its words (it is contentless: no row to list)."""

from __future__ import annotations

import sqlite3

#: Tags by episode ID.
TAGS = "SELECT t.tag, e.id FROM episode_tags AS t JOIN episodes AS e ON e.rowid = t.episode_row"


def fts_vocabulary(conn: sqlite3.Connection) -> list[tuple[object, ...]]:
    """Each word of the full-text index and how many episodes say it."""
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.fts_words USING fts5vocab(main, episodes_fts, row)")
    return sorted(conn.execute("SELECT term, doc FROM temp.fts_words").fetchall())
