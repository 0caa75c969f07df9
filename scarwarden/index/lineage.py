"""How each rule has fared: lineage counts recomputed from the ledger, never stored.

The counting (applications, went well, corrected, since the rule last changed; when a
rule is *struggling*) is :mod:`scarwarden.files.lineage_counts`, shared with the gate's
re-derivation of recall. Here the episodes are read through the index, which reflects
the working tree: a rule's applications through ``episode_rules`` (each episode's
``rules_applied``, by rule and date, each application as ``application`` counted it
when the episode was indexed), so asking about one rule reads its rows only, never an
episode nor the whole ledger, and the counts are sums SQLite makes over them (what
``count`` gives, tested against it); the change dates come from git.
"""

from __future__ import annotations

from collections.abc import Iterable

from scarwarden.files.lineage_counts import (
    STRUGGLING_MIN,
    STRUGGLING_SHARE,
    Application,
    Lineage,
    corrected,
    when,
)
from scarwarden.index.queries import Index
from scarwarden.index.schema import chunks
from scarwarden.times import format_at

TYPE_CHECKING = False
if TYPE_CHECKING:
    from scarwarden.files.rule_dates import RuleChange

__all__ = [
    "STRUGGLING_MIN",
    "STRUGGLING_SHARE",
    "Lineage",
    "applications",
    "applied_at_all",
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


def applied_at_all(index: Index, rule_ids: Iterable[str]) -> set[str]:
    """The rules among ``rule_ids`` that some episode applied (an index lookup each)."""
    found: set[str] = set()
    for rule_id in set(rule_ids):
        if index.conn.execute("SELECT 1 FROM episode_rules WHERE rule_id = ? LIMIT 1", (rule_id,)).fetchone():
            found.add(rule_id)
    return found


def lineage_counts(index: Index, rule_ids: Iterable[str] | None = None) -> dict[str, Lineage]:
    """The counts of every rule in ``rule_ids`` (default: every rule in the index):
    :func:`~scarwarden.files.lineage_counts.count` over the rule's applications, summed
    by SQLite (:func:`_count`), so a rule applied 5,000 times costs no 5,000 objects."""
    ids = list(rule_ids) if rule_ids is not None else [r.id for r in index.rules(include_retired=True)]
    # The playbook's history (and its parser): only once a rule's counts are asked for.
    from scarwarden.files.rule_dates import last_changes

    changes = last_changes(index.repo, known_head=index.indexed_commit)
    return {rule_id: _count(index, rule_id, changes.get(rule_id)) for rule_id in ids}


def struggling(index: Index, rule_id: str) -> Lineage | None:
    """The rule's counts when it is struggling, else None; cheap when it is not (the git
    history is read only for a rule corrected at least twice in three applications)."""
    total = _count(index, rule_id, None)  # all time: what may_struggle looks at
    if total.applied < STRUGGLING_MIN or total.corrected < STRUGGLING_MIN * STRUGGLING_SHARE:
        return None
    counts = lineage_counts(index, [rule_id])[rule_id]
    return counts if counts.struggling else None


#: A rule's applications by how they count, split at the rule's last change.
_GROUPS = (
    "SELECT status, corrected, went_well, at {op} ?, count(*) FROM episode_rules "
    "WHERE rule_id = ? GROUP BY 1, 2, 3, 4"
)
_FIXES = (
    "SELECT episode_id FROM episode_rules WHERE rule_id = ? AND at {op} ? AND corrected = 1 {only}"
    "ORDER BY at, episode_id, seq"
)


def _count(index: Index, rule_id: str, changed: RuleChange | None) -> Lineage:
    """What ``count(rule_id, changed, applications(index, [rule_id])[rule_id])`` gives,
    summed in SQL. ``at`` is stored in its one canonical UTC form (the validator's), so
    "since the last change" is a string comparison with the change's time in that form
    (a time with a fraction of a second: any ``at`` after its whole second)."""
    since = when(changed.date) if changed else None
    op, cut = ">=", ""  # no change date: every application is recent
    if since is not None:
        op, cut = (">" if since.microsecond else ">="), format_at(since)
    groups = index.conn.execute(_GROUPS.format(op=op), (cut, rule_id)).fetchall()
    every = sum(g[4] for g in groups)
    claimed = all(g[0] == "claimed" for g in groups)
    apps = groups if claimed else [g for g in groups if g[0] == "verified"]  # counted()
    recent = [g for g in apps if g[3]]
    fixes_now = sum(g[4] for g in recent if g[1])
    fixes: tuple[str, ...] = ()
    if fixes_now:
        only = "" if claimed else "AND status = 'verified' "
        sql = _FIXES.format(op=op, only=only)
        fixes = tuple(r[0] for r in index.conn.execute(sql, (rule_id, cut)))
    applied_total = sum(g[4] for g in apps)
    return Lineage(
        rule_id,
        changed,
        applied=sum(g[4] for g in recent),
        went_well=sum(g[4] for g in recent if g[2]),
        corrected=fixes_now,
        applied_total=applied_total,
        corrected_total=sum(g[4] for g in apps if g[1]),
        corrections=fixes,
        basis="claimed" if claimed else "verified",
        not_counted=every - applied_total,
        unverifiable=sum(g[4] for g in groups if g[0] == "unverifiable"),
    )
