"""How each rule has fared: lineage counts recomputed from the ledger, never stored.

The counting (applications, went well, corrected, since the rule last changed; when a
rule is *struggling*) is :mod:`scarwarden.files.lineage_counts`, shared with the gate's
re-derivation of recall. Here the episodes are read through the index (one query over
``rules_applied``), which reflects the working tree; the change dates come from git.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from scarwarden.files.episodes import Episode
from scarwarden.files.lineage_counts import (
    STRUGGLING_MIN,
    STRUGGLING_SHARE,
    Application,
    Lineage,
    application,
    corrected,
    count,
    may_struggle,
)
from scarwarden.files.rule_dates import last_changes
from scarwarden.index.queries import Index

__all__ = [
    "STRUGGLING_MIN",
    "STRUGGLING_SHARE",
    "Lineage",
    "applications",
    "corrected",
    "lineage_counts",
    "struggling",
]


def applications(index: Index, rule_ids: Iterable[str] | None = None) -> dict[str, list[Application]]:
    """Rule ID -> the episodes that applied it, oldest first (one query; for one rule,
    a text match narrows the rows before any JSON is read)."""
    wanted = None if rule_ids is None else set(rule_ids)
    sql = "SELECT j.value, e.doc FROM episodes e, json_each(e.doc, '$.rules_applied') j"
    args: list[str] = []
    if wanted is not None and len(wanted) == 1:
        sql += " WHERE instr(e.doc, ?) > 0"
        args.append(f'"{next(iter(wanted))}"')
    found: dict[str, list[Application]] = {}
    for rule_id, doc in index.conn.execute(sql + " ORDER BY e.at, e.id", args):
        if isinstance(rule_id, str) and (wanted is None or rule_id in wanted):
            found.setdefault(rule_id, []).append(application(Episode(json.loads(doc)), rule_id))
    return found


def lineage_counts(index: Index, rule_ids: Iterable[str] | None = None) -> dict[str, Lineage]:
    """The counts of every rule in ``rule_ids`` (default: every rule in the index)."""
    ids = list(rule_ids) if rule_ids is not None else [r.id for r in index.rules(include_retired=True)]
    changes = last_changes(index.repo)
    applied = applications(index, ids)
    return {rule_id: count(rule_id, changes.get(rule_id), applied.get(rule_id, [])) for rule_id in ids}


def struggling(index: Index, rule_id: str) -> Lineage | None:
    """The rule's counts when it is struggling, else None; cheap when it is not (the git
    history is read only for a rule corrected at least twice in three applications)."""
    eps = applications(index, [rule_id]).get(rule_id, [])
    if not may_struggle(eps):
        return None
    counts = lineage_counts(index, [rule_id])[rule_id]
    return counts if counts.struggling else None
