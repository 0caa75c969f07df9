"""Recall's arithmetic: the score that ranks, the confidence that routes.

Two numbers per rule (docs/recall.md works examples by hand). The **score** ranks::

    score(r) = sum over tag hits        TAG_WEIGHT
             + sum over shared stems t  idf(t) * qtf(t) * tf(t,r) * (K1 + 1)
                                        / (tf(t,r) + K1 * (1 - B + B * len(r) / avglen))

    idf(t) = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))

* a *tag hit* is a rule tag whose normalised stems (split on ``-``, stopwords dropped,
  stemmed) are all among the task's stems (SPEC section 7);
* ``qtf(t)``: how often stem ``t`` occurs in the task; ``tf(t,r)``: in the rule's title
  plus text; ``len(r)``: the rule's number of stems; ``N``, ``avglen``, ``df``: over the
  active rules (meta ``rule_count``/``rule_total_length``, table ``rule_term_df``;
  ``df`` is 0 for a stem no rule's title or text contains);
* that is BM25 with Lucene's non-negative idf and K1 = 1.5, B = 0.75 (rank_bm25's
  defaults, so the benchmark baseline runs with the same constants; not tuned on the
  benchmark), plus a flat bonus per tag hit.

The **confidence** routes (:mod:`scarwarden.recall.router`). A BM25 sum grows with every
word a task shares with a rule, so a long task that shares only generic words ("card",
"fee", "agent") outscores a short, exact one; the confidence does not::

    confidence(r) = matched(r) / sqrt(task_mass * rule_mass(r))          (0 to 1)

    task_mass     = sum of idf(t) over the task's distinct stems
    rule_mass(r)  = sum of idf(t) over the distinct stems of r's title, text and tags
    matched(r)    = sum of idf(t) over the task stems r matches (in its title or
                    text, or part of a tag that hits)

It is the geometric mean of how much of the task the rule explains
(``matched / task_mass``) and how much of the rule the task touches
(``matched / rule_mass``), each weighted by idf, so generic words count for little and
words memory has never seen (idf at df 0, the highest) count against the match. It is
1.0 when the task's stems are exactly the rule's. The **evidence**,
``matched(r) / idf(df=1)``, counts the match in rare words: the confidence of a
one-word task can be high on that word alone, so the router also asks for evidence.

Every rule that can make the result carries its contributions (``tag:<tag>``,
``term:<stem>``) and the masses behind its confidence (:func:`score_rules`); the score
is the contributions' sum in that order, rounded to :data:`DECIMALS` decimals.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

from scarwarden.recall.result import RecalledRule, TermMatch

K1 = 1.5
B = 0.75
#: Points for each tag hit: a curated tag is worth more than any single shared word.
TAG_WEIGHT = 3.0
#: Scores and contributions are rounded to this many decimals (byte-stable JSON).
DECIMALS = 4


def idf(df: int, n: int) -> float:
    """Lucene's BM25 idf: ``ln(1 + (N - df + 0.5) / (df + 0.5))``, never negative."""
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def confidence(matched: float, task_mass: float, rule_mass: float) -> float:
    """``matched / sqrt(task_mass * rule_mass)``, rounded; 0.0 when either mass is 0."""
    if task_mass <= 0.0 or rule_mass <= 0.0:
        return 0.0
    return round(matched / math.sqrt(task_mass * rule_mass), DECIMALS)


def term_contribution(idf_value: float, qtf: int, tf: int, length: int, avg_length: float) -> float:
    """One shared stem's BM25 contribution (unrounded)."""
    norm = tf + K1 * (1.0 - B + B * length / avg_length)
    return idf_value * qtf * tf * (K1 + 1.0) / norm


@dataclass(frozen=True)
class TaskTerms:
    """The task's side of the arithmetic: its stems, and what the index knows of them."""

    qtf: Counter[str]
    #: df of the task stems some active rule contains (the others are absent: df 0).
    df: dict[str, int]
    #: Active rules (N) and their average length in stems (avglen).
    n: int
    avg: float
    #: Sum of idf over the task's distinct stems.
    task_mass: float


