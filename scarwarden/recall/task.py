"""The task's side of recall's arithmetic (:class:`TaskTerms`): its stems, what the
index knows of them, and which version's arithmetic applies. Used by
:mod:`scarwarden.recall.score` (which builds it) and :mod:`scarwarden.recall.score_parts`.
"""

from __future__ import annotations

from collections import Counter

from scarwarden.recall.formulas import LONG_RULE, LONG_RULE_V4, idf
from scarwarden.recall.result import RecallStats
from scarwarden.recall.version import ALGORITHM
from scarwarden.records import field, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from scarwarden.config import RecallSettings


@record(frozen=True)
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

    @property
    def same_case(self) -> bool:
        """Version 6: the same-case term ranks, and every first-pass candidate is scored."""
        return self.version >= 6

    @property
    def long_rule(self) -> float:
        """How many average rules long a rule counts at most in the confidence."""
        return LONG_RULE_V4 if self.version == 4 else LONG_RULE

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
