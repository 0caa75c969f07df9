"""Reading the index: the :class:`Index` an open, fresh index is, and its queries.

Every read goes through :func:`scarwarden.index.open_index`, which refreshes the file
first, so these queries answer for the files as they are now.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable

from scarwarden import text
from scarwarden.errors import ValidationError
from scarwarden.files.episode_fields import expected_relpath
from scarwarden.index.packed import fts_words, load_doc
from scarwarden.index.schema import RefreshStats, chunks
from scarwarden.regular_files import read_regular
from scarwarden.repo import MemoryRepo

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from scarwarden.files import playbook as pb
    from scarwarden.files.episodes import Episode

#: The largest integer SQLite takes; a bigger Python int is an OverflowError.
_SQLITE_MAX = 2**63 - 1


def unparsed_hint(repo: MemoryRepo) -> str:
    """What to do about a playbook the index could not read. The error lists every parse
    problem; the gate (``check``) reads git's index, so it sees a working-tree edit only
    once it is staged ('check --all' said OK on an unstaged broken playbook). A playbook
    deleted from the working tree is restored, never staged."""
    playbook = repo.playbook_rel
    if not os.path.lexists(repo.playbook_path):
        return (
            f"restore it (git restore {playbook}); a memory with no rules keeps the file "
            "with its title alone ('# Playbook')"
        )
    try:
        read_regular(repo.playbook_path).decode("utf-8")  # a FIFO put there since: no wait
    except UnicodeDecodeError:  # no lines above to fix: the encoding is what is wrong
        return (
            f"save {playbook} as UTF-8 (iconv -f ENCODING -t UTF-8 converts a file saved in another "
            f"encoding; 'git diff {playbook}' shows the edit); then 'git add {playbook}' and "
            "'scarwarden check' runs the whole gate on it"
        )
    except OSError:
        pass  # the index's error names what it could not read
    return (
        "fix the playbook at the lines above; then 'git add "
        f"{playbook}' and 'scarwarden check' runs the whole gate on it (citations too)"
    )


class Index:
    """An open, fresh index. Use :func:`open_index` to get one."""

    def __init__(self, repo: MemoryRepo, conn: sqlite3.Connection, stats: RefreshStats):
        self.repo = repo
        self.conn = conn
        self.stats = stats

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- meta ---------------------------------------------------------------------
    def meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def metas(self, *keys: str) -> dict[str, str | None]:
        """Several meta values in one statement (a key not stored: None)."""
        sql = "SELECT key, value FROM meta WHERE key IN (SELECT value FROM json_each(?))"
        found = dict(self.conn.execute(sql, (json.dumps(keys),)))
        return {key: found.get(key) for key in keys}

    @property
    def indexed_commit(self) -> str | None:
        return self.meta("head")

    def playbook_error(self) -> str | None:
        return self.meta("playbook_error")

    # -- episodes -----------------------------------------------------------------
    def episode_count(self) -> int:
        # Kept in meta by rebuild and refresh: count(*) reads the whole table (~8 ms at
        # 100k episodes, paid by every `scarwarden index`).
        stored = self.meta("episode_count")
        if stored is not None:
            return int(stored)
        return int(self.conn.execute("SELECT count(*) FROM episodes").fetchone()[0])

    def get_episode(self, episode_id: str) -> Episode | None:
        row = self.conn.execute("SELECT z, id, at FROM episodes WHERE id = ?", (episode_id,)).fetchone()
        from scarwarden.files.episodes import Episode  # its validator and YAML: only to read one

        return None if row is None else Episode(load_doc(*row))

    def episode_path(self, episode_id: str) -> str | None:
        row = self.conn.execute("SELECT at FROM episodes WHERE id = ?", (episode_id,)).fetchone()
        return None if row is None else expected_relpath(episode_id, row[0], self.repo.episodes_rel)

    def existing_episode_ids(self, ids: Iterable[str]) -> set[str]:
        ids = list(dict.fromkeys(ids))
        found: set[str] = set()
        for chunk in chunks(ids, 500):
            marks = ",".join("?" * len(chunk))
            found.update(
                r[0] for r in self.conn.execute(f"SELECT id FROM episodes WHERE id IN ({marks})", chunk)
            )
        return found

    def list_episodes(
        self,
        *,
        tags: Iterable[str] = (),
        since: str | None = None,
        until: str | None = None,
        agent: str | None = None,
        grep: str | None = None,
        limit: int | None = None,
        newest_first: bool = False,
        offset: int = 0,
    ) -> list[Episode]:
        """Episodes matching every filter, oldest first (by ``at``, then ID); ``offset``
        skips that many of them first (paging)."""
        where, args = self._episode_filters(tags, since, until, agent, grep)
        sql = "SELECT e.z, e.id, e.at FROM episodes e" + where
        order = "DESC" if newest_first else "ASC"
        sql += f" ORDER BY e.at {order}, e.id {order}"
        if limit is not None or offset:
            sql += " LIMIT ? OFFSET ?"
            # Past SQLite's 64-bit integers, a limit or offset is past every episode.
            args += [-1 if limit is None else min(limit, _SQLITE_MAX), min(max(0, offset), _SQLITE_MAX)]
        from scarwarden.files.episodes import Episode

        return [Episode(load_doc(*r)) for r in self.conn.execute(sql, args)]

    def count_episodes(
        self,
        *,
        tags: Iterable[str] = (),
        since: str | None = None,
        until: str | None = None,
        agent: str | None = None,
        grep: str | None = None,
    ) -> int:
        """How many episodes :meth:`list_episodes` would return with these filters."""
        where, args = self._episode_filters(tags, since, until, agent, grep)
        return int(self.conn.execute("SELECT count(*) FROM episodes e" + where, args).fetchone()[0])

    def _episode_filters(
        self, tags: Iterable[str], since: str | None, until: str | None, agent: str | None, grep: str | None
    ) -> tuple[str, list[Any]]:
        where: list[str] = []
        args: list[Any] = []
        for tag in tags:
            where.append("e.rowid IN (SELECT episode_row FROM episode_tags WHERE tag = ?)")
            args.append(tag.lower())
        if since:
            where.append("e.at >= ?")
            args.append(since)
        if until:
            where.append("e.at <= ?")
            args.append(until)
        if agent:
            where.append("e.agent = ?")
            args.append(agent)
        if grep:
            where.append("e.rowid IN (SELECT rowid FROM episodes_fts WHERE episodes_fts MATCH ?)")
            args.append(fts_query(grep))
        return (" WHERE " + " AND ".join(where) if where else ""), args

    def episode_months(self) -> list[tuple[str, int]]:
        return [
            (r[0], r[1])
            for r in self.conn.execute(
                "SELECT substr(at, 1, 7) AS m, count(*) FROM episodes GROUP BY m ORDER BY m DESC"
            )
        ]

    def episode_tags(self) -> list[tuple[str, int]]:
        return [
            (r[0], r[1])
            for r in self.conn.execute(
                "SELECT tag, count(*) FROM episode_tags GROUP BY tag ORDER BY count(*) DESC, tag"
            )
        ]

    def episode_agents(self) -> list[tuple[str, int]]:
        return [
            (r[0], r[1])
            for r in self.conn.execute(
                "SELECT agent, count(*) FROM episodes WHERE agent IS NOT NULL "
                "GROUP BY agent ORDER BY count(*) DESC, agent"
            )
        ]

    # -- rules --------------------------------------------------------------------
    def require_playbook(self) -> None:
        error = self.playbook_error()
        if error:
            raise ValidationError(error, hint=unparsed_hint(self.repo))

    def rules(self, *, include_retired: bool = False) -> list[pb.Rule]:
        sql = (
            "SELECT id, title, text, tags, episode_ids, retired, reason, replaced_by, line, applies_to "
            "FROM rules"
        )
        if not include_retired:
            sql += " WHERE retired = 0"
        sql += " ORDER BY retired, position"
        return [_rule_from_row(r) for r in self.conn.execute(sql)]

    def get_rule(self, rule_id: str) -> pb.Rule | None:
        row = self.conn.execute(
            "SELECT id, title, text, tags, episode_ids, retired, reason, replaced_by, line, applies_to "
            "FROM rules WHERE id = ?",
            (rule_id,),
        ).fetchone()
        return None if row is None else _rule_from_row(row)

    def rules_citing(self, episode_id: str) -> list[str]:
        return self.citations([episode_id]).get(episode_id, [])

    def citations(self, episode_ids: Iterable[str] | None = None) -> dict[str, list[str]]:
        """Episode ID -> the rules citing it (by rule ID), for the cited ones
        among ``episode_ids`` (all, when ``None``): one statement, not one an episode."""
        sql = "SELECT episode_id, rule_id FROM citations"
        order = " ORDER BY episode_id, rule_id"
        if episode_ids is None:
            rows = self.conn.execute(sql + order).fetchall()
        else:
            rows = []
            for chunk in chunks(list(dict.fromkeys(episode_ids)), 500):
                marks = ",".join("?" * len(chunk))
                rows += self.conn.execute(f"{sql} WHERE episode_id IN ({marks}){order}", chunk).fetchall()
        found: dict[str, list[str]] = {}
        for episode_id, rule_id in rows:
            found.setdefault(episode_id, []).append(rule_id)
        return found

    def redacted_episode_ids(self, ids: Iterable[str] | None = None) -> set[str]:
        """The episodes among ``ids`` (all, when ``None``) that are redaction stubs."""
        query = "SELECT id FROM episodes WHERE json_extract(doc, '$.redacted') IS NOT NULL"
        if ids is None:
            return {r[0] for r in self.conn.execute(query)}
        found: set[str] = set()
        for chunk in chunks(list(dict.fromkeys(ids)), 500):
            marks = ",".join("?" * len(chunk))
            found.update(r[0] for r in self.conn.execute(f"{query} AND id IN ({marks})", chunk))
        return found

    def uncited_episode_ids(self) -> list[str]:
        return [
            r[0]
            for r in self.conn.execute(
                "SELECT id FROM episodes WHERE id NOT IN (SELECT episode_id FROM citations) ORDER BY at, id"
            )
        ]


def _rule_from_row(row: tuple[Any, ...]) -> pb.Rule:
    from scarwarden.files.playbook_model import Rule  # not the parser: a recall never needs it

    return Rule(
        row[0],
        row[1],
        row[2],
        tuple(json.loads(row[3])),
        tuple(json.loads(row[4])),
        bool(row[5]),
        row[6],
        row[7],
        row[8] or 0,
        tuple(json.loads(row[9] or "[]")),  # issue 19: '- Applies to: images'
    )


def fts_query(user_text: str) -> str:
    """Turn free text into a safe FTS5 query: every word must appear (prefix match).
    A word is one token of the full-text index, apostrophes included (index/packed.py)."""
    words = [w for w in text._TOKEN.findall(fts_words(user_text.lower())) if w]
    if not words:
        return '""'
    return " AND ".join('"' + w.replace('"', '""') + '"*' for w in words)