def task_terms(conn: Any, qtf: Counter[str], n: int, avg: float) -> TaskTerms:
    """Look up the task stems' document frequencies and weigh the task (one query)."""
    df = document_frequencies(conn, sorted(qtf))
    task_mass = math.fsum(idf(df.get(t, 0), n) for t in qtf) if n else 0.0
    return TaskTerms(qtf=qtf, df=df, n=n, avg=avg, task_mass=task_mass)


def document_frequencies(conn: Any, stems: list[str]) -> dict[str, int]:
    """Stem -> df, for the ``stems`` at least one active rule contains."""
    if not stems:
        return {}
    rows = conn.execute(
        "SELECT term, df FROM rule_term_df WHERE term IN (SELECT value FROM json_each(?))",
        (json.dumps(stems),),
    )
    return {term: int(df) for term, df in rows if df}


def candidates(conn: Any, task: TaskTerms, count: int) -> list[tuple[str, float]]:
    """The ``count`` best (rule ID, score), scored in SQL (one pass over the postings).

    Query stems and their weights travel as one JSON parameter, so a long task never
    hits SQLite's limit on bound variables. Equal rules sum their contributions in the
    same order, so exact ties stay exact and are broken by rule ID here too; the final
    order is set by :func:`score_rules`'s exact sums (hence the caller's slack).
    """
    weights = [[t, idf(d, task.n) * task.qtf[t] * (K1 + 1.0)] for t, d in sorted(task.df.items())]
    sql = """
        WITH q(term, w) AS (
            SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]')
            FROM json_each(:weights)),
        s(rule_id, c) AS (
            SELECT p.rule_id, q.w * p.tf / (p.tf + :base + :slope * p.length)
            FROM q CROSS JOIN rule_terms AS p ON p.term = q.term
            UNION ALL
            SELECT rule_id, :tag_weight FROM rule_tag_stems
            WHERE stem IN (SELECT value FROM json_each(:stems))
            GROUP BY rule_id, tag HAVING count(*) = max(parts))
        SELECT rule_id, sum(c) AS score FROM s GROUP BY rule_id
        ORDER BY score DESC, rule_id LIMIT :count
    """
    params = {
        "weights": json.dumps(weights),
        "stems": json.dumps(sorted(task.qtf)),
        "base": K1 * (1.0 - B),
        "slope": K1 * B / task.avg,
        "tag_weight": TAG_WEIGHT,
        "count": count,
    }
    return [(row[0], float(row[1])) for row in conn.execute(sql, params)]


def worth_explaining(found: list[tuple[str, float]], limit: int) -> list[str]:
    """The candidates that can still make the result (explaining costs a few queries):
    the first ``limit`` and those within floating-point noise of the ``limit``-th score.
    """
    if not found:
        return []
    cut = found[min(limit, len(found)) - 1][1]
    eps = 1e-9 * max(1.0, abs(cut))
    return [rule_id for rule_id, score in found if score >= cut - eps]


#: Per rule ID: its stems that the task shares -> (tf, length), and all its stems -> df.
_Postings = dict[str, dict[str, tuple[int, int]]]
_StemDf = dict[str, dict[str, int]]
#: Per rule ID: tag -> the stems it normalises to.
_TagParts = dict[str, dict[str, set[str]]]


def score_rules(conn: Any, ids: list[str], task: TaskTerms) -> list[RecalledRule]:
    """Exact contributions and confidences for the candidate rules, in a fixed order."""
    if not ids:
        return []
    id_json = json.dumps(ids)
    postings, stem_df = _rule_stems(conn, id_json, ids, task.df)
    tag_parts = _tag_parts(conn, id_json, stem_df)
    # A rule has dozens of stems but they share a handful of df values.
    weight = {d: idf(d, task.n) for d in {d for own in stem_df.values() for d in own.values()}}
    out = []
    for row in conn.execute(
        "SELECT id, title, text, tags, episode_ids FROM rules WHERE id IN (SELECT value FROM json_each(?))",
        (id_json,),
    ):
        rule_id = row[0]
        out.append(
            _scored_rule(row, task, postings[rule_id], stem_df[rule_id], tag_parts.get(rule_id, {}), weight)
        )
    return out


