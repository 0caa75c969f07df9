"""What recall returns: the recalled rules, the numbers behind them, the verdict.

Plain data, in a module of its own so that everything that reads a recall (the recall
log, ``--explain``, the answer pipeline, the web UI and MCP) imports these types without
importing the engine that computes them.
"""

from __future__ import annotations

import json

from scarwarden.config import RecallSettings
from scarwarden.files.receipt import Receipt
from scarwarden.recall import router
from scarwarden.recall.evidence import Candidate, Evidence
from scarwarden.records import field, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from scarwarden.files.lineage_counts import Lineage


@record(frozen=True)
class TermMatch:
    """The arithmetic behind one ``term:<stem>`` contribution (for ``--explain``)."""

    stem: str
    qtf: int
    df: int
    idf: float
    tf: int
    length: int
    contribution: float


@record(frozen=True)
class EpisodeMatch:
    """An ``episode:<stem>`` contribution: a task stem found in the words of the
    episodes the rule cites, with where (episode ID, field, tf) and the arithmetic."""

    stem: str
    qtf: int
    #: In how many rules' episodes the stem occurs (its idf is over the rules, N).
    df: int
    idf: float
    #: Total tf over the cited episodes' fields.
    etf: int
    via: list[tuple[str, str, int]]
    contribution: float

    def to_json(self) -> dict[str, Any]:
        return {
            "stem": self.stem,
            "contribution": self.contribution,
            "via": [{"episode": ep, "field": where, "tf": tf} for ep, where, tf in self.via],
        }

    def why(self) -> str:
        """``term checkout via ep-a task, ep-b correction``."""
        return f"term {self.stem} via " + ", ".join(f"{ep} {where}" for ep, where, _ in self.via)


@record(frozen=True)
class PairMatch:
    """A ``pair:<a> <b>`` contribution (recall version 3): two stems the task says side
    by side, said side by side in the rule's title or text too; ranking only."""

    pair: str
    #: The pair's weight in the task: the lesser of its two stems' qtf x ledger weight.
    weight: float
    #: How many active rules say the pair (its idf is over the rules, N).
    df: int
    idf: float
    tf: int
    length: int
    contribution: float

    def to_json(self) -> dict[str, Any]:
        return {
            "pair": self.pair,
            "weight": self.weight,
            "df": self.df,
            "tf": self.tf,
            "contribution": self.contribution,
        }


@record(frozen=True)
class CaseMatch:
    """The ``case:<episode>`` contribution (recall version 6): how much of the task the
    rule's closest cited episode's task says (``share`` of the task's mass), as
    ``CASE_WEIGHT x share ** CASE_POWER x task_mass``; ranking only."""

    episode_id: str
    #: The task stems that episode's task says (among those episode words count for).
    stems: list[str]
    #: Their idf x ledger weight summed, and that over the task's mass (0 to 1).
    said: float
    share: float
    contribution: float

    def to_json(self) -> dict[str, Any]:
        return {
            "episode": self.episode_id,
            "stems": list(self.stems),
            "said_mass": self.said,
            "share": self.share,
            "contribution": self.contribution,
        }


