"""The confidence router: how sure recall is, as one of three verdicts.

The verdict is decided by the best-ranked rule alone, checked in this order
(docs/recall.md works examples by hand):

1. ``ASK_HUMAN``    no rule shares a tag or a word with the task;
2. ``ACT``          its evidence is at least ``act_tag_hits``, the task touches at least
                    :data:`ACT_RULE_COVERAGE` of the rule, *and* it has a confidence
                    of at least ``act_threshold``, or at least ``act_tag_hits`` tag hits
                    and a confidence of at least ``floor``;
3. ``ACT_AND_FLAG`` its confidence is at least ``floor``, its evidence at least
                    :data:`FLAG_EVIDENCE` (1), and the match is *supported*: it
                    matches two of the task's words or more, or at least half of them;
4. ``ASK_HUMAN``    otherwise.

The *confidence* (:func:`scarwarden.recall.formulas.confidence`, 0 to 1) is the idf-weighted
overlap of task and rule divided by the geometric mean of their idf masses, so it does
not grow with the length of the task or with generic words; the ranking score does,
and is not used here. The *evidence* counts the matched words, each worth at most 1: a word found in one
rule (or none) counts 1, a word many rules have counts its idf relative to that, and a
word many past tasks say is weighed down again by its ledger weight
(:func:`scarwarden.recall.formulas.specificity`). It does not grow when the memory is small
(an unseen word is not worth two rare ones) and it does not shrink as the memory grows.
So one word, however rare, never gives ``ACT`` (two words' worth are needed), and a match
on a single word of a longer task is ``ASK_HUMAN``, not a flag.

The thresholds live in ``scarwarden.yaml`` (``recall:`` section, see
:class:`scarwarden.config.RecallSettings`); their defaults were chosen by measurement
on the demo memory (``python bench/recall_quality.py --tuning``).
"""

from __future__ import annotations

from collections.abc import Sequence

from scarwarden.config import RecallSettings
from scarwarden.recall.version import ALGORITHM

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol, TypeVar

    class _Ranked(Protocol):
        """What :func:`returned` reads of a ranked rule (a ``RecalledRule``)."""

        @property
        def score(self) -> float: ...
        @property
        def confidence(self) -> float: ...
        @property
        def matched_tags(self) -> list[str]: ...

    _R = TypeVar("_R", bound=_Ranked)

ACT = "ACT"
ACT_AND_FLAG = "ACT_AND_FLAG"
ASK_HUMAN = "ASK_HUMAN"

VERDICTS = (ACT, ACT_AND_FLAG, ASK_HUMAN)

#: Evidence (matched words, each worth at most 1) that a best rule needs to count as
#: a match at all: one that shares only generic words with the task is not.
FLAG_EVIDENCE = 1.0

#: Share of the best rule's own idf mass the task must touch (``matched / rule_mass``)
#: for ``ACT``: a short task whose few words a long rule happens to contain is a weak
#: match, not a strong one. Measured (``bench/recall_learning.py --router``): rules
#: acted on rightly had 0.131 or more, the long banking documents acted on wrongly
#: 0.058-0.074; 0.1 sits in the gap.
ACT_RULE_COVERAGE = 0.1

#: Version 5 (issue 26): a rule scoring under this share of the best-ranked rule's score
#: is not returned in ``rules`` (it matches a few of the task's words, not its case:
#: another lesson, read for nothing). Fitted on the replay's first 25 tasks only
#: (``bench/replay.py --tasks 25``, final sweep): from 0.3 to 0.8 no lesson found at the
#: repeat is lost and the tokens read per lesson found fall from 452 to 418 (0.3), 381
#: (0.5) and 350 (0.8); 0.5, the middle of that plateau, keeps a margin for tasks not
#: seen when fitting. docs/recall.md and docs/replay.md report the rest.
RETURN_SHARE = 0.5

#: What the agent must do on each verdict (shown by ``recall`` and ``ask``).
VERDICT_MEANING: dict[str, str] = {
    ACT: "Strong match: follow the recalled rules and cite them.",
    ACT_AND_FLAG: (
        "Weak match: the rules may apply; act on them, but state your "
        "assumptions and flag the answer for review."
    ),
    ASK_HUMAN: (
        "Nothing relevant is remembered: do not guess. Ask a human; their answer becomes a new episode."
    ),
}


def supported(matched_words: int | None, task_words: int) -> bool:
    """A match is *supported* when it covers two of the task's words or more, or at
    least half of them (a one-word task matched on its word); ``None``: not counted."""
    return matched_words is None or matched_words >= 2 or 2 * matched_words >= task_words


