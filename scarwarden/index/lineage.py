"""How each rule has fared: lineage counts recomputed from the ledger, never stored.

For a rule, the *applications* are the episodes whose ``rules_applied`` names it. Each
went well (an outcome and no correction) or was corrected (a correction, or
``source: correction``); one with neither says nothing either way. The counts that
matter are those **since the rule last changed what it says**
(:func:`scarwarden.files.rule_dates.last_changes`: its title, text or tags, from git
history), by the episodes' ``at``: a rule that was rewritten after four corrections
starts again from zero. All-time figures are kept alongside.

A rule **corrected in at least half of at least three applications** since its last
change is *struggling*: ``distill`` proposes it for revision or retirement, and the
router never gives ``ACT`` on it alone.

The episodes are read through the index (one query over ``rules_applied``), which
reflects the working tree; the change dates come from git.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from scarwarden.files.episodes import Episode
from scarwarden.files.rule_dates import RuleChange, last_changes
from scarwarden.index.queries import Index

#: A rule is struggling when corrected in at least this share ...
STRUGGLING_SHARE = 0.5
#: ... of at least this many applications since it last changed.
STRUGGLING_MIN = 3


@dataclass(frozen=True)
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
        return line + (": proposed for revision" if self.struggling else "")

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
        }


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def corrected(ep: Episode) -> bool:
    return bool(str(ep.get("correction") or "").strip()) or ep.get("source") == "correction"


def _when(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def applications(index: Index, rule_ids: Iterable[str] | None = None) -> dict[str, list[Episode]]:
    """Rule ID -> the episodes that applied it, oldest first (one query; for one rule,
    a text match narrows the rows before any JSON is read)."""
    wanted = None if rule_ids is None else set(rule_ids)
    sql = "SELECT j.value, e.doc FROM episodes e, json_each(e.doc, '$.rules_applied') j"
    args: list[str] = []
    if wanted is not None and len(wanted) == 1:
        sql += " WHERE instr(e.doc, ?) > 0"
        args.append(f'"{next(iter(wanted))}"')
    found: dict[str, list[Episode]] = {}
    for rule_id, doc in index.conn.execute(sql + " ORDER BY e.at, e.id", args):
        if isinstance(rule_id, str) and (wanted is None or rule_id in wanted):
            found.setdefault(rule_id, []).append(Episode(json.loads(doc)))
    return found


def lineage_counts(index: Index, rule_ids: Iterable[str] | None = None) -> dict[str, Lineage]:
    """The counts of every rule in ``rule_ids`` (default: every rule in the index)."""
    ids = list(rule_ids) if rule_ids is not None else [r.id for r in index.rules(include_retired=True)]
    changes = last_changes(index.repo)
    applied = applications(index, ids)
    out: dict[str, Lineage] = {}
    for rule_id in ids:
        changed = changes.get(rule_id)
        since = _when(changed.date) if changed else None
        eps = applied.get(rule_id, [])
        recent = [ep for ep in eps if since is None or ((_when(ep.at) or since) >= since)]
        fixes = [ep for ep in recent if corrected(ep)]
        out[rule_id] = Lineage(
            rule_id,
            changed,
            applied=len(recent),
            went_well=sum(1 for ep in recent if not corrected(ep) and ep.get("outcome")),
            corrected=len(fixes),
            applied_total=len(eps),
            corrected_total=sum(1 for ep in eps if corrected(ep)),
            corrections=tuple(ep.id for ep in fixes),
        )
    return out


def struggling(index: Index, rule_id: str) -> Lineage | None:
    """The rule's counts when it is struggling, else None; cheap when it is not (the git
    history is read only for a rule corrected at least twice in three applications)."""
    eps = applications(index, [rule_id]).get(rule_id, [])
    if len(eps) < STRUGGLING_MIN or sum(1 for ep in eps if corrected(ep)) < STRUGGLING_MIN * STRUGGLING_SHARE:
        return None
    counts = lineage_counts(index, [rule_id])[rule_id]
    return counts if counts.struggling else None
