"""How a rule has fared, counted from its applications: the arithmetic of lineage.

For a rule, the *applications* are the episodes whose ``rules_applied`` names it. Each
went well (an outcome and no correction) or was corrected (a correction, or
``source: correction``); one with neither says nothing either way. The counts that
matter are those **since the rule last changed what it says**
(:func:`scarwarden.files.rule_dates.last_changes`), by the episodes' ``at``: a rule that
was rewritten after four corrections starts again from zero. All-time figures are kept
alongside.

**Receipts** (issue 20): an episode that carries a recall receipt proves what the agent
was given (the gate re-derived it before the episode was committed). Where a rule's
applications carry receipts, its figures count only the *verified* ones (the receipt
holds the rule, and the gate re-derives that receipt: issue 27); the others (a receipt
the gate cannot re-derive, of another algorithm version, naming no ledger or
``+uncommitted``; beyond the receipt with a reason; no receipt at all) are left out
and the sentence says how many. A rule none of whose applications
carries a receipt is counted on the episodes' word, as before, and says so.

A rule **corrected in at least half of at least three applications** since its last
change is *struggling*: ``distill`` proposes it for revision or retirement, and the
router never gives ``ACT`` on it alone.

Kept apart from where the episodes come from: the index feeds it for recall and the
pages (:mod:`scarwarden.index.lineage`), the gate feeds it episodes read from a ledger
tree in git when it re-derives a recall (:mod:`scarwarden.recall.pure_ledger`), so
both count alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timezone

from scarwarden.files.receipt import applied_rules
from scarwarden.records import record

TYPE_CHECKING = False
if TYPE_CHECKING:  # types only: recall counts a rule without the playbook's parser
    from typing import Any

    from scarwarden.files.episodes import Episode
    from scarwarden.files.rule_dates import RuleChange

#: A rule is struggling when corrected in at least this share ...
STRUGGLING_SHARE = 0.5
#: ... of at least this many applications since it last changed.
STRUGGLING_MIN = 3


@record(frozen=True)
class Lineage:
    rule_id: str
    #: The last commit that changed what the rule says (None: not committed yet).
    changed: RuleChange | None
    applied: int = 0
    went_well: int = 0
    corrected: int = 0
    applied_total: int = 0
    corrected_total: int = 0
    #: The episodes that corrected it since it last changed (oldest first).
    corrections: tuple[str, ...] = ()
    #: "verified": only applications whose recall receipt holds the rule were counted
    #: (some application carries a receipt); "claimed": none does, all were counted.
    basis: str = "claimed"
    #: Applications left out (not verified by a receipt), all time.
    not_counted: int = 0
    #: Of those, the ones whose receipt holds the rule but is one the gate cannot
    #: re-derive (another algorithm version, no ledger, ``+uncommitted``: issue 27).
    unverifiable: int = 0

    @property
    def struggling(self) -> bool:
        return self.applied >= STRUGGLING_MIN and self.corrected >= STRUGGLING_SHARE * self.applied

    def sentence(self) -> str:
        """``PB-04 was applied 9 times and corrected 4 times since it last changed (2026-11-20)``."""
        when = f" ({self.changed.date[:10]})" if self.changed else ""
        line = (
            f"{self.rule_id} was applied {_times(self.applied)} and corrected "
            f"{_times(self.corrected)} since it last changed{when}"
        )
        if self.applied_total != self.applied:
            line += f"; {_times(self.applied_total)} in all"
        line += self.basis_note()
        return line + (": proposed for revision" if self.struggling else "")

    def basis_note(self) -> str:
        """What the figures count: applications verified by recall receipts, or claims."""
        if self.basis == "verified":
            left = f"; {self.not_counted} not verified, not counted" if self.not_counted else ""
            if self.unverifiable:
                left += f" ({self.unverifiable} with a receipt the gate could not re-derive)"
            return f" (applications verified by recall receipts{left})"
        return " (as the episodes claim: none carries a recall receipt)" if self.applied_total else ""

    def to_json(self) -> dict[str, Any]:
        return {
            "rule_id": self.rule_id,
            "last_changed": self.changed.date if self.changed else None,
            "last_changed_commit": self.changed.commit if self.changed else None,
            "applied": self.applied,
            "went_well": self.went_well,
            "corrected": self.corrected,
            "applied_total": self.applied_total,
            "corrected_total": self.corrected_total,
            "corrections": list(self.corrections),
            "struggling": self.struggling,
            "counted": self.basis,
            "not_counted": self.not_counted,
            "not_counted_unverifiable": self.unverifiable,
        }


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def corrected(ep: Episode) -> bool:
    return bool(str(ep.get("correction") or "").strip()) or ep.get("source") == "correction"


@record(frozen=True)
class Application:
    """One episode's application of one rule, as lineage counts it."""

    id: str
    at: str
    corrected: bool
    #: An outcome and no correction.
    went_well: bool
    #: :func:`scarwarden.files.receipt.applied_rules`: "verified" (its receipt, one the
    #: gate re-derives, holds the rule), "unverifiable" (its receipt holds the rule but
    #: the gate cannot re-derive it: not counted), "reason" (beyond the receipt, with a
    #: reason), "claimed" (no receipt), or "refused" (beyond the receipt without a
    #: reason: only past the gate with --no-verify).
    status: str = "claimed"

    def to_json(self) -> list[Any]:
        return [self.id, self.at, self.corrected, self.went_well, self.status]

    @classmethod
    def from_json(cls, row: list[Any]) -> Application:
        return cls(str(row[0]), str(row[1]), bool(row[2]), bool(row[3]), str(row[4]))


def application(ep: Episode, rule_id: str) -> Application:
    """How ``ep`` counts for ``rule_id``, one of the rules it applied."""
    fixed = corrected(ep)
    status = applied_rules(ep.data).get(rule_id, "refused")
    return Application(ep.id, ep.at, fixed, not fixed and bool(ep.get("outcome")), status)


def counted(apps: Sequence[Application]) -> list[Application]:
    """The applications the figures count: only verified ones where any carries a receipt."""
    if all(a.status == "claimed" for a in apps):
        return list(apps)
    return [a for a in apps if a.status == "verified"]


def when(value: str | None) -> datetime | None:
    """An episode's or a commit's ISO time, as an aware datetime (``None``: unreadable)."""
    if not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def may_struggle(apps: Sequence[Application]) -> bool:
    """Whether these applications, all time, are enough for the rule to struggle (a
    cheap test before the rule's change date is looked up in git)."""
    apps = counted(apps)
    fixes = sum(1 for a in apps if a.corrected)
    return len(apps) >= STRUGGLING_MIN and fixes >= STRUGGLING_MIN * STRUGGLING_SHARE


def count(rule_id: str, changed: RuleChange | None, apps: Sequence[Application]) -> Lineage:
    """The counts of ``rule_id`` from its applications ``apps`` (oldest first)."""
    everything = list(apps)
    every = len(everything)
    apps = counted(everything)
    since = when(changed.date) if changed else None
    recent = [a for a in apps if since is None or ((when(a.at) or since) >= since)]
    fixes = [a for a in recent if a.corrected]
    return Lineage(
        rule_id,
        changed,
        applied=len(recent),
        went_well=sum(1 for a in recent if a.went_well),
        corrected=len(fixes),
        applied_total=len(apps),
        corrected_total=sum(1 for a in apps if a.corrected),
        corrections=tuple(a.id for a in fixes),
        basis="claimed" if len(apps) == every and all(a.status == "claimed" for a in apps) else "verified",
        not_counted=every - len(apps),
        unverifiable=sum(1 for a in everything if a.status == "unverifiable"),
    )
