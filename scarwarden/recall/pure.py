"""Recall over a parsed playbook, in memory: what the gate re-runs to prove a receipt.

The index-backed recall (:mod:`scarwarden.recall.engine`) reads postings from SQLite;
the gate never opens the index (it decides from git objects alone), so it re-runs recall
here, on the playbook read from the blob a receipt names. This module is a frozen
reference implementation of recall algorithm version :data:`IMPLEMENTS`: the same text
pipeline (:mod:`scarwarden.text`), the same idf, BM25 term and confidence functions
(:mod:`scarwarden.recall.score`), version 1's per-rule sums in the same order (a copy of
``score._scored_rule`` as it was), the same candidate cut (the engine scores
``limit + 10`` candidates and explains those that can still make the result), the same
ranking, and version 1's router. The engine has moved on (version 2 weighs words by the
ledger and the episodes rules cite, which a playbook blob alone cannot reproduce: the
gate re-derives it with :mod:`scarwarden.recall.pure_ledger`, over the ledger tree a
version-2 receipt names) without silently changing what old receipts prove.

``tests/recall/test_pure_recall.py`` pins this module's output to version 1's, and
checks that it agrees with the engine (verdicts, rankings, scores, confidences) on the
demo memory and on generated playbooks whenever
:data:`scarwarden.recall.version.ALGORITHM` equals :data:`IMPLEMENTS`. Nothing here
imports the index or SQLite: the import-linter contract ``gate-without-model-or-cache``
covers everything the gate imports.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

from scarwarden import text
from scarwarden.config import RecallSettings
from scarwarden.files import playbook as pb
from scarwarden.recall.formulas import DECIMALS, K1, TAG_WEIGHT, B, confidence, idf, term_contribution
from scarwarden.recall.result import RecalledRule, RecallResult, RecallStats, TermMatch
from scarwarden.recall.score import worth_explaining

_ACT, _ACT_AND_FLAG, _ASK_HUMAN = "ACT", "ACT_AND_FLAG", "ASK_HUMAN"


@dataclass(frozen=True)
class _Task:
    """The task's side of version 1's arithmetic (no ledger weights: those are version 2)."""

    qtf: Counter[str]
    df: dict[str, int]
    n: int
    avg: float
    task_mass: float


def _route(confidence: float | None, tag_hits: int, evidence: float, settings: RecallSettings) -> str:
    """Version 1's router (evidence in units of a rare word's idf, a weak match on one
    rare word's worth), frozen here: the engine's router has moved on."""
    if confidence is None:
        return _ASK_HUMAN
    if tag_hits >= settings.act_tag_hits:
        return _ACT
    if confidence >= settings.act_threshold and evidence >= settings.act_tag_hits:
        return _ACT
    if confidence >= settings.floor and (tag_hits >= 1 or evidence >= 1.0):
        return _ACT_AND_FLAG
    return _ASK_HUMAN


#: The recall algorithm version this module reproduces (version 2:
#: :mod:`scarwarden.recall.pure_ledger`). A receipt of a version no module reproduces
#: is reported as unverifiable by the gate.
IMPLEMENTS = 1

#: The engine's slack: candidates scored beyond ``limit`` before the exact re-ranking.
_SLACK = 10


@dataclass
class Postings:
    """A playbook's active rules as recall's postings (the index's rule tables, in memory)."""

    rules: dict[str, pb.Rule] = field(default_factory=dict)
    #: rule ID -> stem -> tf (title + text); rule ID -> its length in stems.
    tf: dict[str, Counter[str]] = field(default_factory=dict)
    length: dict[str, int] = field(default_factory=dict)
    #: stem -> the number of active rules whose title or text has it.
    df: Counter[str] = field(default_factory=Counter)
    #: stem -> rule IDs with a posting for it.
    by_stem: dict[str, list[str]] = field(default_factory=dict)
    #: rule ID -> tag -> its stems (tags made only of stopwords have none and never hit).
    tags: dict[str, dict[str, set[str]]] = field(default_factory=dict)
    #: stem -> rule IDs with a tag containing it.
    by_tag_stem: dict[str, set[str]] = field(default_factory=dict)
    #: rule ID -> (its stems with their df, its idf mass): the same for every task, so
    #: computed once per rule (the gate recalls thousands of tasks on one playbook).
    _own: dict[str, tuple[dict[str, int], float]] = field(default_factory=dict)
    _idf: dict[int, float] = field(default_factory=dict)
    _pair_tf: dict[str, dict[str, int]] = field(default_factory=dict)
    #: rule ID -> the stems of its title and of its text, in order (for the pairs).
    stems: dict[str, tuple[list[str], list[str]]] = field(default_factory=dict)

    def pair_tf(self, pair: str) -> dict[str, int]:
        """The active rules whose title or text says ``pair`` (``"a b"``: the two stems
        side by side), with how often: the index's ``rule_pair_terms`` for one pair.
        Found among the rules saying both stems, when a version-3 recall first asks for
        it (a playbook's pairs are many, a task's few; versions 1 and 2 never ask)."""
        found = self._pair_tf.get(pair)
        if found is None:
            a, b = pair.split(" ")
            rules = set(self.by_stem.get(a, ())).intersection(self.by_stem.get(b, ()))
            found = {}
            for rule_id in sorted(rules):
                tf = sum(text.pairs(seq).count(pair) for seq in self.stems[rule_id])
                if tf:
                    found[rule_id] = tf
            self._pair_tf[pair] = found
        return found

    def weight(self, df: int) -> float:
        if df not in self._idf:
            self._idf[df] = idf(df, self.n)
        return self._idf[df]

    def own(self, rule_id: str) -> tuple[dict[str, int], float]:
        """The rule's distinct stems (title, text, tags) with their df, and its mass."""
        if rule_id not in self._own:
            own = {s: self.df[s] for s in self.tf[rule_id]}
            for stems in self.tags[rule_id].values():
                for s in stems:
                    own.setdefault(s, self.df.get(s, 0))
            self._own[rule_id] = (own, math.fsum(self.weight(d) for d in own.values()))
        return self._own[rule_id]

    @property
    def n(self) -> int:
        return len(self.rules)

    @property
    def avg(self) -> float:
        total = sum(self.length.values())
        return total / self.n if self.n and total else 1.0


def postings(book: pb.Playbook) -> Postings:
    """Index ``book``'s active rules as :mod:`scarwarden.index.rules` does."""
    out = Postings()
    for rule in book.all_rules():
        if rule.retired:
            continue
        # The title's stems then the text's, as the index counts them
        # (index.rules.rule_terms), kept apart for version 3's pairs.
        fields = (text.stems(rule.title), text.stems(rule.text))
        terms = Counter(fields[0] + fields[1])
        out.rules[rule.id] = rule
        out.stems[rule.id] = fields
        out.tf[rule.id] = terms
        out.length[rule.id] = sum(terms.values())
        for stem in terms:
            out.df[stem] += 1
            out.by_stem.setdefault(stem, []).append(rule.id)
        own = out.tags.setdefault(rule.id, {})
        for tag in rule.tags:
            parts = text.tag_stems(tag)
            if parts:
                own[tag] = set(parts)
                for stem in parts:
                    out.by_tag_stem.setdefault(stem, set()).add(rule.id)
    return out


def recall_playbook(
    book: pb.Playbook | Postings, task: str, *, settings: RecallSettings, limit: int | None = None
) -> RecallResult:
    """Recall ``task`` against ``book`` with ``settings``: the engine's verdict and
    ranked rules (``playbook_commit`` is ``None``: the caller knows which playbook)."""
    index = book if isinstance(book, Postings) else postings(book)
    limit = settings.limit if limit is None else limit
    task = task.strip()
    qtf = Counter(text.stems(task))
    n, avg = index.n, index.avg
    df = {t: index.df[t] for t in sorted(qtf) if index.df.get(t)}
    terms = _Task(
        qtf=qtf, df=df, n=n, avg=avg, task_mass=math.fsum(idf(df.get(t, 0), n) for t in qtf) if n else 0.0
    )
    stats = RecallStats(
        rule_count=n,
        avg_length=avg,
        task_stems=dict(sorted(qtf.items())),
        unknown_stems=sorted(set(qtf) - set(df)),
        settings=settings,
        task_mass=terms.task_mass,
        task_df={t: df.get(t, 0) for t in sorted(qtf)},
    )
    ranked: list[RecalledRule] = []
    if qtf and n:
        found = _candidates(index, terms, limit + _SLACK)
        ranked = [_score(index, rule_id, terms) for rule_id in worth_explaining(found, limit)]
        ranked.sort(key=lambda r: (-r.score, r.id))
    if ranked:
        best = ranked[0]
        stats.best_score, stats.best_tag_hits = best.score, len(best.matched_tags)
        stats.best_confidence, stats.best_evidence, stats.best = best.confidence, best.evidence, best
    verdict = _route(stats.best_confidence, stats.best_tag_hits, stats.best_evidence, settings)
    kept = (
        []
        if verdict == _ASK_HUMAN
        else [
            r
            for r in ranked
            if r.confidence >= settings.floor or len(r.matched_tags) >= settings.act_tag_hits
        ]
    )
    return RecallResult(task=task, verdict=verdict, playbook_commit=None, rules=kept[:limit], stats=stats)


def _candidates(index: Postings, task: _Task, count: int) -> list[tuple[str, float]]:
    """The engine's SQL candidate query, in Python: approximate scores, best ``count``."""
    base, slope = K1 * (1.0 - B), K1 * B / task.avg
    scores: dict[str, float] = {}
    for stem, d in sorted(task.df.items()):
        w = idf(d, task.n) * task.qtf[stem] * (K1 + 1.0)
        for rule_id in index.by_stem.get(stem, ()):
            tf = index.tf[rule_id][stem]
            scores[rule_id] = scores.get(rule_id, 0.0) + w * tf / (tf + base + slope * index.length[rule_id])
    stems = task.qtf.keys()
    tagged = {r for s in stems for r in index.by_tag_stem.get(s, ())}
    for rule_id in tagged:
        hits = sum(1 for parts in index.tags[rule_id].values() if parts <= stems)
        if hits:
            scores[rule_id] = scores.get(rule_id, 0.0) + TAG_WEIGHT * hits
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:count]


