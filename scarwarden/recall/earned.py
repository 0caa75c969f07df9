"""Rules earn their place: the router never gives ``ACT`` on a struggling rule alone.

A rule corrected in at least half of at least three applications since it last changed
(:mod:`scarwarden.index.lineage`) is not trusted on its own: when it is the only rule
that would earn ``ACT``, the verdict becomes ``ACT_AND_FLAG`` (act, but flag the answer
for review). Kept apart from the router's scoring on purpose: it reads the ledger, the
router reads numbers.
"""

from __future__ import annotations

from scarwarden.config import RecallSettings
from scarwarden.index.lineage import Lineage, struggling
from scarwarden.index.queries import Index
from scarwarden.recall import router
from scarwarden.recall.result import RecalledRule


def _earns_act(rule: RecalledRule, settings: RecallSettings) -> bool:
    return router.route(rule.confidence, len(rule.matched_tags), rule.evidence, settings) == router.ACT


def not_on_a_struggling_rule_alone(
    index: Index, verdict: str, ranked: list[RecalledRule], settings: RecallSettings
) -> tuple[str, Lineage | None]:
    """``verdict``, or ``ACT_AND_FLAG`` when ``ACT`` rests on struggling rules alone;
    with the best rule's counts when that happened."""
    if verdict != router.ACT or not ranked:
        return verdict, None
    doubt = struggling(index, ranked[0].id)
    if doubt is None:
        return verdict, None
    for rule in ranked[1:]:
        if _earns_act(rule, settings) and struggling(index, rule.id) is None:
            return verdict, None  # another rule, in good standing, earns ACT by itself
    return router.ACT_AND_FLAG, doubt
