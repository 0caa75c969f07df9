"""Recall versions 2 and 3 in memory: a playbook blob plus a ledger tree, no index.

Version 2 (issue 13) ranks with the ledger as well as the playbook: a query word many
past tasks say weighs less (``task_count``, ``task_df``), a rule is also found through
the words of the episodes it cites (``ep_df`` and their postings), and the router never
gives ``ACT`` on a struggling rule alone (lineage). The engine reads all of it from the
index (:mod:`scarwarden.index.ledger_words`, :mod:`scarwarden.index.lineage`); the gate
never opens the index, so it re-derives a version-2 receipt here, from what it read in
git: the playbook at the receipt's blob (:class:`scarwarden.recall.pure.Postings`) and
the episodes at the receipt's ledger tree (:class:`LedgerStats`, built by
:mod:`scarwarden.gate.ledger`).

Exactly the engine's arithmetic: the SQL candidate query (:mod:`scarwarden.recall.
candidates`) rewritten over dictionaries, then the engine's own exact scoring
(:func:`scarwarden.recall.score._scored_rule`, fed the same postings the index holds),
the same ranking, router (:meth:`scarwarden.recall.result.RecallStats.route`) and
struggling-rule condition (:mod:`scarwarden.files.lineage_counts`).

Version 3 is version 2 plus the task's pairs of adjacent stems (``pair:<a> <b>``, read
from the playbook: :meth:`scarwarden.recall.pure.Postings.pair_tf`); given no pair, the
shared scoring is version 2's, so a version-2 receipt is re-derived here without pairs.
Reusing the scoring function, rather than copying it, keeps the engine and the gate
from drifting; ``tests/recall/test_pure_ledger.py`` checks that both agree on the
engine's version (verdicts, rankings, scores, confidences, contributions) and pins
this module's version-2 output, so a change to the shared arithmetic that moves
version 2 fails there: a later version that changes more than what the task adds must
freeze a copy here first. Nothing here imports the index or SQLite.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from scarwarden import text
from scarwarden.config import RecallSettings
from scarwarden.files.episodes import Episode
from scarwarden.files.rule_dates import RuleChange
from scarwarden.recall import evidence, router
from scarwarden.recall.candidates import episode_weights, pair_weights, weights
from scarwarden.recall.formulas import K1, TAG_WEIGHT, B, idf
from scarwarden.recall.ledger_stats import LedgerStats
from scarwarden.recall.pure import Postings
from scarwarden.recall.result import RecalledRule, RecallResult, RecallStats
from scarwarden.recall.score import TaskTerms, _scored_rule, explained, weigh_task

#: The recall algorithm versions this module reproduces: 2, 3 (version 2 plus the
#: pairs of adjacent stems, :func:`scarwarden.text.pairs`) and 4 (version 3 with the
#: closest cited episode instead of the sum over them, the capped rule mass, and the
#: evidence given with each rule) and 5 (version 4 with evidence that adds to the rule,
#: :mod:`scarwarden.recall.evidence`) and 6 (version 5 with the same-case term, every
#: first-pass candidate scored exactly), the newest.
VERSIONS = (2, 3, 4, 5, 6)
IMPLEMENTS = VERSIONS[-1]
#: The engine's slack: candidates scored beyond ``limit`` before the exact re-ranking.
_SLACK = 10
#: The episode fields whose words count under the rules that cite the episode
#: (:data:`scarwarden.index.ledger_words.FIELDS`).
FIELDS = ("task", "correction")


@dataclass
class EpisodeWords:
    """Under each active rule, the stems of the episodes it cites (the index's
    ``rule_episode_terms``), and in how many rules' episodes each stem occurs."""

    #: rule ID -> stem -> [(episode ID, field, tf)], sorted by episode then field.
    terms: dict[str, dict[str, list[tuple[str, str, int]]]] = field(default_factory=dict)
    df: Counter[str] = field(default_factory=Counter)
    #: Version 4's evidence: each cited episode's correction (None: none, or redacted).
    corrections: dict[str, str | None] = field(default_factory=dict)


def episode_words(book: Postings, cited: Mapping[str, Episode]) -> EpisodeWords:
    """The episode postings of ``book``'s active rules, from the ``cited`` episodes the
    ledger holds (a citation of an episode the ledger lacks adds nothing)."""
    out = EpisodeWords()
    stems: dict[str, dict[str, Counter[str]]] = {}
    for rule_id, rule in book.rules.items():
        own: dict[str, list[tuple[str, str, int]]] = {}
        for episode_id in sorted(set(rule.episode_ids)):
            ep = cited.get(episode_id)
            if ep is None:
                continue
            said = ep.get("correction")
            out.corrections[episode_id] = (
                None if ep.get("redacted") is not None or not isinstance(said, str) else said
            )
            if episode_id not in stems:
                values = (ep.task, ep.get("correction"))
                stems[episode_id] = {
                    f: Counter(text.stems(v))
                    for f, v in zip(FIELDS, values, strict=True)
                    if isinstance(v, str)
                }
            for where, counts in sorted(stems[episode_id].items()):
                for term, tf in counts.items():
                    own.setdefault(term, []).append((episode_id, where, tf))
        if own:
            out.terms[rule_id] = own
            out.df.update(own.keys())
    for own in out.terms.values():
        for places in own.values():
            places.sort(key=lambda p: (p[0], p[1]))
    return out


