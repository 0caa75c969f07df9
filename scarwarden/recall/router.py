"""The confidence router: how sure recall is, as one of three verdicts.

The verdict is decided by the best-ranked rule alone, checked in this order
(docs/recall.md works examples by hand):

1. ``ASK_HUMAN``    no rule shares a tag or a word with the task;
2. ``ACT``          the best rule has at least ``act_tag_hits`` tag hits;
3. ``ACT``          its confidence is at least ``act_threshold`` *and* its evidence is
                    at least ``act_tag_hits``;
4. ``ACT_AND_FLAG`` its confidence is at least ``floor`` and it has a tag hit or an
                    evidence of at least :data:`FLAG_EVIDENCE` (1);
5. ``ASK_HUMAN``    otherwise.

The *confidence* (:func:`scarwarden.recall.score.confidence`, 0 to 1) is the idf-weighted
overlap of task and rule divided by the geometric mean of their idf masses, so it does
not grow with the length of the task or with generic words; the ranking score does,
and is not used here. The *evidence* is the matched idf counted in rare words (the
idf of a stem found in one rule only): the confidence of a one- or two-word task can be
high on a single word, so acting needs as much lexical evidence as ``act_tag_hits``
tag hits would give, and a weak match needs a tag hit or one rare word's worth.

The thresholds live in ``scarwarden.yaml`` (``recall:`` section, see
:class:`scarwarden.config.RecallSettings`); their defaults were chosen by measurement
on the demo memory (``python bench/recall_quality.py --tuning``).
"""

from __future__ import annotations

from scarwarden.config import RecallSettings

ACT = "ACT"
ACT_AND_FLAG = "ACT_AND_FLAG"
ASK_HUMAN = "ASK_HUMAN"

VERDICTS = (ACT, ACT_AND_FLAG, ASK_HUMAN)

#: Evidence (matched idf in rare words) that a best rule without a tag hit needs to
#: count as a match at all: one that shares only generic words with the task is not.
FLAG_EVIDENCE = 1.0

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


def route(
    best_confidence: float | None, best_tag_hits: int, best_evidence: float, settings: RecallSettings
) -> str:
    """The verdict for a best-ranked rule with these numbers.

    ``best_confidence`` is ``None`` when no rule matched the task at all;
    ``best_evidence`` is its matched idf in units of the idf of a stem found in one
    rule only (:attr:`scarwarden.recall.result.RecalledRule.evidence`).
    """
    if best_confidence is None:
        return ASK_HUMAN
    if best_tag_hits >= settings.act_tag_hits:
        return ACT
    if best_confidence >= settings.act_threshold and best_evidence >= settings.act_tag_hits:
        return ACT
    if best_confidence >= settings.floor and (best_tag_hits >= 1 or best_evidence >= FLAG_EVIDENCE):
        return ACT_AND_FLAG
    return ASK_HUMAN


def reason(
    best_confidence: float | None, best_tag_hits: int, best_evidence: float, settings: RecallSettings
) -> str:
    """Why :func:`route` gave its verdict, in words a reviewer can check."""
    verdict = route(best_confidence, best_tag_hits, best_evidence, settings)
    if best_confidence is None:
        return f"{verdict}: no rule shares a tag or a word with the task"
    hits = f"{best_tag_hits} tag hit(s) (< act_tag_hits {settings.act_tag_hits})"
    conf = f"confidence {best_confidence:g}"
    evidence = f"evidence {best_evidence:g}"
    if verdict == ACT:
        if best_tag_hits >= settings.act_tag_hits:
            return (
                f"{verdict}: the best rule has {best_tag_hits} tag hits "
                f"(>= act_tag_hits {settings.act_tag_hits})"
            )
        return (
            f"{verdict}: the best rule's {conf} >= act_threshold "
            f"{settings.act_threshold:g} and its {evidence} >= act_tag_hits "
            f"{settings.act_tag_hits}"
        )
    if verdict == ACT_AND_FLAG:
        if best_confidence >= settings.act_threshold:
            why = (
                f"its {conf} >= act_threshold {settings.act_threshold:g} but its "
                f"{evidence} < act_tag_hits {settings.act_tag_hits}"
            )
        else:
            why = (
                f"its {conf} is below act_threshold {settings.act_threshold:g} but >= "
                f"floor {settings.floor:g}, "
            )
            why += "with a tag hit" if best_tag_hits else f"with {evidence} >= {FLAG_EVIDENCE:g}"
        return f"{verdict}: the best rule has {hits}; {why}"
    if best_confidence >= settings.floor:
        return (
            f"{verdict}: the best rule has no tag hit and its {evidence} < "
            f"{FLAG_EVIDENCE:g} (only generic words matched), though its {conf} >= floor "
            f"{settings.floor:g}"
        )
    return f"{verdict}: the best rule has {hits}; its {conf} is below floor {settings.floor:g}"
