"""Recall's first pass: the best candidates for a task, scored in one SQL statement.

The same arithmetic as :mod:`scarwarden.recall.score` (which recomputes the exact
contributions of the candidates that can make the result), summed by SQLite over the
postings, so a query never loads a rule it will not return.
"""

from __future__ import annotations

import json
from typing import Any

from scarwarden.recall.score import EPISODE_WEIGHT, K1, TAG_WEIGHT, B, TaskTerms, idf


def candidates(conn: Any, task: TaskTerms, count: int) -> list[tuple[str, float]]:
    """The ``count`` best (rule ID, score), scored in SQL (one pass over the postings).

    Query stems and their weights travel as one JSON parameter, so a long task never
    hits SQLite's limit on bound variables. Equal rules sum their contributions in the
    same order, so exact ties stay exact and are broken by rule ID here too; the final
    order is set by :func:`score_rules`'s exact sums (hence the caller's slack).
    """
    weights = [[t, idf(d, task.n) * task.q(t) * task.qtf[t] * (K1 + 1.0)] for t, d in sorted(task.df.items())]
    ep_weights = [
        [t, EPISODE_WEIGHT * idf(d, task.n) * task.q(t) * task.qtf[t] * (K1 + 1.0)]
        for t, d in sorted(task.ep_df.items())
    ]
    # Branches the task cannot use are left out: each costs a pass over postings.
    episodes = """
            UNION ALL
            SELECT e.rule_id, qe.w * e.etf / (e.etf + :k1)
            FROM qe CROSS JOIN e ON e.term = qe.term"""
    tags = (
        """
            SELECT rule_id, :tag_weight * min(ql.w) FROM ql CROSS JOIN rule_tag_stems
            ON stem = ql.term GROUP BY rule_id, tag HAVING count(*) = max(parts))"""
        if any(task.q(t) != 1.0 for t in task.qtf)
        else """
            SELECT rule_id, :tag_weight FROM rule_tag_stems
            WHERE stem IN (SELECT term FROM ql)
            GROUP BY rule_id, tag HAVING count(*) = max(parts))"""
    )
    sql = f"""
        WITH q(term, w) AS (
            SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]')
            FROM json_each(:weights)),
        qe(term, w) AS (
            SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]')
            FROM json_each(:ep_weights)),
        ql(term, w) AS (
            SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]')
            FROM json_each(:ledger)),
        e(term, rule_id, etf) AS (
            SELECT term, rule_id, sum(tf) FROM rule_episode_terms
            WHERE term IN (SELECT term FROM qe) GROUP BY term, rule_id),
        s(rule_id, c) AS (
            SELECT p.rule_id, q.w * p.tf / (p.tf + :base + :slope * p.length)
            FROM q CROSS JOIN rule_terms AS p ON p.term = q.term{episodes if ep_weights else ""}
            UNION ALL{tags}
        SELECT rule_id, sum(c) AS score FROM s GROUP BY rule_id
        ORDER BY score DESC, rule_id LIMIT :count
    """
    params = {
        "weights": json.dumps(weights),
        "ep_weights": json.dumps(ep_weights),
        "ledger": json.dumps([[t, task.q(t)] for t in sorted(task.qtf)]),
        "base": K1 * (1.0 - B),
        "slope": K1 * B / task.avg,
        "k1": K1,
        "tag_weight": TAG_WEIGHT,
        "count": count,
    }
    return [(row[0], float(row[1])) for row in conn.execute(sql, params)]
