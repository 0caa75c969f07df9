"""Reading the index's tables in tests the way a rebuild and a refresh can be compared:
by episode ID (schema 18 keys the episode tables by row, which a rebuild numbers
afresh), the full-text index by its words (it is contentless: no row to list), and the
packed postings by rule and episode ID (a rebuild numbers their ordinals afresh too)."""

from __future__ import annotations

import sqlite3

from scarwarden.index.packed_postings import postings_of, unpack_ints

#: Tags by episode ID.
TAGS = "SELECT t.tag, e.id FROM episode_tags AS t JOIN episodes AS e ON e.rowid = t.episode_row"


def fts_vocabulary(conn: sqlite3.Connection) -> list[tuple[object, ...]]:
    """Each word of the full-text index and how many episodes say it."""
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.fts_words USING fts5vocab(main, episodes_fts, row)")
    return sorted(conn.execute("SELECT term, doc FROM temp.fts_words").fetchall())


def packed_tables(conn: sqlite3.Connection) -> dict[str, object]:
    """The packed entries and joins by rule and episode ID, not ordinal (a rebuild
    numbers them afresh): what a refresh and a rebuild must agree on (tests)."""
    rules = dict(conn.execute("SELECT ord, rule_id FROM rule_ords"))
    episodes = dict(conn.execute("SELECT ord, episode_id FROM episode_ords"))
    names = {"t": rules, "g": rules, "e": episodes}
    entries = {
        f"{kind}:{key}": sorted((names[kind][o], v) for o, v in postings_of(ords, runs).items())
        for kind, key, ords, runs in conn.execute("SELECT kind, key, ords, runs FROM packed")
    }
    joins = {
        "rule_episodes": sorted(
            (r, sorted(episodes[o] for o in unpack_ints(blob)))
            for r, blob in conn.execute("SELECT rule_id, episodes FROM rule_ords")
        ),
        "episode_rules": sorted(
            (e, sorted(rules[o] for o in unpack_ints(blob)))
            for e, blob in conn.execute("SELECT episode_id, rules FROM episode_ords")
        ),
        "tag_stems": sorted(conn.execute("SELECT stem, tag, parts FROM tag_stems")),
    }
    return {"entries": entries, **joins}
