"""The ledger statistics split by month folder (:mod:`scarwarden.gate.ledger`'s cache).

What grows with the ledger is kept per month folder, keyed by that folder's tree ID
(``months/<month tree>-<folder key>.json``, :mod:`scarwarden.gate.ledger_month_store`):
the folder's episode IDs, each rule's applications in it and their tallies. A month tree
ID fixes every byte of every episode in it, so an entry cannot go stale, and a commit
changes one month or two: deriving a tree's statistics from its parent's reads and writes
the months that changed, never the others. The tree's own entry (``<tree>.json``) keeps
what a receipt's recall reads whole (the episode count and how many tasks say each stem)
and the tree ID of each of its month folders, so a proof reads that small entry and, for
a struggling-rule check, each month's tallies, and one rule's part only of a month its
last change falls in.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from functools import partial
from typing import Any

from scarwarden import text
from scarwarden.files.episodes import Episode
from scarwarden.files.lineage_counts import Application
from scarwarden.files.lineage_tally import Standing, Tally, tally_rows
from scarwarden.gate.ledger_month_store import MONTH_FORMAT, OLD_MONTH_FORMAT, Month, MonthStore, Rows, dumps
from scarwarden.recall.ledger_stats import LedgerStats

__all__ = [
    "MONTH_FORMAT",
    "OLD_MONTH_FORMAT",
    "Month",
    "MonthStore",
    "TreeStats",
    "count_task",
    "from_whole",
]


def count_task(task_df: Counter[str], ep: Episode, sign: int) -> None:
    """Count ``ep``'s task words in (``sign`` 1) or out (-1), as the index does."""
    for stem in set(text.stems(ep.task)):
        task_df[stem] += sign
        if task_df[stem] <= 0:
            del task_df[stem]


