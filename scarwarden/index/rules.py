"""The playbook in the index: rules, citations, tags and recall's postings.

Each rule's row keeps a digest of its section of the file (heading, level and body,
byte for byte); when the playbook file moves, only the sections whose digest changed are
parsed (:func:`scarwarden.files.playbook.parse_changed`), only their rules are deleted
and written again, and only the terms they touched get their document frequency
recounted. The rest at most moved in the file: their position and line are updated.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from typing import Any

from scarwarden import text
from scarwarden.errors import ValidationError
from scarwarden.files import playbook as pb
from scarwarden.git import blob_id
from scarwarden.index.packed_postings import sync_rules
from scarwarden.index.schema import RefreshStats, new_stamp, recount_df, set_meta
from scarwarden.regular_files import read_regular
from scarwarden.repo import MemoryRepo


def rule_terms(rule: pb.Rule) -> tuple[Counter[str], Counter[str]]:
    """Stemmed term frequencies of a rule's title and text (what recall scores on), and
    of the pairs of adjacent stems of each (recall's ``pair:`` terms: none across the
    title and the text); the stems of each field are read once for both."""
    title, body = text.stems(rule.title), text.stems(rule.text)
    return Counter(title + body), Counter(text.pairs(title) + text.pairs(body))


def index_playbook(conn: sqlite3.Connection, repo: MemoryRepo, stats: RefreshStats) -> None:
    """Bring the rule tables in line with the playbook file, touching changed rules only."""
    try:
        raw = read_regular(repo.playbook_path)
    except FileNotFoundError:
        if _committed(repo):  # deleted from the working tree: not a memory with no rules
            set_meta(conn, "playbook_error", _missing(repo))
            return
        raw = b"# Playbook\n"
    # id -> (digest of its section, position, line): an unchanged section is not parsed.
    stored = {r[0]: (r[1], r[2], r[3]) for r in conn.execute("SELECT id, digest, position, line FROM rules")}
    try:
        known = {rule_id: digest for rule_id, (digest, _p, _l) in stored.items()}
        sections = pb.parse_changed(raw.decode("utf-8"), known, source=repo.playbook_rel)
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1  # no line of text to show: say where the byte is
        where = f"the byte 0x{raw[exc.start]:02X} at byte {exc.start + 1:,}, line {line}"
        set_meta(conn, "playbook_error", f"{repo.playbook_rel}: not valid UTF-8 ({where})")
        return
    except ValidationError as exc:
        set_meta(conn, "playbook_error", exc.render().removeprefix("error: "))
        return
    conn.execute("DELETE FROM meta WHERE key = 'playbook_error'")
    # Recall receipts name the playbook by its blob ID (recall/receipts.py).
    set_meta(conn, "playbook_blob", blob_id(raw))
    seen: set[str] = set()
    touched: set[str] = set()  # terms whose document frequency may have moved
    tags: set[str] = set()  # tags whose rules may have moved
    changed: set[str] = set()
    inserts: dict[str, list[tuple[Any, ...]]] = {}
    for position, section in enumerate(sections):
        seen.add(section.rule_id)
        rule = section.rule
        if rule is None:  # the same section: at most moved in the file
            if stored[section.rule_id][1:] != (position, section.line):
                conn.execute(
                    "UPDATE rules SET position = ?, line = ? WHERE id = ?",
                    (position, section.line, section.rule_id),
                )
            continue
        if rule.id in stored:  # a new rule has nothing to delete (and a full build none)
            touched |= _delete_rule(conn, rule.id, tags)
        touched |= _rule_rows(rule, position, section.digest, inserts)
        tags.update(() if rule.retired else rule.tags)
        changed.add(rule.id)
        stats.rules_changed += 1
    for rule_id in set(stored) - seen:
        touched |= _delete_rule(conn, rule_id, tags)
        changed.add(rule_id)
        stats.rules_changed += 1
    _insert_rows(conn, inserts)
    _update_term_df(conn, touched, everything=not stored)
    sync_rules(conn, changed, touched, tags, everything=not stored)
    total = conn.execute("SELECT count(*), coalesce(sum(length), 0) FROM rules WHERE retired = 0").fetchone()
    set_meta(conn, "rule_count", str(total[0]))
    set_meta(conn, "rule_total_length", str(total[1]))


def _committed(repo: MemoryRepo) -> bool:
    """Whether HEAD has the playbook (asked of git only when the file is missing)."""
    from scarwarden import git

    return git.run_ok(repo.root, "cat-file", "-e", f"HEAD:{repo.playbook_rel}")


def _missing(repo: MemoryRepo) -> str:
    return (
        f"{repo.playbook_rel}: missing from the working tree, while the last commit has it "
        "(recall would see no rule at all)"
    )


def _delete_rule(conn: sqlite3.Connection, rule_id: str, tags: set[str]) -> set[str]:
    """Remove a rule from every table; return the terms (and pairs: ``"a b"``, never a
    stem, which has no space) it had postings for, and add its tags to ``tags``."""
    terms = {r[0] for r in conn.execute("SELECT term FROM rule_terms WHERE rule_id = ?", (rule_id,))}
    tags.update(
        r[0] for r in conn.execute("SELECT DISTINCT tag FROM rule_tag_stems WHERE rule_id = ?", (rule_id,))
    )
    terms |= {r[0] for r in conn.execute("SELECT term FROM rule_pair_terms WHERE rule_id = ?", (rule_id,))}
    for table, column in (
        ("rules", "id"),
        ("citations", "rule_id"),
        ("rule_tags", "rule_id"),
        ("rule_terms", "rule_id"),
        ("rule_pair_terms", "rule_id"),
        ("rule_tag_stems", "rule_id"),
    ):
        conn.execute(f"DELETE FROM {table} WHERE {column} = ?", (rule_id,))
    return terms


#: A term's row in ``rule_term_df``: its df.
_DF_COLUMNS = "term, count(*)"


def _update_term_df(conn: sqlite3.Connection, terms: set[str], *, everything: bool) -> None:
    """Recount the document frequency of ``terms`` and pairs (all of them on a first build),
    and draw a new ``meta.rule_df_stamp`` when any may have moved (what recall keeps
    between recalls is keyed by it: recall/term_counts.py)."""
    recount_df(conn, "rule_term_df", f"SELECT {_DF_COLUMNS} FROM rule_terms", terms, everything=everything)
    if terms or everything:
        new_stamp(conn, "rule_df_stamp")
    recount_df(
        conn, "rule_pair_df", "SELECT term, count(*) FROM rule_pair_terms", terms, everything=everything
    )


_INSERTS = {
    "rules": "INSERT INTO rules VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "citations": "INSERT OR IGNORE INTO citations VALUES (?, ?)",
    "rule_tags": "INSERT OR IGNORE INTO rule_tags VALUES (?, ?)",
    "rule_terms": "INSERT INTO rule_terms VALUES (?, ?, ?, ?)",
    "rule_pair_terms": "INSERT INTO rule_pair_terms VALUES (?, ?, ?, ?)",
    "rule_tag_stems": "INSERT OR IGNORE INTO rule_tag_stems VALUES (?, ?, ?, ?)",
}


def _rule_rows(rule: pb.Rule, position: int, digest: str, out: dict[str, list[tuple[Any, ...]]]) -> set[str]:
    """Add a rule's rows (postings only when active) to ``out``; return its terms."""
    terms, pairs = rule_terms(rule)
    length = sum(terms.values())
    out.setdefault("rules", []).append(
        (
            rule.id,
            position,
            rule.title,
            rule.text,
            json.dumps(list(rule.tags)),
            json.dumps(list(rule.episode_ids)),
            int(rule.retired),
            rule.reason,
            rule.replaced_by,
            rule.line,
            length,
            digest,
            json.dumps(list(rule.applies_to)),
        )
    )
    out.setdefault("citations", []).extend((rule.id, ep) for ep in rule.episode_ids)
    out.setdefault("rule_tags", []).extend((tag, rule.id) for tag in rule.tags)
    if rule.retired:
        return set()
    out.setdefault("rule_terms", []).extend((term, rule.id, tf, length) for term, tf in terms.items())
    out.setdefault("rule_pair_terms", []).extend((pair, rule.id, tf, length) for pair, tf in pairs.items())
    stems = out.setdefault("rule_tag_stems", [])
    for tag in rule.tags:
        parts = text.tag_stems(tag)
        stems.extend((s, rule.id, tag, len(parts)) for s in parts)
    return set(terms) | set(pairs)


def _insert_rows(conn: sqlite3.Connection, rows: dict[str, list[tuple[Any, ...]]]) -> None:
    """Insert collected rows with one ``executemany`` per table.

    A big batch (a first build) gets a larger page cache while it runs: postings go
    into the B-trees in random order, and with SQLite's default 2 MB cache a 100k-rule
    build spends most of its time re-reading pages.
    """
    count = sum(len(v) for v in rows.values())
    old = conn.execute("PRAGMA cache_size").fetchone()[0]
    if count > 50_000:
        conn.execute("PRAGMA cache_size = -262144")  # a ceiling (256 MiB), not an allocation
    try:
        for table, sql in _INSERTS.items():
            if rows.get(table):
                conn.executemany(sql, rows[table])
    finally:
        conn.execute(f"PRAGMA cache_size = {int(old)}")
