"""Recall's arithmetic: the score that ranks, the confidence that routes.

Two numbers per rule (docs/recall.md works examples by hand). The **score** ranks::

    score(r) = sum over tag hits        TAG_WEIGHT
             + sum over shared stems t  idf(t) * qtf(t) * tf(t,r) * (K1 + 1)
                                        / (tf(t,r) + K1 * (1 - B + B * len(r) / avglen))
             + the words of the episodes r cites, and (version 3) the task's pairs of
               adjacent stems r says side by side (:func:`_episode_matches`,
               :func:`_pair_matches`; docs/recall.md has every term)

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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scarwarden import text
from scarwarden.recall.formulas import (
    DECIMALS,
    EPISODE_WEIGHT,
    TAG_WEIGHT,
    confidence,
    episode_contribution,
    idf,
    ledger_weight,
    length_share,
    pair_weight,
    specificity,
    term_contribution,
)
from scarwarden.recall.result import EpisodeMatch, PairMatch, RecalledRule, RecallStats, TermMatch
from scarwarden.recall.score_reads import episode_words, pair_postings, read_tag_parts, rule_stems
from scarwarden.recall.version import ALGORITHM

if TYPE_CHECKING:
    from scarwarden.config import RecallSettings


@dataclass(frozen=True)
class TaskTerms:
    """The task's side of the arithmetic: its stems, and what the index knows of them."""

    qtf: Counter[str]
    #: df of the task stems some active rule contains (the others are absent: df 0).
    df: dict[str, int]
    #: Active rules (N) and their average length in stems (avglen).
    n: int
    avg: float
    #: Sum of idf x ledger weight over the task's distinct stems.
    task_mass: float
    #: Ledger weight of each task stem (:func:`ledger_weight`; absent: 1.0), how many
    #: past tasks say it, and how many tasks the ledger holds.
    ledger: dict[str, float] = field(default_factory=dict)
    task_df: dict[str, int] = field(default_factory=dict)
    task_count: int = 0
    #: For the task stems found in the episodes some rule cites: in how many rules'
    #: episodes (stems in more than half the rules' episodes are left out).
    ep_df: dict[str, int] = field(default_factory=dict)
    #: Whether two past tasks or more say some word (else no rule stem's weight is
    #: below 1, and the rules' stems are not looked up in the ledger).
    ledger_shared: bool = False
    #: Version 3: the task's pairs of adjacent stems that some active rule says too ->
    #: in how many rules; and each one's weight (:func:`pair_weight`).
    pair_df: dict[str, int] = field(default_factory=dict)
    pair_w: dict[str, float] = field(default_factory=dict)
    #: The recall algorithm version whose arithmetic applies: 4 ranks a rule by its
    #: single closest cited episode (not the sum over them), and a long rule's mass
    #: counts as :data:`scarwarden.recall.formulas.LONG_RULE` x the average rule's.
    version: int = ALGORITHM

    @property
    def closest(self) -> bool:
        """Version 4: one episode (the closest) counts, and long rules are not punished."""
        return self.version >= 4

    def q(self, stem: str) -> float:
        return self.ledger.get(stem, 1.0)

    def stem_weights(self) -> dict[str, float]:
        """Each task stem's idf x ledger weight (what the evidence's sentences are
        chosen by)."""
        return {t: idf(self.df.get(t, 0), self.n) * self.q(t) for t in sorted(self.qtf)}

    def stats(self, settings: RecallSettings) -> RecallStats:
        """What the explanation shows of the task's side: its stems, their df, the ledger."""
        return RecallStats(
            rule_count=self.n,
            avg_length=self.avg,
            task_stems=dict(sorted(self.qtf.items())),
            unknown_stems=sorted(set(self.qtf) - set(self.df)),
            settings=settings,
            task_mass=self.task_mass,
            task_df={t: self.df.get(t, 0) for t in sorted(self.qtf)},
            task_count=self.task_count,
            ledger_df=dict(sorted(self.task_df.items())),
            ledger=dict(sorted(self.ledger.items())),
        )


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


