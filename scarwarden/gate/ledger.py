"""The ledger a recall receipt names, read from git: what version-2 recall needs of it.

A version-2 receipt names the episodes folder's tree ID (``ledger``); re-deriving it
(:mod:`scarwarden.recall.pure_ledger`) needs that tree's statistics (episodes, tasks
saying each stem, rule applications: :class:`~scarwarden.recall.ledger_stats.LedgerStats`)
and the episodes the playbook cites. Both come from git objects only, never the index:

* the episodes cited are read by name (``YYYY/MM/<id>.yaml``: each month's tree read
  once); where each is (path, blob) is kept per tree, what each blob holds by blob ID
  (``cited.json``); a tree a diff away takes the places the diff leaves untouched;
* the statistics need every episode of the tree: 0.77 s of ``cat-file`` and ~4 s of
  YAML at 100k episodes (shared/NOTES.md), far over a hook's budget. So they are
  derived once per tree and kept in the git folder, keyed by tree ID (a tree ID fixes
  every byte of every episode in it: an entry cannot go stale): the tree's entry
  (``.git/scarwarden/ledger/<tree>.json``: the counts, task words and month trees), and
  per month tree what grows, each part checked when read (``months/``,
  :mod:`scarwarden.gate.ledger_months`). A tree not in the cache is derived from the
  newest cached one by ``git diff`` between the two trees (reading the episodes that
  differ, rewriting their months), or from scratch when there is none; an entry of the
  previous format is converted. Whoever can write to ``.git`` can also rewrite the
  hooks: the cache adds no way round the gate. CI carries it from run to run
  (``action.yml``; :func:`warm`; docs/receipts.md, "A fresh clone");
  ``SCARWARDEN_LEDGER_CACHE=off`` derives every tree from its episodes.

Which files count is the index's rule (:mod:`scarwarden.index.build`): valid episodes
at ``YYYY/MM/<id>.yaml``, the first in path order when two share an ID (a tree where an
ID is in two month folders, a history the gate refuses, is derived but not kept: its
months do not add up to it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from functools import partial
from pathlib import Path
from typing import Any

from scarwarden import git
from scarwarden.errors import GitError, ScarwardenError
from scarwarden.files.episodes import Episode, parse_episode_bytes
from scarwarden.gate.ledger_files import cache_dir, cited_doc, counts, file_blob, untouched_by_diff
from scarwarden.gate.ledger_months import Month, MonthStore, TreeStats, count_task, from_whole
from scarwarden.gate.ledger_store import CACHE_FORMAT, CITED, TreeEntries
from scarwarden.recall.ledger_stats import LedgerStats

__all__ = ["CACHE_FORMAT", "CITED", "LedgerReader", "cache_dir", "counts", "warm"]

#: Above this many changed files, deriving from scratch is as cheap as from a diff.
MAX_DIFF = 20_000
#: Trees whose statistics one reader keeps in memory (a walk's receipts may name many).
KEEP_IN_MEMORY = 3
#: The cited episodes' cache: its file, most episodes kept, trees whose places it keeps.
MAX_CITED_TREES = 6
MAX_SAVES = 2


class LedgerReader:
    """Reads ledger trees of one repository; each tree's statistics once per run."""

    def __init__(
        self,
        root: Path,
        episodes_rel: str,
        *,
        env: Mapping[str, str] | None = None,
        cache_dir: Path | None = None,
    ) -> None:
        self.root, self.episodes_rel, self.env, self.cache_dir = root, episodes_rel, env, cache_dir
        self._stats: dict[str, LedgerStats] = {}  # oldest first
        self._saves = 0
        self._cited: dict[str, list[Any]] | None = None
        #: tree -> cited episode ID -> [its path, its blob] in that tree, or None (not in it).
        self._where: dict[str, dict[str, list[str] | None]] = {}
        #: tree -> (the tree its statistics were derived from, the files that differ).
        self._bases: dict[str, tuple[str, set[str]]] = {}
        #: What reading cost, for the bench and ``--json`` stats.
        self.read_files = 0
        self.derived: dict[str, str] = {}
        self._months = None if cache_dir is None else MonthStore(cache_dir, episodes_rel)
        self._entries = None if cache_dir is None else TreeEntries(cache_dir, episodes_rel)
        self._tree = partial(TreeStats, store=self._months, derive=self._month_from_git)

    # -- the statistics ----------------------------------------------------------

    def stats(self, tree: str) -> LedgerStats:
        """The statistics of ``tree`` (an existing tree of this repository)."""
        stats = self._stats_of(tree, scratch=True)
        assert stats is not None  # derived from scratch when nothing else serves
        return stats

    def stats_by_change(self, tree: str) -> LedgerStats | None:
        """``tree``'s statistics when they cost what changed: in memory, cached, or
        derived by a diff from a tree that is (not cached: the gate's own proofs choose
        which trees to keep); ``None`` when only every episode of the tree gives them."""
        return self._stats_of(tree, scratch=False)

    def _stats_of(self, tree: str, *, scratch: bool) -> LedgerStats | None:
        if tree in self._stats:
            self._stats[tree] = self._stats.pop(tree)  # the most recently used last
            return self._stats[tree]
        stats = self._load(tree) or self._derive(tree, scratch=scratch, save=scratch)
        if stats is not None:
            self._stats[tree] = stats
            while len(self._stats) > KEEP_IN_MEMORY:
                del self._stats[next(iter(self._stats))]
        return stats

    def _derive(self, tree: str, *, scratch: bool = True, save: bool = True) -> LedgerStats | None:
        stats: TreeStats | None = None
        if self._stats:  # the tree this run read last: usually the closest
            last = next(reversed(self._stats))
            stats = self._from_base(last, tree, self._stats[last])
        elif self._entries is not None and (cached := self._entries.newest(tree)) is not None:
            stats = self._from_base(cached, tree, self._load(cached))
        if stats is None:
            if not scratch:
                return None
            stats = self._from_scratch(tree)
            self.derived[tree] = "whole tree"
        if save and self._saves < MAX_SAVES:
            self._saves += 1
            self._save(tree, stats)
        return stats

    def _from_scratch(self, tree: str) -> TreeStats:
        entries = sorted((e.path, e.blob) for e in git.ls_tree(self.root, tree) if counts(e.path, e.mode))
        folders = sorted({p.rsplit("/", 1)[0] for p, _b in entries})
        ids = git.tree_ids(self.root, [f"{tree}:{f}" for f in folders], env=self.env)
        months = {f: Month() for f in folders}
        task_df: Counter[str] = Counter()
        seen: set[str] = set()
        exact = True
        blobs = git.cat_file_stream(self.root, [b for _p, b in entries], env=self.env)
        for path, ep in self._parse(entries, blobs):
            if ep.id in seen:  # the index keeps the first file in path order
                exact = False  # an ID in two month folders: the months do not add up
                continue
            seen.add(ep.id)
            months[path.rsplit("/", 1)[0]].add(ep)
            count_task(task_df, ep, 1)
        where = {f: t for f in folders if (t := ids.get(f"{tree}:{f}")) is not None}
        return self._tree(len(seen), task_df, where, months, exact=exact)

    def _from_base(self, base: str, tree: str, stats: LedgerStats | None) -> TreeStats | None:
        """``tree``'s statistics from ``base``'s and the files that differ: the month
        folders the diff touches are derived from ``base``'s, the others are ``base``'s;
        ``None`` when the diff is too large to be worth it (or git cannot make it)."""
        if not isinstance(stats, TreeStats):
            return None
        try:
            changes = git.diff_name_status(self.root, base, tree, env=self.env)
        except GitError:
            return None
        changes = [c for c in changes if counts(c.path)]
        if len(changes) > MAX_DIFF:
            return None
        self.derived[tree] = f"diff from {base[:12]}"
        self._bases[tree] = (base, {c.path for c in changes})
        touched = sorted({c.path.rsplit("/", 1)[0] for c in changes})
        now = git.tree_ids(self.root, [f"{tree}:{f}" for f in touched], env=self.env)
        months = {f: stats.month(f).copy() if f in stats.folders else Month() for f in touched}
        task_df, count = Counter(stats.task_df), stats.task_count
        old = [(c.path, f"{base}:{c.path}") for c in changes if c.status != "A"]
        new = [(c.path, f"{tree}:{c.path}") for c in changes if c.status != "D"]
        for items, sign in ((old, -1), (new, 1)):
            blobs = iter(git.cat_file_batch(self.root, [s for _p, s in items], env=self.env))
            for path, ep in self._parse(items, blobs):
                months[path.rsplit("/", 1)[0]].add(ep, sign)
                count_task(task_df, ep, sign)
                count += sign
        folders = dict(stats.folders)
        for f in touched:
            folders.pop(f, None)
            if (month_tree := now.get(f"{tree}:{f}")) is not None:
                folders[f] = month_tree
        kept = {f: m for f, m in months.items() if f in folders}
        return self._tree(count, task_df, folders, kept, exact=stats.exact)

    def _month_from_git(self, folder: str, tree: str) -> Month:
        """A month folder's share from its episodes (its entry missing or damaged), kept."""
        entries = sorted(
            (f"{folder}/{e.path}", e.blob)
            for e in git.ls_tree(self.root, tree)
            if counts(f"{folder}/{e.path}", e.mode)
        )
        month = Month()
        blobs = git.cat_file_stream(self.root, [b for _p, b in entries], env=self.env)
        for _path, ep in self._parse(entries, blobs):
            month.add(ep)
        if self._months is not None:
            self._months.save(folder, tree, month)
        return month

    def _parse(
        self, items: list[tuple[str, str]], contents: Iterator[bytes | None]
    ) -> Iterable[tuple[str, Episode]]:
        """(path, episode) of the valid episodes among ``items`` ((path in the tree,
        object), in order)."""
        for (path, _obj), raw in zip(items, contents, strict=True):
            self.read_files += 1
            if raw is None:
                continue
            try:
                yield (
                    path,
                    parse_episode_bytes(raw, f"{self.episodes_rel}/{path}", episodes_dir=self.episodes_rel),
                )
            except ScarwardenError:
                continue  # the index skips an invalid file too

    # -- the episodes a playbook cites --------------------------------------------

    def episodes(self, tree: str, ids: Iterable[str]) -> dict[str, Episode]:
        """The valid episodes with these IDs in ``tree``. Where each one is (its path and
        blob) is kept per tree; what a blob holds is kept by blob ID: the usual commit
        reads neither from git again."""
        want = sorted(set(ids))
        where = self._where_in(tree)
        if missing := [i for i in want if i not in where]:
            where.update(self._locate(tree, missing))
        known = self._load_cited()
        found: dict[str, Episode] = {}
        items: list[tuple[str, str]] = []
        for episode_id in want:
            if (place := where[episode_id]) is None:
                continue
            path, blob = place
            row = known.get(blob)
            # A blob's content fixes its ID and date, hence the one path it is valid at.
            if row is not None and path == f"{row[1][0:4]}/{row[1][5:7]}/{row[0]}.yaml":
                found[episode_id] = Episode(cited_doc(row))
            else:
                items.append((path, blob))
        contents = iter(git.cat_file_batch(self.root, [b for _p, b in items], env=self.env))
        fresh = {blob: ep for (_p, blob), ep in zip(items, self._parse_each(items, contents), strict=True)}
        for blob, ep in fresh.items():
            if ep is not None:
                found.setdefault(ep.id, ep)
                known[blob] = [ep.id, ep.at, ep.task, ep.get("correction")]
        if missing or any(ep is not None for ep in fresh.values()):
            self._save_cited(known)
        return found

    def places(
        self, tree: str, ids: Iterable[str], base: str | None = None
    ) -> dict[str, list[str] | None] | None:
        """Each of ``ids`` -> [path, blob] in ``tree`` (``None``: none valid): kept for
        ``tree`` (``cited.json``), carried from ``base``'s or the newest kept tree's by a
        diff touching none of them, or found by the statistics' months when they cost what
        changed (:meth:`stats_by_change`); ``None`` otherwise (only the whole ledger tells)."""
        want = sorted(set(ids))
        self._load_cited()
        known = self._where.get(tree)
        for start in dict.fromkeys([base, *list(self._where)[-1:]]):
            if (known is None or any(i not in known for i in want)) and start not in (None, tree):
                known = self._carried(str(start), tree, want)
        if known is not None and all(i in known for i in want):
            return {i: known[i] for i in want}
        if self.stats_by_change(tree) is None:
            return None
        where = self._where_in(tree)
        if missing := [i for i in want if i not in where]:
            where.update(self._locate(tree, missing))
            self._save_cited(self._load_cited())
        return {i: where[i] for i in want}

    def _carried(self, base: str, tree: str, want: list[str]) -> dict[str, list[str] | None] | None:
        old = self._where.get(base)
        touched = None if old is None else untouched_by_diff(self.root, base, tree, old, want, self.env)
        if old is None or touched is None:
            return None
        self._where[base] = self._where.pop(base)  # used: kept longest (the newest last)
        self._where[tree] = {i: p for i, p in old.items() if i not in touched}
        self._save_cited(self._load_cited())
        return self._where[tree]

    def _where_in(self, tree: str) -> dict[str, list[str] | None]:
        """Where the cited episodes known so far are in ``tree``: cached, or carried over
        from the tree its statistics were derived from. The diff between the two names
        every file that differs, so an episode whose file (any file of its name) is not
        in it has the same path and blob; the others are looked up again."""
        self._load_cited()
        if tree not in self._where:
            self.stats(tree)  # a tree derived by a diff says from which, and what differs
        if tree not in self._where and tree in self._bases:
            base, changed = self._bases[tree]
            if base in self._where:
                touched = {p.rsplit("/", 1)[-1].removesuffix(".yaml") for p in changed}
                self._where[tree] = {i: p for i, p in self._where[base].items() if i not in touched}
        where = self._where.pop(tree, {})
        self._where[tree] = where  # the most recently used last
        return where

    def _locate(self, tree: str, ids: list[str]) -> dict[str, list[str] | None]:
        """Path and blob of each of ``ids`` in ``tree`` (month folders from the tree's
        statistics, blobs from git), ``None`` for those it does not hold."""
        months = self.stats(tree).months
        wanted = sorted({months[i] for i in ids if i in months})
        # Each month's tree object read once (one cat-file) and searched for the names in
        # memory (a C find per ID). An ls-tree naming the paths matched every entry
        # against every path (0.5 s for 145 IDs at 100k episodes); naming the files to
        # cat-file as <tree>:<path> re-read a month's tree for every file.
        specs = [f"{tree}:{m}" for m in wanted]
        raws = dict(zip(wanted, git.cat_file_batch(self.root, specs, env=self.env), strict=True))
        found: dict[str, list[str] | None] = {}
        for i in ids:
            raw = raws.get(months.get(i, ""))
            blob = None if raw is None else file_blob(raw, f"{i}.yaml", len(tree) // 2)
            found[i] = None if blob is None else [f"{months[i]}/{i}.yaml", blob]
        return found

    def _parse_each(
        self, items: list[tuple[str, str]], contents: Iterator[bytes | None]
    ) -> list[Episode | None]:
        """Each item's valid episode, or ``None`` (in order)."""
        pairs = zip(items, contents, strict=True)
        return [next((ep for _p, ep in self._parse([item], iter([raw]))), None) for item, raw in pairs]

    # -- the cache ------------------------------------------------------------------

    def _load_cited(self) -> dict[str, list[Any]]:
        """Blob ID -> (ID, at, task, correction) of valid episodes a playbook cited: what
        recall needs of them, kept by content address (``cited.json``), so a commit
        does not parse the same cited episodes again."""
        if self._cited is None:
            self._cited = {}
            if self._entries is not None and (data := self._entries.read_cited()) is not None:
                self._cited = data[0]
                self._where = {**data[1], **self._where}
        return self._cited

    def _save_cited(self, known: dict[str, list[Any]]) -> None:
        if self._entries is not None:
            self._entries.write_cited(known, dict(list(self._where.items())[-MAX_CITED_TREES:]))

    def _load(self, tree: str) -> TreeStats | None:
        """``tree``'s entry, checked (``None``: missing or damaged); the previous format's converted."""
        if self._entries is None or (found := self._entries.read(tree)) is None:
            return None
        fmt, body = found
        try:
            if fmt == CACHE_FORMAT:
                return TreeStats.from_head(body, self._months, self._month_from_git)
            return self._convert(tree, LedgerStats.from_bytes(body))
        except (ValueError, KeyError, TypeError, AttributeError):
            return None

    def _convert(self, tree: str, old: LedgerStats) -> TreeStats | None:
        """An entry of the previous format (the statistics whole; a CI cache saved before
        the split), split by month and kept in this one: no episode read."""
        folders = sorted(set(old.months.values()))
        ids = git.tree_ids(self.root, [f"{tree}:{f}" for f in folders], env=self.env)
        split = from_whole(old, {f: ids.get(f"{tree}:{f}") for f in folders})
        if split is None:
            return None
        stats = self._tree(old.task_count, Counter(old.task_df), *split)
        self.derived[tree] = "converted"
        self._save(tree, stats)
        return stats

    def _save(self, tree: str, stats: TreeStats) -> None:
        if self._entries is not None and self._months is not None and stats.exact:
            self._entries.write(tree, stats, self._months)


def warm(root: Path, rev: str = "HEAD") -> str | None:
    """Derive and cache the statistics of ``rev``'s episodes folder, and keep its folders'
    names (the next range's boundary reads no month tree): what the CI action runs after the
    gate, so that the next job, restoring the cache, starts from the tree its range starts
    from (docs/receipts.md, "A fresh clone"). Returns the tree (``None``: no episodes folder
    at ``rev``, or no cache folder)."""
    from scarwarden.files.playbook import parse
    from scarwarden.gate.boundary import Boundary
    from scarwarden.repo import open_repo

    memory = open_repo(root, initialised=False)
    tree = git.tree_ids(memory.root, [f"{rev}:{memory.episodes_rel}"]).get(f"{rev}:{memory.episodes_rel}")
    where = cache_dir(memory.root)
    if tree is None or where is None:
        return None
    reader = LedgerReader(memory.root, memory.episodes_rel, cache_dir=where)
    if isinstance(stats := reader.stats(tree), TreeStats):
        stats.keep_months()  # the next job's proofs read each month's tallies: not converted
    Boundary(memory.root, [rev], memory.memory_rel, memory.episodes_rel, memory.playbook_rel).keep_names()
    # Where the playbook's cited episodes are (cited.json): a receipt's check reads no month.
    playbook = git.cat_file_batch(memory.root, [f"{rev}:{memory.playbook_rel}"])[0]
    try:
        book = parse(playbook.decode("utf-8", "replace")) if playbook is not None else None
    except ScarwardenError:
        book = None  # the gate reports it; nothing to locate
    if book is not None:
        reader.episodes(tree, {ep for rule in book.rules for ep in rule.episode_ids})
    return tree


if __name__ == "__main__":  # python -m scarwarden.gate.ledger [REV]: the CI action's last step
    import sys

    print(warm(Path("."), sys.argv[1] if len(sys.argv) > 1 else "HEAD") or "no ledger tree to cache")
