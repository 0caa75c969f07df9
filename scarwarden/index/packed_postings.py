"""Recall's postings packed one entry per stem, for its first pass (schema 20, issue 30).

``rule_terms`` keeps a row per (stem, rule) and ``rule_episode_terms`` one per (stem,
rule, cited episode, field): what recall's exact scoring and ``--explain`` read for a
few rules. Recall's first pass (:mod:`scarwarden.recall.prune`) sums a stem's postings
over every rule saying it, and a row crossing from SQLite into Python costs more than
the arithmetic. So the same postings are also kept here, in table ``packed``:

* ``('t', stem)``: the active rules saying the stem in their title or text, as rule
  ordinals (``rule_ords``) grouped into runs of equal ``(tf, length)``, so BM25's
  factor is worked out once a run;
* ``('g', tag)``: the active rules having the tag (one run); ``tag_stems`` says which
  tags a task's stems can hit;
* ``('e', stem)``: the *episodes* cited by active rules whose task and correction say
  the stem, as episode ordinals (``episode_ords``) in runs of equal ``etf`` (task and
  correction together). An episode's words are its own, the same under every rule
  citing it, so they are kept once per episode (at 100k rules, 190k postings where
  ``rule_episode_terms`` has 6.67M rows); ``episode_ords.rules`` and
  ``rule_ords.episodes`` join episodes and rules both ways.

An entry is two BLOBs: the ordinals (int32, little-endian) run after run, and each
run's ``(tf, length, count)`` (``(etf, 0, count)`` for an episode stem). Ordinals are
given on first sight and kept while the rule or episode stays (a rebuild numbers them
afresh), so a change rewrites the entries of the stems and tags it touched only.
``meta.packed_stamp`` changes whenever ordinals or the joins move: a process keeping
any of them (the citing rules of episodes) keys them on it.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from array import array
from collections import defaultdict
from collections.abc import Iterable, Mapping

from scarwarden import text
from scarwarden.index.schema import chunks, new_stamp

#: Ordinals and run fields as 4-byte integers, stored little-endian.
_INT = "i"
assert array(_INT).itemsize == 4  # noqa: S101 (every platform CPython runs on)
_SWAP = sys.byteorder == "big"

#: A run: (its ordinals' start and end in the entry, tf or etf, the rules' length).
Run = tuple[int, int, int, int]


def pack_ints(values: Iterable[int]) -> bytes:
    """Integers as stored: int32, little-endian."""
    out = array(_INT, values)
    if _SWAP:
        out.byteswap()
    return out.tobytes()


def unpack_ints(blob: bytes | None) -> array[int]:
    """The inverse of :func:`pack_ints`."""
    out = array(_INT)
    if blob:
        out.frombytes(blob)
        if _SWAP:
            out.byteswap()
    return out


def encode(postings: Mapping[int, tuple[int, int]]) -> tuple[bytes, bytes]:
    """An entry from ordinal -> (tf, length): ordinals grouped by run, runs in
    ``(tf, length)`` order, ordinals ascending within a run."""
    runs: dict[tuple[int, int], list[int]] = defaultdict(list)
    for ordinal, key in postings.items():
        runs[key].append(ordinal)
    ords: list[int] = []
    meta: list[int] = []
    for (tf, length), group in sorted(runs.items()):
        ords.extend(sorted(group))
        meta.extend((tf, length, len(group)))
    return pack_ints(ords), pack_ints(meta)


def decode(ords: bytes | None, runs: bytes | None) -> tuple[array[int], list[Run]]:
    """An entry's ordinals and its runs, as (start, end, tf, length)."""
    meta = unpack_ints(runs)
    out: list[Run] = []
    at = 0
    for i in range(0, len(meta), 3):
        out.append((at, at + meta[i + 2], meta[i], meta[i + 1]))
        at += meta[i + 2]
    return unpack_ints(ords), out


def postings_of(ords: bytes | None, runs: bytes | None) -> dict[int, tuple[int, int]]:
    """The inverse of :func:`encode`."""
    values, decoded = decode(ords, runs)
    return {values[i]: (tf, length) for start, end, tf, length in decoded for i in range(start, end)}


def _write(conn: sqlite3.Connection, kind: str, key: str, postings: Mapping[int, tuple[int, int]]) -> None:
    if postings:
        conn.execute("INSERT OR REPLACE INTO packed VALUES (?, ?, ?, ?)", (kind, key, *encode(postings)))
    else:
        conn.execute("DELETE FROM packed WHERE kind = ? AND key = ?", (kind, key))


# --- the rules' side: stems and tags (index/rules.py, after the playbook's rows) ---