class TreeStats(LedgerStats):
    """A tree's statistics: the counts and task words whole, what grows (IDs, rule
    applications) per month folder, read from the months' entries when asked
    (``months`` in memory for those just derived). ``derive(folder, tree)`` gives a month
    whose entry is missing or damaged, from its episodes."""

    def __init__(
        self,
        task_count: int,
        task_df: Counter[str],
        folders: dict[str, str],
        months: dict[str, Month],
        store: MonthStore | None,
        derive: Callable[[str, str], Month],
        exact: bool = True,
    ) -> None:
        super().__init__(task_count=task_count, task_df=task_df)
        self.folders, self.loaded, self.store, self._derive_month = folders, months, store, derive
        self._all_rules = False
        self._kept_tallies: dict[str, dict[str, Any] | None] = {}
        #: Whether the months add up to the tree (not when an ID is in two month folders:
        #: the index keeps one); only then is it kept.
        self.exact = exact

    def month(self, folder: str) -> Month:
        """The month folder's share, whole (for a derivation)."""
        if folder not in self.loaded:
            tree = self.folders[folder]
            found = None if self.store is None else self.store.load(folder, tree)
            self.loaded[folder] = found if found is not None else self._derive_month(folder, tree)
        return self.loaded[folder]

    def _rule(self, rule_id: str) -> Rows | None:
        if rule_id not in self._applied:
            rows: Rows = {}
            for folder, tree in sorted(self.folders.items()):
                part = None
                if folder not in self.loaded and self.store is not None:
                    part = self.store.rule(folder, tree, rule_id)
                rows.update(part if part is not None else (self.month(folder).rule(rule_id) or {}))
            if not rows:
                return None
            self._applied[rule_id] = rows
        return self._applied[rule_id]

    def keep_months(self) -> None:
        """Keep every month entry of this tree in this format: one of the format before
        converted (from its own parts), a missing or damaged one derived from its
        episodes. What the CI action's last step leaves, so the next job converts
        nothing (a restored cache is restored as it was saved)."""
        if self.store is None:
            return
        for folder, tree in sorted(self.folders.items()):
            if folder not in self.loaded and self.store.rule_ids(folder, tree) is None:
                self.month(folder)

    def standing(self, rule_id: str) -> Standing:
        """The rule's applications as each month's tally: a month's applications are read
        only when the struggling check cannot answer from its tally (the rule's last
        change falls in it)."""
        parts = []
        for folder, tree in sorted(self.folders.items()):
            kept = None
            if folder not in self.loaded and self.store is not None:
                if folder not in self._kept_tallies:
                    self._kept_tallies[folder] = self.store.tallies(folder, tree)
                kept = self._kept_tallies[folder]
            if kept is None:  # derived in this run, no cache, or no usable entry
                rows = self.month(folder).rule(rule_id) or {}
                parts.append((tally_rows(rows), partial(_applications, rows)))
            elif rule_id in kept:
                try:
                    kept_tally = Tally.from_json(kept[rule_id])
                except (ValueError, TypeError):
                    self._kept_tallies[folder] = None  # not one: the month is derived again
                    return self.standing(rule_id)
                parts.append((kept_tally, partial(self._month_rule, folder, tree, rule_id)))
        return Standing(parts)

    def _month_rule(self, folder: str, tree: str, rule_id: str) -> list[Application]:
        rows = None if self.store is None else self.store.rule(folder, tree, rule_id)
        return _applications(rows if rows is not None else (self.month(folder).rule(rule_id) or {}))

    @property
    def applied(self) -> dict[str, Rows]:
        if not self._all_rules:
            names: set[str] = set()
            for folder, tree in self.folders.items():
                listed = (
                    None if folder in self.loaded or self.store is None else self.store.rule_ids(folder, tree)
                )
                names.update(listed if listed is not None else self.month(folder).rule_ids())
            for rule_id in sorted(names):
                self._rule(rule_id)
            self._all_rules = True
        return self._applied

    @property
    def months(self) -> dict[str, str]:
        if not self._months:
            for folder, tree in sorted(self.folders.items()):
                ids = None if folder in self.loaded or self.store is None else self.store.ids(folder, tree)
                for ep_id in ids if ids is not None else sorted(self.month(folder).ids):
                    self._months[ep_id] = folder
        return self._months

    def head(self) -> bytes:
        """The tree entry's body: the counts and task words, then the month folders."""
        counts = {"task_count": self.task_count, "task_df": dict(sorted(self.task_df.items()))}
        return dumps(counts) + b"\n" + dumps({"folders": dict(sorted(self.folders.items()))})

    @classmethod
    def from_head(
        cls, body: bytes, store: MonthStore | None, derive: Callable[[str, str], Month]
    ) -> TreeStats:
        """What :meth:`head` wrote (``ValueError`` when it is not that)."""
        first, second = body.split(b"\n")
        counts, folders = json.loads(first), json.loads(second)["folders"]
        task_df = Counter({str(k): int(v) for k, v in counts["task_df"].items()})
        folder_map = {str(k): str(v) for k, v in folders.items()}
        return cls(int(counts["task_count"]), task_df, folder_map, {}, store, derive)


def _applications(rows: Rows) -> list[Application]:
    return [Application.from_json(row) for group in rows.values() for row in group]


def from_whole(
    old: LedgerStats, folders: dict[str, str | None]
) -> tuple[dict[str, str], dict[str, Month]] | None:
    """Each month folder's share of statistics kept whole (the previous cache format,
    ``ledger-stats-7/v2``): its IDs and their applications, split by the month each
    episode is in (a valid episode's folder is its date's month); ``None`` when an
    episode's month is not a folder of the tree (then it is derived from the episodes).
    Returns (month folder -> its tree, month folder -> its share)."""
    months = {folder: Month() for folder, tree in folders.items() if tree is not None}
    where = old.months
    for rule_id, eps in old.applied.items():
        for ep_id, rows in eps.items():
            if where.get(ep_id) not in months:
                return None
            months[where[ep_id]]._rules.setdefault(rule_id, {})[ep_id] = rows
    for ep_id, folder in where.items():
        if folder not in months:
            return None
        months[folder].ids.add(ep_id)
    return {f: t for f, t in folders.items() if t is not None}, months