@record
class RecalledRule:
    """One recalled rule, with why it matched."""

    id: str
    title: str
    text: str
    score: float
    matched_tags: list[str]
    matched_terms: list[str]
    contributions: dict[str, float]
    episode_ids: list[str]
    tags: list[str] = field(default_factory=list)
    terms: list[TermMatch] = field(default_factory=list)
    #: ``matched_mass / sqrt(task_mass * rule_mass)``, rounded (what the router reads).
    confidence: float = 0.0
    #: Sum of idf over the task stems this rule matches (terms and tag parts).
    matched_mass: float = 0.0
    #: Sum of idf over the distinct stems of the rule's title, text and tags.
    rule_mass: float = 0.0
    #: ``matched_mass / idf(df=1)``, rounded: the match counted in rare words (stems
    #: found in one rule only); the router wants ``act_tag_hits`` of them to act.
    evidence: float = 0.0
    #: The rule's distinct stems (title, text, tags) with their df, for ``--explain``.
    stem_df: dict[str, int] = field(default_factory=dict)
    #: The task stems it matches (in its title or text, or part of a tag that hits).
    matched_stems: list[str] = field(default_factory=list)
    #: Task stems found in the words of the episodes the rule cites (by contribution).
    via_episodes: list[EpisodeMatch] = field(default_factory=list)
    #: Those of them its own title, text and tags do not match (they weigh in the
    #: confidence and the evidence at EPISODE_WEIGHT).
    through_episodes: list[str] = field(default_factory=list)
    #: Ledger weights below 1 of the rule's stems (words many past tasks say).
    stem_ledger: dict[str, float] = field(default_factory=dict)
    #: The cited episodes that were redacted (``scarwarden redact``): evidence gone.
    evidence_redacted: list[str] = field(default_factory=list)
    #: Pairs of adjacent task stems the rule says side by side (by contribution).
    pairs: list[PairMatch] = field(default_factory=list)
    #: Version 4: the share of its mass the confidence counted (< 1 for a rule longer
    #: than LONG_RULE x the average; :func:`scarwarden.recall.formulas.length_share`).
    length_share: float | None = None
    #: Version 4: the cited episode whose words add most to the task (None: none do).
    closest_episode: str | None = None
    #: Version 4: sentences of its closest cited episode's correction (``evidence`` in
    #: JSON; :mod:`scarwarden.recall.evidence`); empty when no cited episode has one.
    quotes: list[Evidence] = field(default_factory=list)
    #: Version 6: the same-case term (None: older versions, or no task word said).
    case: CaseMatch | None = None
    #: How the rule has fared (:func:`scarwarden.recall.standing.standing`), when read.
    lineage: dict[str, Any] | None = None
    #: The stems of its title and text, when scoring read them from the index (what
    #: its evidence need not repeat: :func:`scarwarden.recall.evidence.rule_stems`).
    said_stems: frozenset[str] | None = field(default=None, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "text": self.text,
            "score": self.score,
            "matched_tags": list(self.matched_tags),
            "matched_terms": list(self.matched_terms),
            "contributions": dict(self.contributions),
            "episode_ids": list(self.episode_ids),
            **({"evidence_redacted": list(self.evidence_redacted)} if self.evidence_redacted else {}),
            "confidence": self.confidence,
            "matched_via_episodes": [e.to_json() for e in self.via_episodes],
            "matched_pairs": [p.to_json() for p in self.pairs],
            "evidence": [q.to_json() for q in self.quotes],
            **({"lineage": dict(self.lineage)} if self.lineage is not None else {}),
        }

    def why(self, words: dict[str, str] | None = None) -> str:
        """One line: the tags and words that matched and what each contributed, the
        task's words as it wrote them (``words``: stem -> word; stems otherwise)."""
        said = words or {}

        def w(stem: str) -> str:
            return said.get(stem, stem)

        parts = [f"tag {t} +{self.contributions['tag:' + t]:g}" for t in self.matched_tags]
        parts += [f"word {w(s)} +{self.contributions['term:' + s]:g}" for s in self.matched_terms]
        parts += [
            f"word {w(e.stem)} via "
            + ", ".join(f"{ep} {where}" for ep, where, _ in e.via)
            + f" +{e.contribution:g}"
            for e in self.via_episodes
        ]
        parts += [
            f"words {' '.join(w(s) for s in p.pair.split(' '))} +{p.contribution:g}" for p in self.pairs
        ]
        if self.case is not None:
            parts.append(
                f"same case as {self.case.episode_id} ({self.case.share:.0%}) +{self.case.contribution:g}"
            )
        return ", ".join(parts) or "nothing"

    def citation(self) -> str:
        """The inline citation an answer uses: ``[PB-01, learnt in ep-a, ep-b]``."""
        return f"[{self.id}, learnt in {', '.join(self.episode_ids)}]"