def recall_ledger(
    book: Postings,
    ledger: LedgerStats,
    words: EpisodeWords,
    task: str,
    *,
    settings: RecallSettings,
    changes: Callable[[], Mapping[str, RuleChange]],
    limit: int | None = None,
    algorithm: int = IMPLEMENTS,
    candidates: Callable[[list[RecalledRule], TaskTerms, Callable[[str], str | None]], list[Any]]
    | None = None,
) -> RecallResult:
    """Recall ``task`` as the engine of version ``algorithm`` (2 or 3) does over an
    index holding ``book`` and ``ledger`` (``changes``: when each rule last changed,
    asked only for a struggling check). ``candidates``: on ``ASK_HUMAN``, called with
    the ranking, the task and the cited episodes' corrections to give the result's
    candidates (:func:`scarwarden.recall.nearest.gate_candidates`)."""
    if algorithm not in VERSIONS:
        raise ValueError(f"recall version {algorithm} is not one this module reproduces")
    limit = settings.limit if limit is None else limit
    task = task.strip()
    sequence = text.stems(task)
    qtf = Counter(sequence)
    terms = _task_terms(book, ledger, words, qtf, sequence if algorithm >= 3 else [], algorithm)
    stats = terms.stats(settings)
    ranked: list[RecalledRule] = []
    if qtf and terms.n:
        found = _candidates(book, words, terms, limit + _SLACK)
        ranked = _score(book, ledger, words, terms, explained(found, limit, terms.same_case))
        ranked.sort(key=lambda r: (-r.score, r.id))
    verdict = _route(stats, ranked)
    verdict = _not_on_a_struggling_rule_alone(verdict, ranked, settings, ledger, changes)
    kept = router.returned(ranked, verdict, settings, version=algorithm)
    if terms.closest:
        weights = terms.stem_weights()
        for rule in kept[:limit]:
            said = evidence.rule_stems(rule.title, rule.text) if algorithm >= 5 else None
            chosen = evidence.choose(
                rule.closest_episode, rule.episode_ids, words.corrections.get, weights, said
            )
            rule.quotes = [chosen] if chosen else []
    result = RecallResult(task=task, verdict=verdict, playbook_commit=None, rules=kept[:limit], stats=stats)
    if candidates is not None and verdict == router.ASK_HUMAN:
        result.candidates = candidates(ranked, terms, words.corrections.get)
    return result


def _task_terms(
    book: Postings,
    ledger: LedgerStats,
    words: EpisodeWords,
    qtf: Counter[str],
    sequence: list[str],
    version: int = IMPLEMENTS,
) -> TaskTerms:
    """:func:`scarwarden.recall.score.task_terms`, over dictionaries (``sequence``: the
    task's stems in order for version 3's pairs; empty for version 2)."""
    tasks = ledger.task_count
    stems = sorted(qtf)
    return weigh_task(
        qtf,
        {t: book.df[t] for t in stems if book.df.get(t)},
        book.n,
        book.avg,
        {t: ledger.task_df[t] for t in stems if ledger.task_df.get(t)} if tasks else {},
        tasks,
        {t: words.df[t] for t in stems if words.df.get(t)},
        ledger.shared,
        pair_df={p: len(book.pair_tf(p)) for p in sorted(set(text.pairs(sequence)))},
        version=version,
    )


def _candidates(book: Postings, words: EpisodeWords, task: TaskTerms, count: int) -> list[tuple[str, float]]:
    """The SQL candidate query (:func:`scarwarden.recall.candidates.candidates`) in
    Python: the rules' own words, the words of their episodes, tag hits; best ``count``."""
    base, slope = K1 * (1.0 - B), K1 * B / task.avg
    scores: dict[str, float] = {}
    for stem, w in weights(task):
        for rule_id in book.by_stem.get(stem, ()):
            tf = book.tf[rule_id][stem]
            scores[rule_id] = scores.get(rule_id, 0.0) + w * tf / (tf + base + slope * book.length[rule_id])
    for rule_id, value in _episode_part(words, task).items():
        scores[rule_id] = scores.get(rule_id, 0.0) + value
    for pair, w in pair_weights(task):
        for rule_id, tf in book.pair_tf(pair).items():
            scores[rule_id] = scores.get(rule_id, 0.0) + w * tf / (tf + base + slope * book.length[rule_id])
    stems = task.qtf.keys()
    for rule_id in sorted({r for s in stems for r in book.by_tag_stem.get(s, ())}):
        for parts in book.tags[rule_id].values():
            if parts <= stems:
                value = TAG_WEIGHT * min(task.q(s) for s in parts)
                scores[rule_id] = scores.get(rule_id, 0.0) + value
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:count]


