"""What :func:`scarwarden.recall.score.score_rules` reads from the index for its candidate
rules: their own stems with their document frequencies, their tags as stems, and the
task stems their cited episodes say. Reading only; the arithmetic is in
:mod:`scarwarden.recall.score`."""

from __future__ import annotations

import itertools
import json
import operator
from collections.abc import Callable
from json.scanner import make_scanner

from scarwarden import text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: JSON the index wrote (no leading space: SQLite's JSON functions, ``json.dumps``) parsed
#: by the C scanner alone: ``json.loads`` costs ~2 us a call in Python around it, and
#: scoring parses a hundred small documents a recall.
_DECODER: Any = json.JSONDecoder()  # typeshed types make_scanner's argument oddly
_SCAN = make_scanner(_DECODER)


def load_json(raw: str) -> Any:
    """``json.loads(raw)`` for a document that starts with its value."""
    return _SCAN(raw, 0)[0]


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
    tag_stems: list[str] | None = None,
    counts: Counts | None = None,
    repeats: dict[str, dict[str, int]] | None = None,
) -> tuple[_Postings, _StemDf, _StemDf, dict[str, tuple[int, int]]]:
    """The rules' own stems with their df (and how many past tasks say them): the shared
    ones score, all of them weigh in the rule's mass. Read by rule (a few dozen postings
    each), not by term: a long task has hundreds. ``lengths``: filled with each rule's
    length in stems. ``tag_stems``: stems of the rules' tags, whose (df, past tasks) come
    back too (df 0: no rule's title or text has it). ``counts``: stems -> (their df,
    their past tasks), the process's :mod:`~scarwarden.recall.term_counts` (None: read
    here). ``repeats``: filled with each rule's stems said more than once -> tf."""
    postings: _Postings = {i: {} for i in ids}
    stem_df: _StemDf = {i: {} for i in ids}
    stem_tdf: _StemDf = {i: {} for i in ids}
    tag_df: dict[str, tuple[int, int]] = {}
    # One row per rule from the covering index on rule_id: its stems, and those it says
    # more than once, as JSON (parsed in C: a row per posting crossing into Python cost
    # more). Their counts come from ``counts``, which keeps them between recalls.
    rows = conn.execute(
        "SELECT rule_id, max(length), json_group_array(term), "
        "json_group_object(term, tf) FILTER (WHERE tf > 1) FROM rule_terms "
        "WHERE rule_id IN (SELECT value FROM json_each(?)) GROUP BY rule_id",
        (id_json,),
    ).fetchall()
    loads = load_json
    said = [(rule_id, length, loads(terms), tfs) for rule_id, length, terms, tfs in rows]
    wanted = set(tag_stems or ()).union(*(terms for _r, _l, terms, _t in said))
    count = (counts or _read_counts)(conn, wanted)
    for rule_id, length, terms, tfs in said:
        if lengths is not None:
            lengths[rule_id] = length
        mine = [(term, count[term]) for term in terms]
        own = stem_df[rule_id] = {term: d for term, (d, _t) in mine if d}
        if ledger:
            stem_tdf[rule_id] = {term: t for term, (d, t) in mine if d and t > 1}
        repeated = loads(tfs) if tfs else {}
        if repeats is not None:
            repeats[rule_id] = repeated
        postings[rule_id] = {term: (repeated.get(term, 1), length) for term in df if term in own}
    for term in tag_stems or ():
        d, t = count[term]
        tag_df[term] = (d, t if ledger and t > 1 else 0)
    return postings, stem_df, stem_tdf, tag_df


if TYPE_CHECKING:
    #: Stems -> (df over the active rules, how many past tasks say them).
    Counts = Callable[[Any, set[str]], dict[str, tuple[int, int]]]


def _read_counts(conn: Any, stems: set[str]) -> dict[str, tuple[int, int]]:
    """Both counts of ``stems``, read now (nothing kept)."""
    from scarwarden.recall.term_counts import TermCounts

    return TermCounts().read(conn, stems, None, None, None)


def tag_parts(tags: dict[str, list[str]]) -> _TagParts:
    """Each rule's tags as stems (:func:`scarwarden.text.tag_stems`, as the index's
    ``rule_tag_stems`` holds them; a tag of stopwords alone has none and is left out)."""
    out: _TagParts = {}
    for rule_id, rule_tags in tags.items():
        for tag in rule_tags:
            parts = text.tag_stems(tag)
            if parts:
                out.setdefault(rule_id, {}).setdefault(tag, set()).update(parts)
    return out


def add_tag_stems(
    parts: _TagParts, tag_df: dict[str, tuple[int, int]], stem_df: _StemDf, stem_tdf: _StemDf
) -> None:
    """A tag stem not in the rule's text joins its stems too (with its df, 0 when no
    rule's title or text has it, and how many past tasks say it)."""
    for rule_id, by_tag in parts.items():
        own, own_tdf = stem_df[rule_id], stem_tdf[rule_id]
        for stems in by_tag.values():
            for stem in stems:
                d, tdf = tag_df.get(stem, (0, 0))
                own.setdefault(stem, d)
                if tdf > 1:
                    own_tdf.setdefault(stem, tdf)


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
