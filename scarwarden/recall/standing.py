"""How each recalled rule has fared (issue 26): applications, went well, corrected,
since it last changed, as :mod:`scarwarden.index.lineage` counts them (receipt-verified
where receipts exist). Read for the rules a recall returns, for ``--json``,
``--explain`` and MCP; the git history is read only when some rule was applied."""

from __future__ import annotations

from scarwarden.index.lineage import applied_at_all, lineage_counts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from scarwarden.index import Index
    from scarwarden.recall.result import RecalledRule

#: What a rule that was never applied shows.
_NEVER = {"applied": 0, "went_well": 0, "corrected": 0, "struggling": False, "counted": "claimed"}


def attach_lineage(index: Index, rules: list[RecalledRule]) -> None:
    """Set each rule's ``lineage``: applied, went_well, corrected (since it last
    changed), struggling, and what was counted (``verified`` by receipts or ``claimed``)."""
    if not rules:
        return
    applied = applied_at_all(index, [r.id for r in rules])
    counts = lineage_counts(index, sorted(applied)) if applied else {}
    for rule in rules:
        found = counts.get(rule.id)
        rule.lineage = dict(_NEVER) if found is None else _summary(found.to_json())


def _summary(data: dict[str, Any]) -> dict[str, Any]:
    return {k: data[k] for k in ("applied", "went_well", "corrected", "struggling", "counted")}
