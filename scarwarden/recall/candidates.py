"""Recall's first pass: the best candidates for a task, scored in one SQL statement.

The same arithmetic as :mod:`scarwarden.recall.score` (which recomputes the exact
contributions of the candidates that can make the result), summed by SQLite over the
postings, so a query never loads a rule it will not return.
"""

from __future__ import annotations

import json

from scarwarden.recall.formulas import EPISODE_WEIGHT, K1, TAG_WEIGHT, B, idf
from scarwarden.recall.score import TaskTerms

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def weights(task: TaskTerms) -> list[tuple[str, float]]:
    """Each task stem some rule's title or text says, with what one posting's
    ``tf / (tf + K1 x (1 - B + B x len / avglen))`` is multiplied by."""
    return [(t, idf(d, task.n) * task.q(t) * task.qtf[t] * (K1 + 1.0)) for t, d in sorted(task.df.items())]


def episode_weights(task: TaskTerms) -> list[tuple[str, float]]:
    """Each task stem some rule's episodes say, with what ``etf / (etf + K1)`` is
    multiplied by."""
    return [
        (t, EPISODE_WEIGHT * idf(d, task.n) * task.q(t) * task.qtf[t] * (K1 + 1.0))
        for t, d in sorted(task.ep_df.items())
    ]


def pair_weights(task: TaskTerms) -> list[tuple[str, float]]:
    """Each task pair some rule says (version 3), with what a posting's
    ``tf / (tf + K1 x (1 - B + B x len / avglen))`` is multiplied by."""
    return [(p, idf(d, task.n) * task.pair_w[p] * (K1 + 1.0)) for p, d in sorted(task.pair_df.items())]


def candidates(
    conn: Any,
    task: TaskTerms,
    count: int,
    *,
    only: list[str] | None = None,
) -> list[tuple[str, float]]:
    """The ``count`` best (rule ID, score), scored in SQL (one pass over the postings).

    Query stems and their weights travel as one JSON parameter, so a long task never
    hits SQLite's limit on bound variables. Equal rules sum their contributions in the
    same order, so exact ties stay exact and are broken by rule ID here too; the final
    order is set by :func:`score_rules`'s exact sums (hence the caller's slack).
    ``only``: score these rules alone (:mod:`scarwarden.recall.prune` found them);
    ``count`` -1: every rule.
    """
    by_term = {
        "weights": weights(task),
        "ep_weights": episode_weights(task),
        "pair_weights": pair_weights(task),
    }
    # Branches the task cannot use are left out: each costs a pass over postings.
    restrict = " AND rule_id IN (SELECT value FROM json_each(:only))" if only is not None else ""
    postings = f"p.term = q.term{restrict.replace('rule_id', 'p.rule_id')}"
    hits = _tag_hits(task, restrict)
    sql = _sql(
        postings,
        restrict,
        hits,
        with_episodes=bool(by_term["ep_weights"]),
        with_pairs=bool(by_term["pair_weights"]),
        closest=task.closest,
    )
    params = _params(task, by_term, count, only)
    return [(row[0], float(row[1])) for row in conn.execute(sql, params)]


def _tag_hits(task: TaskTerms, restrict: str) -> str:
    """The tag branch: a rule whose tag's stems the task says in full gets the tag
    weight (times the least weight of those stems when some term weighs other than 1)."""
    return (
        f"""
            SELECT rule_id, :tag_weight * min(ql.w) FROM ql CROSS JOIN rule_tag_stems
            ON stem = ql.term{restrict} GROUP BY rule_id, tag HAVING count(*) = max(parts))"""
        if any(task.q(t) != 1.0 for t in task.qtf)
        else f"""
            SELECT rule_id, :tag_weight FROM rule_tag_stems
            WHERE stem IN (SELECT term FROM ql){restrict}
            GROUP BY rule_id, tag HAVING count(*) = max(parts))"""
    )


def _sql(
    postings: str, restrict: str, hits: str, *, with_episodes: bool, with_pairs: bool, closest: bool = True
) -> str:
    """The one statement: each rule's contributions (title and text postings, cited
    episodes' terms, pairs, tag hits) summed, best first. A pair's postings are read in
    full whatever ``postings`` restricts (pruning's partial sums count them exactly).
    ``closest`` (version 4): of the cited episodes' words, only the best episode's sum
    counts (before: every episode's words, summed per stem)."""
    episodes = (
        """
            UNION ALL
            SELECT rule_id, max(c) FROM (
                SELECT e.rule_id, sum(qe.w * e.etf / (e.etf + :k1)) AS c
                FROM qe CROSS JOIN e ON e.term = qe.term GROUP BY e.rule_id, e.episode_id)
            GROUP BY rule_id"""
        if closest
        else """
            UNION ALL
            SELECT e.rule_id, qe.w * e.etf / (e.etf + :k1)
            FROM qe CROSS JOIN e ON e.term = qe.term"""
    )
    by_episode = ", episode_id" if closest else ""
    pair_restrict = restrict.replace("rule_id", "pp.rule_id")
    pair_rows = f"""
            UNION ALL
            SELECT pp.rule_id, qp.w * pp.tf / (pp.tf + :base + :slope * pp.length)
            FROM qp CROSS JOIN rule_pair_terms AS pp ON pp.term = qp.term{pair_restrict}"""
    extra = (episodes if with_episodes else "") + (pair_rows if with_pairs else "")
    return f"""
        WITH q(term, w) AS (
            SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]')
            FROM json_each(:weights)),
        qe(term, w) AS (
            SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]')
            FROM json_each(:ep_weights)),
        qp(term, w) AS (
            SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]')
            FROM json_each(:pair_weights)),
        ql(term, w) AS (
            SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]')
            FROM json_each(:ledger)),
        e(term, rule_id{by_episode}, etf) AS (
            SELECT term, rule_id{by_episode}, sum(tf) FROM rule_episode_terms
            WHERE term IN (SELECT term FROM qe){restrict} GROUP BY term, rule_id{by_episode}),
        s(rule_id, c) AS (
            SELECT p.rule_id, q.w * p.tf / (p.tf + :base + :slope * p.length)
            FROM q CROSS JOIN rule_terms AS p ON {postings}{extra}
            UNION ALL{hits}
        SELECT rule_id, sum(c) AS score FROM s GROUP BY rule_id
        ORDER BY score DESC, rule_id LIMIT :count
    """


def _params(
    task: TaskTerms, by_term: dict[str, list[tuple[str, float]]], count: int, only: list[str] | None
) -> dict[str, Any]:
    """The statement's parameters; the stems, pairs and their weights as JSON (no
    bound-variable limit)."""
    return {
        **{name: json.dumps(rows) for name, rows in by_term.items()},
        "ledger": json.dumps([[t, task.q(t)] for t in sorted(task.qtf)]),
        "base": K1 * (1.0 - B),
        "slope": K1 * B / task.avg,
        "k1": K1,
        "tag_weight": TAG_WEIGHT,
        "count": count,
        "only": json.dumps(only or []),
    }
