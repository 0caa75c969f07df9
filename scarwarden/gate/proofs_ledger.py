"""Proving version-2 receipts: the ledger tree a receipt names, checked and read.

A version-2 recall ranks with the ledger too (:mod:`scarwarden.recall.pure_ledger`), so
re-deriving its receipt needs the episodes folder at the receipt's ``ledger`` tree. That
tree must exist and must have been the episodes folder at some commit of this history
(HEAD's, or any one the history shows: ``git log`` over the folder, once per run), or a
forger could hand the gate a tree of invented episodes that sways the ranking. Its
statistics come from :class:`scarwarden.gate.ledger.LedgerReader` (cached per tree ID),
the episodes the playbook cites are read by name, and when each rule last changed
(for the struggling-rule condition) is read from the playbook's history as of the
receipt's playbook version, only when a verdict depends on it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from scarwarden import git
from scarwarden.config import RecallSettings
from scarwarden.files import receipt as receipt_format
from scarwarden.files.rule_dates import RuleChange, last_changes_at
from scarwarden.gate.ledger import LedgerReader, cache_dir, counts
from scarwarden.recall import pure, pure_ledger
from scarwarden.recall.result import RecallResult


class LedgerProofs:
    """The ledger side of one :class:`~scarwarden.gate.proofs.Prover` (its repository,
    playbook path, history to look in and environment)."""

    def __init__(
        self,
        root: Path,
        playbook_rel: str,
        episodes_rel: str,
        *,
        revs: list[str],
        env: Mapping[str, str] | None = None,
        cache: bool = True,
    ) -> None:
        self.root, self.playbook_rel, self.episodes_rel = root, playbook_rel, episodes_rel
        self.revs, self.env, self.cache = revs, env, cache
        self._reader: LedgerReader | None = None
        self._trees: dict[str, str | None] = {}  # tree -> None (usable) or a problem code
        self._known: set[str] | None = None
        self._history: set[str] | None = None
        self._words: dict[tuple[str, str], pure_ledger.EpisodeWords] = {}
        self._changes: dict[str, dict[str, RuleChange]] = {}

    @property
    def reader(self) -> LedgerReader:
        if self._reader is None:
            where = cache_dir(self.root) if self.cache else None
            self._reader = LedgerReader(self.root, self.episodes_rel, env=self.env, cache_dir=where)
        return self._reader

    def recall(
        self,
        book: pure.Postings,
        receipt: receipt_format.Receipt,
        settings: RecallSettings,
        candidates: Any = None,
    ) -> RecallResult | str:
        """Recall (version 2 or 3) at the receipt's playbook and ledger, or why it cannot
        run; ``candidates``: :func:`~scarwarden.recall.pure_ledger.recall_ledger`'s."""
        tree = receipt.ledger_tree
        assert tree is not None  # receipts without one are unverifiable, never re-run
        problem = self.check_tree(tree)
        if problem is not None:
            return problem
        stats = self.reader.stats(tree)
        key = (receipt.playbook, tree)
        if key not in self._words:
            cited = {ep for rule in book.rules.values() for ep in rule.episode_ids}
            self._words[key] = pure_ledger.episode_words(book, self.reader.episodes(tree, cited))
        return pure_ledger.recall_ledger(
            book,
            stats,
            self._words[key],
            receipt.task,
            settings=settings,
            changes=lambda: self.changes(receipt.playbook),
            algorithm=receipt.algorithm,
            candidates=candidates,
        )

    def check_tree(self, tree: str) -> str | None:
        """``None`` when ``tree`` was the episodes folder in this history, else a code."""
        if tree not in self._trees:
            self._trees[tree] = self._check(tree)
        return self._trees[tree]

    def _check(self, tree: str) -> str | None:
        revs = [r for r in self.revs if git.rev_parse(self.root, r) is not None]
        if self._known is None:
            heads = git.tree_ids(self.root, [f"{r}:{self.episodes_rel}" for r in revs], env=self.env)
            self._known = {t or git.EMPTY_TREE for t in heads.values()}
        if tree in self._known:
            return None
        if git.tree_ids(self.root, [tree], env=self.env).get(tree) is None:
            return "receipt-ledger-missing"
        if self._history is None:
            self._history = (
                git.path_trees(self.root, revs, self.episodes_rel, env=self.env) if revs else set()
            )
        if tree in self._history:
            return None
        return "receipt-ledger-rewritten" if self._within(tree, revs) else "receipt-ledger-unknown"

    def _within(self, tree: str, revs: list[str]) -> bool:
        """Whether every episode file of ``tree`` is in the episodes folder of ``revs``
        (same path, same blob): a ledger of real episodes that no commit of this history
        holds as such, as after a rebase rewrote the commits recall ran on. It cannot be
        proved (a subset can be chosen to sway a ranking) nor refused as invented."""

        def files(spec: str) -> set[tuple[str, str]]:
            return {(e.path, e.blob) for e in git.ls_tree(self.root, spec) if counts(e.path, e.mode)}

        mine = files(tree)
        return any(mine <= files(f"{r}:{self.episodes_rel}") for r in revs)

    def changes(self, playbook: str) -> dict[str, RuleChange]:
        """When each rule last changed, as of the playbook version ``playbook``."""
        if playbook not in self._changes:
            found = None
            for rev in self.revs:
                if found is None and git.rev_parse(self.root, rev) is not None:
                    found = last_changes_at(self.root, rev, self.playbook_rel, playbook)
            self._changes[playbook] = found or {}
        return self._changes[playbook]
