"""How each rule has fared: lineage counts recomputed from the ledger, never stored.

The counting (applications, went well, corrected, since the rule last changed; when a
rule is *struggling*) is :mod:`scarwarden.files.lineage_counts`, shared with the gate's
re-derivation of recall. Here the episodes are read through the index, which reflects
the working tree: a rule's applications through ``episode_rules`` (each episode's
``rules_applied``, by rule), so asking about one rule reads its episodes only, never
the whole ledger; the change dates come from git.
"""

from __future__ import annotations

from collections.abc import Iterable

from scarwarden.files.lineage_counts import (
    STRUGGLING_MIN,
    STRUGGLING_SHARE,
    Application,
    Lineage,
    corrected,
    count,
    may_struggle,
)
from scarwarden.files.rule_dates import last_changes
from scarwarden.index.queries import Index
from scarwarden.index.schema import chunks

__all__ = [
    "STRUGGLING_MIN",
    "STRUGGLING_SHARE",
    "Lineage",
    "applications",
    "corrected",
    "lineage_counts",
    "struggling",
]


_APPLIED = "SELECT rule_id, episode_id, at, corrected, went_well, status FROM episode_rules"
_ORDER = " ORDER BY rule_id, at, episode_id, seq"  # the primary key's order: no sort


def applications(index: Index, rule_ids: Iterable[str] | None = None) -> dict[str, list[Application]]:
    """Rule ID -> the episodes that applied it, oldest first (an episode naming a rule
    twice counts twice); read by rule from ``episode_rules``, which holds each
    application as counted when the episode was indexed (no episode is parsed here)."""
    rows: list[tuple[str, str, str, int, int, str]] = []
    if rule_ids is None:
        rows = index.conn.execute(_APPLIED + _ORDER).fetchall()
    else:
        for chunk in chunks(sorted(set(rule_ids)), 500):
            marks = ",".join("?" * len(chunk))
            rows += index.conn.execute(f"{_APPLIED} WHERE rule_id IN ({marks}){_ORDER}", chunk).fetchall()
    found: dict[str, list[Application]] = {}
    for rule_id, episode_id, at, fixed, well, status in rows:
        found.setdefault(rule_id, []).append(Application(episode_id, at, bool(fixed), bool(well), status))
    return found


def lineage_counts(
    index: Index,
    rule_ids: Iterable[str] | None = None,
    applied: dict[str, list[Application]] | None = None,
) -> dict[str, Lineage]:
    """The counts of every rule in ``rule_ids`` (default: every rule in the index);
    ``applied``: their :func:`applications`, when the caller has read them already."""
    ids = list(rule_ids) if rule_ids is not None else [r.id for r in index.rules(include_retired=True)]
    changes = last_changes(index.repo)
    if applied is None:
        applied = applications(index, ids)
    return {rule_id: count(rule_id, changes.get(rule_id), applied.get(rule_id, [])) for rule_id in ids}


def struggling(index: Index, rule_id: str) -> Lineage | None:
    """The rule's counts when it is struggling, else None; cheap when it is not (the git
    history is read only for a rule corrected at least twice in three applications)."""
    eps = applications(index, [rule_id]).get(rule_id, [])
    if not may_struggle(eps):
        return None
    counts = lineage_counts(index, [rule_id], {rule_id: eps})[rule_id]
    return counts if counts.struggling else None
