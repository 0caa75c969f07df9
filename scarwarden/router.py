"""The confidence router: how sure recall is, as one of three verdicts.

The verdict is decided by the best-ranked rule alone, in this order (docs/recall.md):

1. ``ACT``          the best rule has at least ``act_tag_hits`` tag hits, or its
                    score is at least ``act_threshold``;
2. ``ACT_AND_FLAG`` otherwise, when its score is at least ``floor``;
3. ``ASK_HUMAN``    otherwise, and whenever nothing matched at all.

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

#: What the agent must do on each verdict (shown by ``recall`` and ``ask``).
VERDICT_MEANING: dict[str, str] = {
    ACT: "Strong match: follow the recalled rules and cite them.",
    ACT_AND_FLAG: ("Weak match: the rules may apply; act on them, but state your "
                   "assumptions and flag the answer for review."),
    ASK_HUMAN: ("Nothing relevant is remembered: do not guess. Ask a human; their answer "
                "becomes a new episode."),
}


def route(best_score: float | None, best_tag_hits: int, settings: RecallSettings) -> str:
    """The verdict for a best rule with ``best_score`` and ``best_tag_hits``.

    ``best_score`` is ``None`` when no rule matched the task at all.
    """
    if best_score is None:
        return ASK_HUMAN
    if best_tag_hits >= settings.act_tag_hits or best_score >= settings.act_threshold:
        return ACT
    if best_score >= settings.floor:
        return ACT_AND_FLAG
    return ASK_HUMAN


def reason(best_score: float | None, best_tag_hits: int, settings: RecallSettings) -> str:
    """Why :func:`route` gave its verdict, in words a reviewer can check."""
    verdict = route(best_score, best_tag_hits, settings)
    if best_score is None:
        return f"{verdict}: no rule shares a tag or a word with the task"
    if verdict == ACT:
        if best_tag_hits >= settings.act_tag_hits:
            return (f"{verdict}: the best rule has {best_tag_hits} tag hits "
                    f"(>= act_tag_hits {settings.act_tag_hits})")
        return (f"{verdict}: the best score {best_score:g} >= act_threshold "
                f"{settings.act_threshold:g}")
    if verdict == ACT_AND_FLAG:
        return (f"{verdict}: the best score {best_score:g} is below act_threshold "
                f"{settings.act_threshold:g} but >= floor {settings.floor:g}, with "
                f"{best_tag_hits} tag hit(s) (< act_tag_hits {settings.act_tag_hits})")
    return f"{verdict}: the best score {best_score:g} is below floor {settings.floor:g}"