def score_rules(conn: Any, ids: list[str], task: TaskTerms) -> list[RecalledRule]:
    """Exact contributions and confidences for the candidate rules, in a fixed order."""
    if not ids:
        return []
    id_json = json.dumps(ids)
    lengths: dict[str, int] = {}
    postings, stem_df, stem_tdf = rule_stems(conn, id_json, ids, task.df, task.ledger_shared, lengths)
    tag_parts = read_tag_parts(conn, id_json, stem_df, stem_tdf, task.ledger_shared)
    episodes = episode_words(conn, id_json, task.ep_df)
    pairs = pair_postings(conn, id_json, task.pair_df)
    # A rule has dozens of stems but they share a handful of df values.
    weight = {d: idf(d, task.n) for d in {d for own in stem_df.values() for d in own.values()}}
    out = []
    for row in conn.execute(
        "SELECT id, title, text, tags, episode_ids FROM rules WHERE id IN (SELECT value FROM json_each(?))",
        (id_json,),
    ):
        rule_id = row[0]
        out.append(
            _scored_rule(
                row,
                task,
                postings[rule_id],
                stem_df[rule_id],
                tag_parts.get(rule_id, {}),
                weight,
                own_task_df=stem_tdf[rule_id],
                episodes=episodes.get(rule_id, {}),
                pairs=pairs.get(rule_id, {}),
                length=lengths.get(rule_id),
            )
        )
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
) -> RecalledRule:
    """One rule's contributions (tags first, then terms by contribution, then words
    found through its episodes, then pairs: ``pairs``, the task's pairs the rule says ->
    (tf, length), none for version 2), score, confidence and evidence."""
    rule_id, title, body, tags_json, eps_json = row
    tags = list(json.loads(tags_json))
    hits = [t for t in tags if t in parts and parts[t] <= task.qtf.keys()]
    contributions: dict[str, float] = {}
    total = 0.0
    for tag in hits:
        value = TAG_WEIGHT * min(task.q(s) for s in parts[tag])
        contributions[f"tag:{tag}"] = round(value, DECIMALS)
        total += value
    total, matches = _term_matches(task, postings, total)
    contributions.update({f"term:{m.stem}": m.contribution for m in matches})
    episodes = episodes or {}
    closest = closest_episode(task, episodes) if task.closest else None
    if closest is not None:
        episodes = _of_episode(episodes, closest)
    total, via = _episode_matches(task, episodes, total)
    contributions.update({f"episode:{e.stem}": e.contribution for e in via})
    total, pair_matches = _pair_matches(task, pairs or {}, total)
    contributions.update({f"pair:{m.pair}": m.contribution for m in pair_matches})
    matched = set(postings).union(*(parts[t] for t in hits))
    through = {e.stem for e in via} - matched  # found only through the rule's episodes
    q = _own_ledger_weights(task, own_task_df or {})
    matched_mass, rule_mass, evidence = _masses(task, own, weight, q, matched, through)
    share = length_share(length, task.avg) if task.closest else 1.0
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
        confidence=confidence(matched_mass, task.task_mass, rule_mass, share=share),
        matched_mass=matched_mass,
        rule_mass=rule_mass,
        evidence=round(evidence, DECIMALS),
        stem_df=dict(sorted(own.items())),
        matched_stems=sorted(matched),
        via_episodes=via,
        through_episodes=sorted(through),
        stem_ledger={s: v for s, v in sorted(q.items()) if v != 1.0},  # only stems past tasks say
        pairs=pair_matches,
        closest_episode=closest,
        length_share=round(share, DECIMALS) if task.closest else None,
    )


def _term_matches(
    task: TaskTerms, postings: dict[str, tuple[int, int]], total: float
) -> tuple[float, list[TermMatch]]:
    """``total`` plus each shared stem's contribution, added in stem order (the sum is
    pinned: never reorder it), and the matches, by contribution."""
    matches = []
    for stem, (tf, length) in sorted(postings.items()):
        idf_value = idf(task.df[stem], task.n)
        value = term_contribution(idf_value, task.qtf[stem], tf, length, task.avg) * task.q(stem)
        total += value
        matches.append(
            TermMatch(stem, task.qtf[stem], task.df[stem], idf_value, tf, length, round(value, DECIMALS))
        )
    matches.sort(key=lambda m: (-m.contribution, m.stem))
    return total, matches


def _episode_matches(
    task: TaskTerms, episodes: dict[str, list[tuple[str, str, int]]], total: float
) -> tuple[float, list[EpisodeMatch]]:
    """``total`` plus each word found through the rule's episodes, added in stem order,
    and those matches, by contribution. Version 4: only the words of the rule's closest
    cited episode (:func:`closest_episode`) count, so a rule that cites many episodes
    does not win by their number."""
    via = []
    for stem, where in sorted(episodes.items()):
        etf = sum([tf for _, _, tf in where])
        idf_value = idf(task.ep_df[stem], task.n)
        value = episode_contribution(idf_value, task.q(stem), task.qtf[stem], etf)
        total += value
        via.append(
            EpisodeMatch(
                stem, task.qtf[stem], task.ep_df[stem], idf_value, etf, where, round(value, DECIMALS)
            )
        )
    via.sort(key=lambda m: (-m.contribution, m.stem))
    return total, via


