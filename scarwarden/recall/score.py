"""Recall's arithmetic: the score that ranks, the confidence that routes.

Two numbers per rule (docs/recall.md works examples by hand). The **score** ranks::

    score(r) = sum over tag hits        TAG_WEIGHT
             + sum over shared stems t  idf(t) * qtf(t) * tf(t,r) * (K1 + 1)
                                        / (tf(t,r) + K1 * (1 - B + B * len(r) / avglen))
             + the words of the episodes r cites, and (version 3) the task's pairs of
               adjacent stems r says side by side (:mod:`scarwarden.recall.score_parts`;
               docs/recall.md has every term)

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

The **confidence** routes and the **evidence** counts the match in rare words
(:mod:`scarwarden.recall.formulas` defines both).

Every rule that can make the result carries its contributions (``tag:<tag>``,
``term:<stem>``, ``episode:<stem>``, ``pair:<a> <b>``) and the masses behind its
confidence (:func:`score_rules`); the score is the contributions' sum in that order,
rounded to :data:`DECIMALS` decimals.
"""

from __future__ import annotations

import json
import math
from collections import Counter

from scarwarden import text
from scarwarden.recall.formulas import (
    DECIMALS,
    confidence,
    idf,
    ledger_weight,
    length_share,
    pair_weight,
)
from scarwarden.recall.result import RecalledRule
from scarwarden.recall.rule_facts import RULE_FACTS
from scarwarden.recall.score_parts import (
    case_match,
    closest_episode,
    episode_matches,
    masses,
    of_episode,
    own_ledger_weights,
    pair_matches_of,
    tag_matches,
    term_matches,
)
from scarwarden.recall.score_reads import episode_words, load_json, pair_postings
from scarwarden.recall.task import TaskTerms
from scarwarden.recall.version import ALGORITHM

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from scarwarden.recall.score_reads import Counts


def task_terms(
    conn: Any, sequence: list[str], n: int, avg: float, tasks: int = 0, shared: bool = True
) -> TaskTerms:
    """Look up the task stems' document frequencies (in rules, in past tasks, in the
    rules' episodes) and its pairs' (in rules), and weigh the task; ``sequence``: the
    task's stems in order; ``tasks``: episodes in the ledger; ``shared``: whether two of
    them or more say some word."""
    qtf = Counter(sequence)
    tables = ["rule_term_df", "rule_episode_df"] + (["task_term_df"] if tasks else [])
    found = _frequencies(conn, sorted(qtf), tables, sorted(set(text.pairs(sequence))))
    return weigh_task(
        qtf,
        found["rule_term_df"],
        n,
        avg,
        found.get("task_term_df", {}),
        tasks,
        found["rule_episode_df"],
        shared,
        pair_df=found["rule_pair_df"],
    )


def _frequencies(
    conn: Any, stems: list[str], tables: list[str], pairs: list[str]
) -> dict[str, dict[str, int]]:
    """The task's stems' df in each of ``tables`` and its pairs' in ``rule_pair_df``,
    in one statement (four were a tenth of a short recall's fixed cost)."""
    out: dict[str, dict[str, int]] = {table: {} for table in [*tables, "rule_pair_df"]}
    if not stems:
        return out
    parts = [
        f"SELECT {i}, term, df FROM {table} WHERE term IN (SELECT value FROM json_each(:stems))"
        for i, table in enumerate(tables)
    ]
    if pairs:
        where = "term IN (SELECT value FROM json_each(:pairs))"
        parts.append(f"SELECT {len(tables)}, term, df FROM rule_pair_df WHERE {where}")
    names = [*tables, "rule_pair_df"]
    for i, term, df in conn.execute(
        " UNION ALL ".join(parts), {"stems": json.dumps(stems), "pairs": json.dumps(pairs)}
    ):
        if df:
            out[names[i]][term] = int(df)
    return out


def weigh_task(
    qtf: Counter[str],
    df: dict[str, int],
    n: int,
    avg: float,
    task_df: dict[str, int],
    tasks: int,
    ep_df: dict[str, int],
    shared: bool,
    *,
    pair_df: dict[str, int] | None = None,
    version: int = ALGORITHM,
) -> TaskTerms:
    """The task's side from its stems' document frequencies, wherever they were read
    (the index, or the gate's in-memory postings: :mod:`scarwarden.recall.pure_ledger`):
    ledger weights, the episode words kept (in at most half the rules' episodes), the
    task's mass; ``pair_df`` (version 3): the task's pairs some rule says, and their df
    (None or empty: version 2's arithmetic, no pair)."""
    ledger = {t: ledger_weight(d, tasks) for t, d in task_df.items()}
    task_mass = math.fsum(idf(df.get(t, 0), n) * ledger.get(t, 1.0) for t in qtf) if n else 0.0
    pair_df = {p: d for p, d in (pair_df or {}).items() if d}
    return TaskTerms(
        qtf=qtf,
        df=df,
        n=n,
        avg=avg,
        task_mass=task_mass,
        ledger=ledger,
        task_df=task_df,
        task_count=tasks,
        ep_df={t: d for t, d in ep_df.items() if 2 * d <= n},
        ledger_shared=bool(tasks and shared),
        pair_df=pair_df,
        pair_w={p: pair_weight(p, qtf, ledger) for p in sorted(pair_df)},
        version=version,
    )