def _episode_part(words: EpisodeWords, task: TaskTerms) -> dict[str, float]:
    """Per rule, what its episodes' words add in the candidate query: summed over every
    cited episode (versions 2, 3), or the closest episode's sum (version 4)."""
    out: dict[str, float] = {}
    per_episode: dict[tuple[str, str], float] = {}
    for stem, w in episode_weights(task):
        for rule_id, own in words.terms.items():
            if stem not in own:
                continue
            if not task.closest:
                etf = sum(tf for _e, _f, tf in own[stem])
                out[rule_id] = out.get(rule_id, 0.0) + w * etf / (etf + K1)
                continue
            etfs: dict[str, int] = {}
            for episode_id, _f, tf in own[stem]:
                etfs[episode_id] = etfs.get(episode_id, 0) + tf
            for episode_id, etf in etfs.items():
                key = (rule_id, episode_id)
                per_episode[key] = per_episode.get(key, 0.0) + w * etf / (etf + K1)
    for (rule_id, _episode_id), value in per_episode.items():
        out[rule_id] = max(out.get(rule_id, 0.0), value)
    return out


def _score(
    book: Postings, ledger: LedgerStats, words: EpisodeWords, task: TaskTerms, ids: list[str]
) -> list[RecalledRule]:
    """The engine's exact scoring (:func:`scarwarden.recall.score.score_rules`), fed
    the postings the index would hold for these rules."""
    out = []
    for rule_id in ids:
        rule = book.rules[rule_id]
        tf = book.tf[rule_id]
        postings = {s: (tf[s], book.length[rule_id]) for s in tf if s in task.df}
        own = {s: book.df[s] for s in tf}
        parts = book.tags[rule_id]
        for stems in parts.values():
            for s in stems:
                own.setdefault(s, book.df.get(s, 0))
        tdf = (
            {s: ledger.task_df[s] for s in own if ledger.task_df.get(s, 0) > 1} if task.ledger_shared else {}
        )
        weight = {d: idf(d, task.n) for d in set(own.values())}
        episodes = (
            {s: places for s, places in words.terms.get(rule_id, {}).items() if s in task.ep_df}
            if task.ep_df
            else {}
        )
        row = (
            rule_id,
            rule.title,
            rule.text,
            json.dumps(list(rule.tags)),
            json.dumps(list(rule.episode_ids)),
        )
        pairs = {
            p: (book.pair_tf(p)[rule_id], book.length[rule_id])
            for p in task.pair_df
            if rule_id in book.pair_tf(p)
        }
        out.append(
            _scored_rule(
                row,
                task,
                postings,
                own,
                parts,
                weight,
                own_task_df=tdf,
                episodes=episodes,
                pairs=pairs,
                length=book.length[rule_id],
            )
        )
    return out


def _route(stats: RecallStats, ranked: list[RecalledRule]) -> str:
    """The engine's ``_route``: record the best rule's numbers and route on them."""
    if ranked:
        best = ranked[0]
        stats.best_score = best.score
        stats.best_tag_hits = len(best.matched_tags)
        stats.best_confidence = best.confidence
        stats.best_evidence = best.evidence
        stats.best_matched_words = len(best.matched_stems) + len(best.through_episodes)
        stats.best_rule_coverage = round(best.matched_mass / best.rule_mass, 4) if best.rule_mass else 0.0
        stats.best = best
    return stats.route()


def _not_on_a_struggling_rule_alone(
    verdict: str,
    ranked: list[RecalledRule],
    settings: RecallSettings,
    ledger: LedgerStats,
    changes: Callable[[], Mapping[str, RuleChange]],
) -> str:
    """:func:`scarwarden.recall.earned.not_on_a_struggling_rule_alone` over the ledger."""
    if verdict != router.ACT or not ranked:
        return verdict

    def struggling(rule_id: str) -> bool:
        # count(rule_id, changes().get(rule_id), ledger.applications(rule_id)).struggling,
        # from tallies: a rule's every application is not read (issue 30).
        standing = ledger.standing(rule_id)
        return standing.may_struggle() and standing.struggling(changes().get(rule_id))

    if not struggling(ranked[0].id):
        return verdict
    for rule in ranked[1:]:
        earns = router.route(rule.confidence, len(rule.matched_tags), rule.evidence, settings) == router.ACT
        if earns and not struggling(rule.id):
            return verdict
    return router.ACT_AND_FLAG