def _score(index: Postings, rule_id: str, task: _Task) -> RecalledRule:
    """One candidate's exact contributions, score, confidence and evidence (version 1 of
    :func:`scarwarden.recall.score._scored_rule`: tags in the rule's order, then terms by
    stem; the unrounded sum rounded once; masses with ``math.fsum``)."""
    rule = index.rules[rule_id]
    tf, length = index.tf[rule_id], index.length[rule_id]
    parts = index.tags[rule_id]
    own, rule_mass = index.own(rule_id)
    hits = [t for t in rule.tags if t in parts and parts[t] <= task.qtf.keys()]
    contributions = {f"tag:{t}": TAG_WEIGHT for t in hits}
    total = TAG_WEIGHT * len(hits)  # exact: what the engine's repeated += gives
    matches = []
    for stem in sorted(s for s in tf if s in task.df):
        idf_value = idf(task.df[stem], task.n)
        value = term_contribution(idf_value, task.qtf[stem], tf[stem], length, task.avg)
        total += value
        matches.append(
            TermMatch(
                stem, task.qtf[stem], task.df[stem], idf_value, tf[stem], length, round(value, DECIMALS)
            )
        )
    matches.sort(key=lambda m: (-m.contribution, m.stem))
    contributions.update((f"term:{m.stem}", m.contribution) for m in matches)
    matched = {m.stem for m in matches}.union(*(parts[t] for t in hits))
    matched_mass = math.fsum(index.weight(own[s]) for s in matched)
    return RecalledRule(
        id=rule.id,
        title=rule.title,
        text=rule.text,
        score=round(total, DECIMALS),
        matched_tags=hits,
        matched_terms=[m.stem for m in matches],
        contributions=contributions,
        episode_ids=list(rule.episode_ids),
        tags=list(rule.tags),
        terms=matches,
        confidence=confidence(matched_mass, task.task_mass, rule_mass),
        matched_mass=matched_mass,
        rule_mass=rule_mass,
        evidence=round(matched_mass / idf(1, task.n), DECIMALS),
        stem_df=dict(sorted(own.items())),
        matched_stems=sorted(matched),
    )