def route(
    best_confidence: float | None,
    best_tag_hits: int,
    best_evidence: float,
    settings: RecallSettings,
    *,
    matched_words: int | None = None,
    task_words: int = 0,
    rule_coverage: float | None = None,
) -> str:
    """The verdict for a best-ranked rule with these numbers.

    ``best_confidence`` is ``None`` when no rule matched the task at all;
    ``best_evidence`` is its matched words, each worth at most 1
    (:attr:`scarwarden.recall.result.RecalledRule.evidence`); ``matched_words`` how many
    distinct task stems it matches, of the task's ``task_words``; ``rule_coverage`` the
    share of its own idf mass the task touches (``None``: not checked).
    """
    if best_confidence is None:
        return ASK_HUMAN
    covered = rule_coverage is None or rule_coverage >= ACT_RULE_COVERAGE
    if (
        covered
        and best_evidence >= settings.act_tag_hits
        and (
            best_confidence >= settings.act_threshold
            or (best_tag_hits >= settings.act_tag_hits and best_confidence >= settings.floor)
        )
    ):
        return ACT
    if (
        best_confidence >= settings.floor
        and best_evidence >= FLAG_EVIDENCE
        and supported(matched_words, task_words)
    ):
        return ACT_AND_FLAG
    return ASK_HUMAN


def reason(
    best_confidence: float | None,
    best_tag_hits: int,
    best_evidence: float,
    settings: RecallSettings,
    *,
    matched_words: int | None = None,
    task_words: int = 0,
    rule_coverage: float | None = None,
) -> str:
    """Why :func:`route` gave its verdict, in words a reviewer can check."""
    verdict = route(
        best_confidence,
        best_tag_hits,
        best_evidence,
        settings,
        matched_words=matched_words,
        task_words=task_words,
        rule_coverage=rule_coverage,
    )
    if best_confidence is None:
        return f"{verdict}: no rule shares a tag or a word with the task"
    act = settings.act_tag_hits
    conf = f"confidence {best_confidence:g}"
    evidence = f"evidence {best_evidence:g}"
    words = (
        "" if matched_words is None else f"; it matches {matched_words} of the task's {task_words} word(s)"
    )
    if verdict == ACT:
        why = (
            f"{conf} >= act_threshold {settings.act_threshold:g}"
            if best_confidence >= settings.act_threshold
            else f"{best_tag_hits} tag hits (>= act_tag_hits {act}) and {conf} >= floor {settings.floor:g}"
        )
        return f"{verdict}: the best rule's {evidence} >= {act} and it has {why}"
    missing = (
        f"its {evidence} < {act}"
        if best_evidence < act
        else f"the task touches {rule_coverage:g} of the rule (< {ACT_RULE_COVERAGE:g})"
        if rule_coverage is not None and rule_coverage < ACT_RULE_COVERAGE
        else f"its {conf} < act_threshold {settings.act_threshold:g} and {best_tag_hits} tag hit(s) < {act}"
    )
    if verdict == ACT_AND_FLAG:
        return (
            f"{verdict}: not ACT because {missing}; its {conf} >= floor {settings.floor:g}, "
            f"{evidence} >= {FLAG_EVIDENCE:g}{words}"
        )
    if best_confidence < settings.floor:
        return f"{verdict}: the best rule's {conf} is below floor {settings.floor:g}"
    if best_evidence < FLAG_EVIDENCE:
        return (
            f"{verdict}: the best rule's {evidence} < {FLAG_EVIDENCE:g} (only generic words matched), "
            f"though its {conf} >= floor {settings.floor:g}"
        )
    return (
        f"{verdict}: the best rule matches {matched_words} of the task's {task_words} words: "
        "one word of a longer task, with nothing else to support it"
    )


def returned(
    ranked: Sequence[_R],
    verdict: str,
    settings: RecallSettings,
    *,
    version: int = ALGORITHM,
    share: float = RETURN_SHARE,
) -> list[_R]:
    """The ranked rules recall returns: none on ``ASK_HUMAN``; else those with a
    confidence of at least ``settings.floor`` (or ``act_tag_hits`` tag hits) and, from
    version 5, a score of at least ``share`` x the best-ranked rule's (``share`` 0:
    every one, what a ranking probe asks for)."""
    if verdict == ASK_HUMAN:
        return []
    kept = [
        r for r in ranked if r.confidence >= settings.floor or len(r.matched_tags) >= settings.act_tag_hits
    ]
    if version >= 5 and share > 0.0 and ranked:
        least = share * ranked[0].score
        kept = [r for r in kept if r.score >= least]
    return kept
