"""One rule's parts of recall's arithmetic (:func:`scarwarden.recall.score.score_rules`):
the tags it hits, the task stems it shares, the words found through its closest cited
episode, the task's pairs it says, and the masses behind its confidence. Split from
:mod:`scarwarden.recall.score` (the formulas are documented there and in docs/recall.md).
"""

from __future__ import annotations

import math

from scarwarden.recall.formulas import (
    DECIMALS,
    EPISODE_WEIGHT,
    TAG_WEIGHT,
    episode_contribution,
    idf,
    ledger_weight,
    same_case,
    specificity,
    term_contribution,
)
from scarwarden.recall.result import CaseMatch, EpisodeMatch, PairMatch, TermMatch

TYPE_CHECKING = False
if TYPE_CHECKING:
    from scarwarden.recall.task import TaskTerms


def tag_matches(
    task: TaskTerms, tags: list[str], parts: dict[str, set[str]], total: float
) -> tuple[float, list[str], dict[str, float]]:
    """``total`` plus :data:`TAG_WEIGHT` (x the tag's weakest ledger weight) per tag hit:
    a rule tag whose stems are all among the task's; the hits and their contributions."""
    hits = [t for t in tags if t in parts and parts[t] <= task.qtf.keys()]
    contributions: dict[str, float] = {}
    for tag in hits:
        value = TAG_WEIGHT * min(task.q(s) for s in parts[tag])
        contributions[f"tag:{tag}"] = round(value, DECIMALS)
        total += value
    return total, hits, contributions


def term_matches(
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


def episode_matches(
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


def episode_value(task: TaskTerms, stem: str, etf: int) -> float:
    return episode_contribution(idf(task.ep_df[stem], task.n), task.q(stem), task.qtf[stem], etf)


def episode_sums(task: TaskTerms, episodes: dict[str, list[tuple[str, str, int]]]) -> dict[str, float]:
    """What the words of each cited episode add (its task and correction), per episode."""
    by_episode: dict[str, dict[str, int]] = {}
    for stem, where in episodes.items():
        for episode_id, _field, tf in where:
            own = by_episode.setdefault(episode_id, {})
            own[stem] = own.get(stem, 0) + tf
    return {
        ep: math.fsum(episode_value(task, stem, etf) for stem, etf in sorted(own.items()))
        for ep, own in by_episode.items()
    }


def closest_episode(task: TaskTerms, episodes: dict[str, list[tuple[str, str, int]]]) -> str | None:
    """The cited episode whose words add the most to the task (ties: the smaller ID)."""
    sums = episode_sums(task, episodes)
    return min(sums, key=lambda ep: (-sums[ep], ep)) if sums else None


def of_episode(
    episodes: dict[str, list[tuple[str, str, int]]], episode_id: str | None
) -> dict[str, list[tuple[str, str, int]]]:
    """The stems of one episode, with where that episode says them."""
    out: dict[str, list[tuple[str, str, int]]] = {}
    for stem, where in episodes.items():
        mine = [w for w in where if w[0] == episode_id]
        if mine:
            out[stem] = mine
    return out


def case_match(
    task: TaskTerms, episodes: dict[str, list[tuple[str, str, int]]], closest: str | None, total: float
) -> tuple[float, CaseMatch | None]:
    """``total`` plus the same-case term (version 6; older: ``total``, None): ``episodes``, the words of the
    rule's closest cited episode ``closest``; the task stems its *task* says, their idf
    x ledger weight over the task's mass is the share (:func:`same_case`)."""
    stems = sorted(s for s, where in episodes.items() if any(f == "task" for _e, f, _tf in where))
    if not task.same_case or closest is None or not stems or task.task_mass <= 0.0:
        return total, None
    said = math.fsum(idf(task.df.get(s, 0), task.n) * task.q(s) for s in stems)
    share = min(1.0, said / task.task_mass)
    value = same_case(share, task.task_mass)
    match = CaseMatch(closest, stems, round(said, DECIMALS), round(share, DECIMALS), round(value, DECIMALS))
    return total + value, match


def pair_matches_of(
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


def own_ledger_weights(
    task: TaskTerms, own_task_df: dict[str, int], memo: dict[int, float] | None = None
) -> dict[str, float]:
    """Ledger weights of the rule's own stems: 1.0 (absent) unless past tasks say them.
    ``memo``: task count -> weight, shared by the rules of one recall (a long rule has
    hundreds of stems, a recall's candidates thousands, but they share a few counts)."""
    if not task.task_count:
        return {}
    memo = {} if memo is None else memo
    for d in set(own_task_df.values()).difference(memo):
        memo[d] = ledger_weight(d, task.task_count)
    return {s: memo[d] for s, d in own_task_df.items()}


def masses(
    task: TaskTerms,
    own: dict[str, int],
    weight: dict[int, float],
    q: dict[str, float],
    matched: set[str],
    through: set[str],
    own_mass: tuple[list[float], float] | None = None,
) -> tuple[float, float, float]:
    """The matched mass, the rule's mass and the evidence (confidence's inputs).
    ``own_mass``: the rule's stems' shares of its mass (``weight[df] x q``, in ``own``'s
    order) and their sum, when known (:mod:`scarwarden.recall.rule_facts`)."""
    n = task.n
    ledger = task.ledger

    def w(stem: str) -> float:  # a matched stem's idf x ledger weight
        d = own.get(stem)
        if d is None:
            d = task.df.get(stem, 0)
        weight_q = q.get(stem)
        if weight_q is None:
            weight_q = ledger.get(stem, 1.0)
        return (weight[d] if d in weight else idf(d, n)) * weight_q

    # fsum is correctly rounded whatever the order: the masses are byte-stable.
    extra = [EPISODE_WEIGHT * w(s) for s in through]
    matched_mass = math.fsum([w(s) for s in matched] + extra)
    if own_mass is None:
        rule_mass = math.fsum([weight[d] * q.get(s, 1.0) for s, d in own.items()] + extra)
    else:  # the same correctly rounded sum of the same terms
        rule_mass = math.fsum(own_mass[0] + extra) if extra else own_mass[1]
    evidence = math.fsum(
        [specificity(own[s], n) * q.get(s, 1.0) for s in matched]
        + [EPISODE_WEIGHT * specificity(task.df.get(s, 0), n) * task.q(s) for s in through]
    )
    return matched_mass, rule_mass, evidence