def _episode_value(task: TaskTerms, stem: str, etf: int) -> float:
    return episode_contribution(idf(task.ep_df[stem], task.n), task.q(stem), task.qtf[stem], etf)


def episode_sums(task: TaskTerms, episodes: dict[str, list[tuple[str, str, int]]]) -> dict[str, float]:
    """What the words of each cited episode add (its task and correction), per episode."""
    by_episode: dict[str, dict[str, int]] = {}
    for stem, where in episodes.items():
        for episode_id, _field, tf in where:
            own = by_episode.setdefault(episode_id, {})
            own[stem] = own.get(stem, 0) + tf
    return {
        ep: math.fsum(_episode_value(task, stem, etf) for stem, etf in sorted(own.items()))
        for ep, own in by_episode.items()
    }


def closest_episode(task: TaskTerms, episodes: dict[str, list[tuple[str, str, int]]]) -> str | None:
    """The cited episode whose words add the most to the task (ties: the smaller ID)."""
    sums = episode_sums(task, episodes)
    return min(sums, key=lambda ep: (-sums[ep], ep)) if sums else None


def _of_episode(
    episodes: dict[str, list[tuple[str, str, int]]], episode_id: str | None
) -> dict[str, list[tuple[str, str, int]]]:
    """The stems of one episode, with where that episode says them."""
    out: dict[str, list[tuple[str, str, int]]] = {}
    for stem, where in episodes.items():
        mine = [w for w in where if w[0] == episode_id]
        if mine:
            out[stem] = mine
    return out


def _pair_matches(
    task: TaskTerms, pairs: dict[str, tuple[int, int]], total: float
) -> tuple[float, list[PairMatch]]:
    """``total`` plus each shared pair's contribution (BM25 of the pair's tf, idf over
    the rules saying it, times its weight in the task), added in pair order, and the
    matches, by contribution. Pairs rank; the confidence and evidence ignore them."""
    matches = []
    for pair, (tf, length) in sorted(pairs.items()):
        idf_value = idf(task.pair_df[pair], task.n)
        weight = task.pair_w[pair]
        value = term_contribution(idf_value, 1, tf, length, task.avg) * weight
        total += value
        matches.append(
            PairMatch(
                pair,
                round(weight, DECIMALS),
                task.pair_df[pair],
                idf_value,
                tf,
                length,
                round(value, DECIMALS),
            )
        )
    matches.sort(key=lambda m: (-m.contribution, m.pair))
    return total, matches


def _own_ledger_weights(task: TaskTerms, own_task_df: dict[str, int]) -> dict[str, float]:
    """Ledger weights of the rule's own stems: 1.0 (absent) unless past tasks say them."""
    q: dict[str, float] = {}
    if task.task_count:
        # A long rule has hundreds of stems but they share a few task counts.
        memo: dict[int, float] = {}
        for s, d in own_task_df.items():
            weight_d = memo.get(d)
            if weight_d is None:
                weight_d = memo[d] = ledger_weight(d, task.task_count)
            q[s] = weight_d
    return q


def _masses(
    task: TaskTerms,
    own: dict[str, int],
    weight: dict[int, float],
    q: dict[str, float],
    matched: set[str],
    through: set[str],
) -> tuple[float, float, float]:
    """The matched mass, the rule's mass and the evidence (confidence's inputs)."""
    n = task.n

    def w(stem: str) -> float:  # a matched stem's idf x ledger weight
        d = own.get(stem, task.df.get(stem, 0))
        return (weight[d] if d in weight else idf(d, n)) * q.get(stem, task.q(stem))

    # fsum is correctly rounded whatever the order: the masses are byte-stable.
    extra = [EPISODE_WEIGHT * w(s) for s in through]
    matched_mass = math.fsum([w(s) for s in matched] + extra)
    rule_mass = math.fsum([weight[d] * q.get(s, 1.0) for s, d in own.items()] + extra)
    evidence = math.fsum(
        [specificity(own[s], n) * q.get(s, 1.0) for s in matched]
        + [EPISODE_WEIGHT * specificity(task.df.get(s, 0), n) * task.q(s) for s in through]
    )
    return matched_mass, rule_mass, evidence
