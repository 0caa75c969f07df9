"""What :func:`scarwarden.recall.score.score_rules` reads from the index for its candidate
rules: their own stems with their document frequencies, their tags as stems, and the
task stems their cited episodes say. Reading only; the arithmetic is in
:mod:`scarwarden.recall.score`."""

from __future__ import annotations

import itertools
import json
import operator
from typing import Any

#: Per rule ID: its stems that the task shares -> (tf, length), and all its stems -> df.
_Postings = dict[str, dict[str, tuple[int, int]]]
_StemDf = dict[str, dict[str, int]]
#: Per rule ID: tag -> the stems it normalises to.
_TagParts = dict[str, dict[str, set[str]]]
#: Per rule ID: task stem -> the (episode ID, field, tf) of the cited episodes saying it.
_EpisodeWords = dict[str, dict[str, list[tuple[str, str, int]]]]


def rule_stems(
    conn: Any,
    id_json: str,
    ids: list[str],
    df: dict[str, int],
    ledger: bool,
    lengths: dict[str, int] | None = None,
) -> tuple[_Postings, _StemDf, _StemDf]:
    """The rules' own stems with their df (and how many past tasks say them): the shared
    ones score, all of them weigh in the rule's mass. Read by rule (a few dozen postings
    each), not by term: a long task has hundreds. ``lengths``: filled with each rule's
    length in stems."""
    postings: _Postings = {i: {} for i in ids}
    stem_df: _StemDf = {i: {} for i in ids}
    stem_tdf: _StemDf = {i: {} for i in ids}
    # One statement: each posting with its stem's df (and how many past tasks say it),
    # a seek each in two small tables (two statements cost more at a short recall).
    task_df = "coalesce(t.df, 0)" if ledger else "0"
    join = " LEFT JOIN task_term_df AS t ON t.term = p.term" if ledger else ""
    rows = conn.execute(
        f"SELECT p.rule_id, p.term, p.tf, p.length, d.df, {task_df} FROM rule_terms AS p "
        f"JOIN rule_term_df AS d ON d.term = p.term{join} "
        "WHERE p.rule_id IN (SELECT value FROM json_each(?))",
        (id_json,),
    )
    for rule_id, term, tf, length, term_df, tdf in rows:
        if lengths is not None:
            lengths[rule_id] = length
        stem_df[rule_id][term] = term_df
        if tdf > 1:
            stem_tdf[rule_id][term] = tdf
        if term in df:
            postings[rule_id][term] = (tf, length)
    return postings, stem_df, stem_tdf


def read_tag_parts(conn: Any, id_json: str, stem_df: _StemDf, stem_tdf: _StemDf, ledger: bool) -> _TagParts:
    """Each rule's tags as stems; a tag stem not in the rule's text joins its stems too
    (with its df, 0 when no rule's title or text has it)."""
    tag_parts: _TagParts = {}
    task_df = "coalesce(t.df, 0)" if ledger else "0"
    join = "LEFT JOIN task_term_df AS t ON t.term = s.stem " if ledger else ""
    for rule_id, tag, stem, tag_df, tdf in conn.execute(
        f"SELECT s.rule_id, s.tag, s.stem, coalesce(d.df, 0), {task_df} FROM rule_tag_stems AS s "
        f"LEFT JOIN rule_term_df AS d ON d.term = s.stem {join}"
        "WHERE s.rule_id IN (SELECT value FROM json_each(?))",
        (id_json,),
    ):
        tag_parts.setdefault(rule_id, {}).setdefault(tag, set()).add(stem)
        stem_df[rule_id].setdefault(stem, tag_df)
        if tdf > 1:
            stem_tdf[rule_id].setdefault(stem, tdf)
    return tag_parts


def episode_words(conn: Any, id_json: str, ep_df: dict[str, int]) -> _EpisodeWords:
    """For each candidate rule, the task stems its cited episodes say, and where."""
    out: _EpisodeWords = {}
    if not ep_df:
        return out
    rows = conn.execute(
        "SELECT term, rule_id, episode_id, field, tf FROM rule_episode_terms "
        "WHERE term IN (SELECT value FROM json_each(?)) AND rule_id IN (SELECT value FROM json_each(?)) "
        "ORDER BY term, rule_id, episode_id, field",  # the primary key's order: no sort
        (json.dumps(sorted(ep_df)), id_json),
    )
    # A rule taught by many long tasks has thousands of these rows: grouped in C.
    for (term, rule_id), group in itertools.groupby(rows, key=operator.itemgetter(0, 1)):
        out.setdefault(rule_id, {})[term] = [(episode_id, where, tf) for _, _, episode_id, where, tf in group]
    return out


def pair_postings(conn: Any, id_json: str, pair_df: dict[str, int]) -> dict[str, dict[str, tuple[int, int]]]:
    """For each candidate rule, the task's pairs it says -> (tf, length) (version 3)."""
    out: dict[str, dict[str, tuple[int, int]]] = {}
    if not pair_df:
        return out
    for pair, rule_id, tf, length in conn.execute(
        "SELECT term, rule_id, tf, length FROM rule_pair_terms "
        "WHERE term IN (SELECT value FROM json_each(?)) AND rule_id IN (SELECT value FROM json_each(?))",
        (json.dumps(sorted(pair_df)), id_json),
    ):
        out.setdefault(rule_id, {})[pair] = (int(tf), int(length))
    return out