def sync_rules(
    conn: sqlite3.Connection, changed: set[str], terms: set[str], tags: set[str], *, everything: bool
) -> None:
    """Bring the rules' ordinals, ``('t', stem)`` and ``('g', tag)`` entries and
    ``tag_stems`` in line with ``rule_terms`` and ``rule_tag_stems``: for the rules in
    ``changed`` and the stems (``terms``: pairs, which have a space, are skipped) and
    tags they touched, or all of them (``everything``: a build)."""
    if everything:
        for table in ("rule_ords", "tag_stems"):
            conn.execute(f"DELETE FROM {table}")
        conn.execute("DELETE FROM packed WHERE kind IN ('t', 'g')")
        conn.execute("INSERT INTO rule_ords (rule_id) SELECT id FROM rules WHERE retired = 0 ORDER BY id")
        _write_all_terms(conn)
        tags = set()
    else:
        _move_rule_ords(conn, changed)
        for stem in sorted(t for t in terms if " " not in t):
            rows = conn.execute(
                "SELECT o.ord, p.tf, p.length FROM rule_terms AS p JOIN rule_ords AS o "
                "ON o.rule_id = p.rule_id WHERE p.term = ?",
                (stem,),
            )
            _write(conn, "t", stem, {ordinal: (tf, length) for ordinal, tf, length in rows})
    for tag in sorted(tags):
        _write_tag(conn, tag)
    if changed or everything:
        new_stamp(conn, "packed_stamp")  # ordinals or the joins between them moved


def _move_rule_ords(conn: sqlite3.Connection, changed: set[str]) -> None:
    """An ordinal for each changed rule now active, none for one that is not."""
    for chunk in chunks(sorted(changed), 500):
        marks = ",".join("?" * len(chunk))
        conn.execute(
            f"DELETE FROM rule_ords WHERE rule_id IN ({marks}) AND rule_id NOT IN "
            f"(SELECT id FROM rules WHERE retired = 0 AND id IN ({marks}))",
            chunk + chunk,
        )
        conn.execute(
            f"INSERT OR IGNORE INTO rule_ords (rule_id) SELECT id FROM rules "
            f"WHERE retired = 0 AND id IN ({marks}) ORDER BY id",
            chunk,
        )


def _write_all_terms(conn: sqlite3.Connection) -> None:
    """Every stem's and every tag's entry, and ``tag_stems``: SQLite groups each run's
    ordinals (a row per run, not per posting, crosses into Python)."""
    rows = conn.execute(
        "SELECT p.term, p.tf, p.length, group_concat(o.ord) FROM rule_terms AS p JOIN rule_ords AS o "
        "ON o.rule_id = p.rule_id GROUP BY p.term, p.tf, p.length ORDER BY p.term, p.tf, p.length"
    )
    out: list[tuple[str, str, bytes, bytes]] = []
    last: str | None = None
    ords: list[int] = []
    meta: list[int] = []
    for term, tf, length, group in rows:
        if term != last:
            if last is not None:
                out.append(("t", last, pack_ints(ords), pack_ints(meta)))
            last, ords, meta = term, [], []
        run = sorted(map(int, group.split(",")))
        ords.extend(run)
        meta.extend((tf, length, len(run)))
    if last is not None:
        out.append(("t", last, pack_ints(ords), pack_ints(meta)))
    for tag, group in conn.execute(
        "SELECT s.tag, group_concat(DISTINCT o.ord) FROM rule_tag_stems AS s JOIN rule_ords AS o "
        "ON o.rule_id = s.rule_id GROUP BY s.tag ORDER BY s.tag"
    ):
        run = sorted(map(int, group.split(",")))
        out.append(("g", tag, pack_ints(run), pack_ints((0, 0, len(run)))))
    conn.executemany("INSERT INTO packed VALUES (?, ?, ?, ?)", out)
    conn.execute("INSERT INTO tag_stems SELECT DISTINCT stem, tag, parts FROM rule_tag_stems")


def _write_tag(conn: sqlite3.Connection, tag: str) -> None:
    """A tag's entry (its active rules) and its stems' rows in ``tag_stems``."""
    parts = text.tag_stems(tag)
    rules = (
        conn.execute(
            "SELECT DISTINCT o.ord FROM rule_tag_stems AS s JOIN rule_ords AS o ON o.rule_id = s.rule_id "
            "WHERE s.stem = ? AND s.tag = ?",
            (parts[0], tag),
        ).fetchall()
        if parts
        else []
    )
    _write(conn, "g", tag, {ordinal: (0, 0) for (ordinal,) in rules})
    conn.execute("DELETE FROM tag_stems WHERE tag = ?", (tag,))
    if rules:
        conn.executemany("INSERT INTO tag_stems VALUES (?, ?, ?)", [(s, tag, len(parts)) for s in set(parts)])


# --- the episodes' side: cited episodes' words (index/ledger_words.py) ---