@record
class RecallStats:
    """The numbers a reader needs to redo the arithmetic by hand."""

    rule_count: int
    avg_length: float
    task_stems: dict[str, int]  # stem -> qtf, sorted by stem
    unknown_stems: list[str]  # task stems no active rule contains
    settings: RecallSettings
    #: Sum of idf over the task's distinct stems (the confidence's task side).
    task_mass: float = 0.0
    #: df of each task stem (0: in no rule's title or text), sorted by stem.
    task_df: dict[str, int] = field(default_factory=dict)
    #: Episodes in the ledger, how many of their tasks say each task stem (those some
    #: task says) and the ledger weight that gives (those below 1).
    task_count: int = 0
    ledger_df: dict[str, int] = field(default_factory=dict)
    ledger: dict[str, float] = field(default_factory=dict)
    best_score: float | None = None
    best_tag_hits: int = 0
    #: The best-ranked rule's confidence; ``None`` when no rule matched at all.
    best_confidence: float | None = None
    best_evidence: float = 0.0
    #: How many distinct task stems the best-ranked rule matches (own words, tags,
    #: its episodes' words); ``None`` when not counted (a result built by hand).
    best_matched_words: int | None = None
    #: The share of the best-ranked rule's own mass the task touches
    #: (``matched_mass / rule_mass``, rounded); ``None`` when not computed.
    best_rule_coverage: float | None = None
    #: The best-ranked rule, also when the verdict (ASK_HUMAN) returns no rules.
    best: RecalledRule | None = None
    #: The struggling rule's counts when ACT was downgraded to ACT_AND_FLAG because it
    #: rested on struggling rules alone (:mod:`scarwarden.recall.earned`).
    downgraded_by: Lineage | None = None
    #: Task stem -> the word the task wrote (the output shows words, not stems).
    words: dict[str, str] = field(default_factory=dict)
    #: The return share (version 5) and the rules it left out of ``rules``: those over
    #: the floor that would have been returned within the limit, as (ID, score).
    return_share: float = 0.0
    left_by_share: list[tuple[str, float]] = field(default_factory=list)

    def route(self) -> str:
        """The router's verdict on these figures."""
        return router.route(*self._router_args(), **self._router_kwargs())

    def route_reason(self) -> str:
        """The router's one-line reason for that verdict, in ``--explain``'s words."""
        return router.reason(*self._router_args(), **self._router_kwargs())

    def _router_args(self) -> tuple[float | None, int, float, RecallSettings]:
        return self.best_confidence, self.best_tag_hits, self.best_evidence, self.settings

    def _router_kwargs(self) -> dict[str, Any]:
        return {
            "matched_words": self.best_matched_words,
            "task_words": len(self.task_stems),
            "rule_coverage": self.best_rule_coverage,
        }


@record
class RecallResult:
    """What recall found for a task, and the router's verdict."""

    task: str
    verdict: str
    playbook_commit: str | None
    rules: list[RecalledRule]
    stats: RecallStats | None = None
    #: rowid in the recall log, when the recall was logged.
    log_id: int | None = None
    #: What the agent was given, provably (issue 20): see :mod:`scarwarden.files.receipt`.
    receipt: Receipt | None = None
    #: On ASK_HUMAN (version 4): the nearest rules, or failed episodes, unconfirmed
    #: (:mod:`scarwarden.recall.given`); never in ``rules``.
    candidates: list[Candidate] = field(default_factory=list)

    @property
    def meaning(self) -> str:
        return router.VERDICT_MEANING[self.verdict]

    def to_json(self) -> dict[str, Any]:
        """SPEC section 6: ``{task, verdict, playbook_commit, rules: [...]}``."""
        return {
            "task": self.task,
            "verdict": self.verdict,
            "playbook_commit": self.playbook_commit,
            "rules": [r.to_json() for r in self.rules],
            "candidates": [c.to_json() for c in self.candidates],
            **({"receipt": self.receipt.to_json()} if self.receipt is not None else {}),
        }

    def dumps(self) -> str:
        """The JSON document, byte-stable for the same playbook and task."""
        return json.dumps(self.to_json(), indent=2, ensure_ascii=False)