def worth_explaining(found: list[tuple[str, float]], limit: int) -> list[str]:
    """The candidates that can still make the result (explaining costs a few queries):
    the first ``limit`` and those within floating-point noise of the ``limit``-th score.
    """
    if not found:
        return []
    cut = found[min(limit, len(found)) - 1][1]
    eps = 1e-9 * max(1.0, abs(cut))
    return [rule_id for rule_id, score in found if score >= cut - eps]


def explained(found: list[tuple[str, float]], limit: int, every: bool) -> list[str]:
    """The candidates scored exactly: all of ``found`` (version 6: the first pass's
    ``limit + slack`` best, since the same-case term can lift any of them), else
    :func:`worth_explaining`'s."""
    return [rule_id for rule_id, _score in found] if every else worth_explaining(found, limit)


def score_rules(
    conn: Any,
    ids: list[str],
    task: TaskTerms,
    counts: Counts | None = None,
    *,
    kept: tuple[str | None, ...] | None = None,
) -> list[RecalledRule]:
    """Exact contributions and confidences for the candidate rules, in a fixed order.
    ``counts``: where their stems' df and past tasks are read
    (:func:`~scarwarden.recall.score_reads.rule_stems`);
    ``kept``: the index state their task-free facts are kept under between recalls
    (:mod:`scarwarden.recall.rule_facts`; None: read them now, keep nothing)."""
    if not ids:
        return []
    facts = RULE_FACTS.read(conn, ids, kept, counts, task)
    id_json = json.dumps(ids)
    episodes = episode_words(conn, id_json, task.ep_df)
    pairs = pair_postings(conn, id_json, task.pair_df)
    out = []
    for rule_id, known in facts.items():
        title, body, tags, eps_json, length, repeated, written, own, own_tdf, parts, q, mass = known
        scored = _scored_rule(
            (rule_id, title, body, list(tags), eps_json),
            task,
            {term: (repeated.get(term, 1), length or 0) for term in task.df if term in written},
            dict(own),  # the rule's own copy: the kept one is never handed out
            parts,
            {},  # the rule's mass is known; a matched stem's idf is idf()'s, memoised
            own_task_df=own_tdf,
            episodes=episodes.get(rule_id, {}),
            pairs=pairs.get(rule_id, {}),
            length=length,
            known=(q, mass),
        )
        scored.said_stems = written
        out.append(scored)
    return out


def _scored_rule(
    row: tuple[Any, ...],
    task: TaskTerms,
    postings: dict[str, tuple[int, int]],
    own: dict[str, int],
    parts: dict[str, set[str]],
    weight: dict[int, float],
    *,
    own_task_df: dict[str, int] | None = None,
    episodes: dict[str, list[tuple[str, str, int]]] | None = None,
    pairs: dict[str, tuple[int, int]] | None = None,
    length: int | None = None,
    known: tuple[dict[str, float], tuple[list[float], float]] | None = None,  # rule_facts.py's q, mass
) -> RecalledRule:
    """One rule's contributions (tags, terms, words through its episodes, then pairs: the task's pairs
    it says -> (tf, length), none for version 2), score, confidence, evidence (``row``'s tags: JSON/list)."""
    rule_id, title, body, said_tags, eps_json = row
    tags = list(json.loads(said_tags)) if isinstance(said_tags, str) else said_tags
    total, hits, contributions = tag_matches(task, tags, parts, 0.0)
    total, matches = term_matches(task, postings, total)
    contributions.update({f"term:{m.stem}": m.contribution for m in matches})
    episodes = episodes or {}
    closest = closest_episode(task, episodes) if task.closest else None
    own_episode = of_episode(episodes, closest) if closest else episodes
    total, via = episode_matches(task, own_episode, total)
    contributions.update({f"episode:{e.stem}": e.contribution for e in via})
    total, pair_matches = pair_matches_of(task, pairs or {}, total)
    contributions.update({f"pair:{m.pair}": m.contribution for m in pair_matches})
    total, case = case_match(task, own_episode, closest, total)  # version 6
    contributions.update({f"case:{case.episode_id}": case.contribution} if case else {})
    matched = set(postings).union(*(parts[t] for t in hits))
    through = {e.stem for e in via} - matched  # found only through the rule's episodes
    q, own_mass = known if known is not None else (own_ledger_weights(task, own_task_df or {}), None)
    matched_mass, rule_mass, evidence = masses(task, own, weight, q, matched, through, own_mass)
    share = length_share(length, task.avg, task.long_rule) if task.closest else 1.0
    return RecalledRule(
        id=rule_id,
        title=title,
        text=body,
        score=round(total, DECIMALS),
        matched_tags=hits,
        matched_terms=[m.stem for m in matches],
        contributions=contributions,
        episode_ids=list(load_json(eps_json)),
        tags=tags,
        terms=matches,
        confidence=confidence(matched_mass, task.task_mass, rule_mass, share=share),
        matched_mass=matched_mass,
        rule_mass=rule_mass,
        evidence=round(evidence, DECIMALS),
        stem_df=own,  # sorted where shown (explain.py)
        matched_stems=sorted(matched),
        via_episodes=via,
        through_episodes=sorted(through),
        stem_ledger={s: v for s, v in q.items() if v != 1.0},  # only stems past tasks say
        pairs=pair_matches,
        closest_episode=closest,
        length_share=round(share, DECIMALS) if task.closest else None,
        case=case,
    )