def sync_episodes(
    conn: sqlite3.Connection,
    words: Mapping[str, Mapping[str, int]],
    rules: set[str],
    dropped: set[str],
    terms: set[str],
) -> None:
    """Bring the ``('e', stem)`` entries, the episodes' ordinals and both joins in line
    after ``rule_episode_terms`` was rewritten for ``rules`` (active or gone).

    ``words``: episode -> stem -> etf, for every episode an active rule of ``rules``
    cites (its words now: an episode saying none has no ordinal); ``dropped``: the
    episodes whose rows were deleted; ``terms``: every stem of the rows deleted or
    written. An episode of ``dropped`` not in ``words`` keeps its entries while an
    active rule not in ``rules`` (whose rows for it stay) cites it and it exists.
    """
    words = {episode: stems for episode, stems in words.items() if stems}
    kept = _still_cited(conn, dropped - set(words), rules)
    gone = dropped - set(words) - kept
    _give_episode_ords(conn, sorted(words))
    ords = _episode_ords(conn, sorted(set(words) | gone))
    by_term: dict[str, dict[int, int]] = defaultdict(dict)
    for episode, stems in words.items():
        for stem, etf in stems.items():
            by_term[stem][ords[episode]] = etf
    moved = {ords[e] for e in words} | {ords[e] for e in gone if e in ords}
    for stem in sorted(terms):
        row = conn.execute("SELECT ords, runs FROM packed WHERE kind = 'e' AND key = ?", (stem,)).fetchone()
        postings = {o: v for o, v in postings_of(*row).items() if o not in moved} if row else {}
        postings.update((o, (etf, 0)) for o, etf in by_term.get(stem, {}).items())
        _write(conn, "e", stem, postings)
    for chunk in chunks(sorted(gone), 500):
        conn.execute(f"DELETE FROM episode_ords WHERE episode_id IN ({','.join('?' * len(chunk))})", chunk)
    _join(conn, sorted(rules), sorted(set(words) | dropped))
    if rules or dropped:
        new_stamp(conn, "packed_stamp")  # ordinals or the joins between them moved


def _still_cited(conn: sqlite3.Connection, episodes: set[str], changed: set[str]) -> set[str]:
    """Those of ``episodes`` in the ledger and cited by an active rule not in ``changed``."""
    out: set[str] = set()
    others = json.dumps(sorted(changed))
    for chunk in chunks(sorted(episodes), 500):
        marks = ",".join("?" * len(chunk))
        out |= {
            row[0]
            for row in conn.execute(
                f"SELECT DISTINCT c.episode_id FROM citations AS c JOIN rules AS r ON r.id = c.rule_id "
                f"JOIN episodes AS e ON e.id = c.episode_id WHERE r.retired = 0 "
                f"AND c.episode_id IN ({marks}) AND c.rule_id NOT IN (SELECT value FROM json_each(?))",
                [*chunk, others],
            )
        }
    return out


def _give_episode_ords(conn: sqlite3.Connection, episodes: list[str]) -> None:
    conn.executemany("INSERT OR IGNORE INTO episode_ords (episode_id) VALUES (?)", [(e,) for e in episodes])


def _episode_ords(conn: sqlite3.Connection, episodes: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for chunk in chunks(episodes, 500):
        marks = ",".join("?" * len(chunk))
        out.update(
            conn.execute(f"SELECT episode_id, ord FROM episode_ords WHERE episode_id IN ({marks})", chunk)
        )
    return out


def _join(conn: sqlite3.Connection, rules: list[str], episodes: list[str]) -> None:
    """``rule_ords.episodes`` (the cited episodes with an ordinal) of ``rules``, and
    ``episode_ords.rules`` (the active rules citing it) of ``episodes``."""
    _other_side(conn, rules, "rule", "episode")
    _other_side(conn, episodes, "episode", "rule")


def _other_side(conn: sqlite3.Connection, keys: list[str], side: str, other: str) -> None:
    """For each of ``keys`` (IDs of ``side``: rule or episode), the ordinals of the
    ``other`` side its citations name, into ``<side>_ords.<other>s``."""
    for chunk in chunks(keys, 500):
        marks = ",".join("?" * len(chunk))
        found: dict[str, list[int]] = defaultdict(list)
        for key, ordinal in conn.execute(
            f"SELECT c.{side}_id, o.ord FROM citations AS c JOIN {other}_ords AS o "
            f"ON o.{other}_id = c.{other}_id WHERE c.{side}_id IN ({marks})",
            chunk,
        ):
            found[key].append(ordinal)
        conn.executemany(
            f"UPDATE {side}_ords SET {other}s = ? WHERE {side}_id = ?",
            [(pack_ints(sorted(found.get(k, ()))), k) for k in chunk],
        )