def _rule_stems(conn: Any, id_json: str, ids: list[str], df: dict[str, int]) -> tuple[_Postings, _StemDf]:
    """The rules' own stems with their df: the shared ones score, all of them weigh in
    the rule's mass. Read by rule (a few dozen postings each), not by term: a long task
    has hundreds."""
    postings: _Postings = {i: {} for i in ids}
    stem_df: _StemDf = {i: {} for i in ids}
    for term, rule_id, tf, length, term_df in conn.execute(
        "SELECT p.term, p.rule_id, p.tf, p.length, d.df FROM rule_terms AS p "
        "JOIN rule_term_df AS d ON d.term = p.term WHERE p.rule_id IN "
        "(SELECT value FROM json_each(?))",
        (id_json,),
    ):
        stem_df[rule_id][term] = term_df
        if term in df:
            postings[rule_id][term] = (tf, length)
    return postings, stem_df


def _tag_parts(conn: Any, id_json: str, stem_df: _StemDf) -> _TagParts:
    """Each rule's tags as stems; a tag stem not in the rule's text joins its stems too
    (with its df, 0 when no rule's title or text has it)."""
    tag_parts: _TagParts = {}
    for rule_id, tag, stem, tag_df in conn.execute(
        "SELECT t.rule_id, t.tag, t.stem, coalesce(d.df, 0) FROM rule_tag_stems AS t "
        "LEFT JOIN rule_term_df AS d ON d.term = t.stem WHERE t.rule_id IN "
        "(SELECT value FROM json_each(?))",
        (id_json,),
    ):
        tag_parts.setdefault(rule_id, {}).setdefault(tag, set()).add(stem)
        stem_df[rule_id].setdefault(stem, tag_df)
    return tag_parts


def _scored_rule(
    row: tuple[Any, ...],
    task: TaskTerms,
    postings: dict[str, tuple[int, int]],
    own: dict[str, int],
    parts: dict[str, set[str]],
    weight: dict[int, float],
) -> RecalledRule:
    """One rule's contributions (tags first, then terms by contribution), score,
    confidence and evidence."""
    rule_id, title, body, tags_json, eps_json = row
    tags = list(json.loads(tags_json))
    hits = [t for t in tags if t in parts and parts[t] <= task.qtf.keys()]
    contributions: dict[str, float] = {}
    total = 0.0
    for tag in hits:
        contributions[f"tag:{tag}"] = TAG_WEIGHT
        total += TAG_WEIGHT
    matches = []
    for stem, (tf, length) in sorted(postings.items()):
        idf_value = idf(task.df[stem], task.n)
        value = term_contribution(idf_value, task.qtf[stem], tf, length, task.avg)
        total += value
        matches.append(
            TermMatch(stem, task.qtf[stem], task.df[stem], idf_value, tf, length, round(value, DECIMALS))
        )
    matches.sort(key=lambda m: (-m.contribution, m.stem))
    for m in matches:
        contributions[f"term:{m.stem}"] = m.contribution
    matched = set(postings).union(*(parts[t] for t in hits))
    # fsum is correctly rounded whatever the order: the masses are byte-stable.
    matched_mass = math.fsum(weight[own[s]] for s in matched)
    rule_mass = math.fsum(weight[d] for d in own.values())
    rare = idf(1, task.n)  # the idf of a stem found in one rule only
    return RecalledRule(
        id=rule_id,
        title=title,
        text=body,
        score=round(total, DECIMALS),
        matched_tags=hits,
        matched_terms=[m.stem for m in matches],
        contributions=contributions,
        episode_ids=list(json.loads(eps_json)),
        tags=tags,
        terms=matches,
        confidence=confidence(matched_mass, task.task_mass, rule_mass),
        matched_mass=matched_mass,
        rule_mass=rule_mass,
        evidence=round(matched_mass / rare, DECIMALS),
        stem_df=dict(sorted(own.items())),
        matched_stems=sorted(matched),
    )
