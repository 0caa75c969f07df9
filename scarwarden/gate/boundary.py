"""The trees a checked range starts from (its boundary), read only for what it needs.

``check --from-ref A --to-ref B`` and the reference-transaction and pre-push hooks
trust the commits just outside the range: their episodes resolve citations and collide
with added IDs. Listing a 100k-episode tree to learn that costs 0.6 s; so the boundary
gives its playbook blob (one literal pathspec) and, for the few episode IDs the range
adds or cites, the paths they have there: its folders (``git ls-tree -d``, level by
level, so the month folders' trees, where the 100k files are, are never parsed) times
those IDs, probed with one ``git cat-file --batch-check``. Many IDs (a large import)
fall back to one listing, which then costs what the change does.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from scarwarden import git
from scarwarden.gate import policy as rules

#: Above this many ``<commit>:<folder>/<ID>.yaml`` probes, one listing is cheaper.
MAX_PROBES = 4096


class Boundary:
    """The parents outside a range, trusted as they are."""

    def __init__(self, root: Path, commits: Iterable[str], memory_rel: str, ep_rel: str, pb_rel: str) -> None:
        self.root = root
        self.commits = sorted(set(commits))
        self.memory_rel = memory_rel
        self.ep_rel = ep_rel.rstrip("/")
        self.pb_rel = pb_rel

    def playbooks(self) -> dict[str, str | None]:
        """Each boundary commit -> its playbook's blob (``None``: it has none)."""
        found: dict[str, str | None] = {}
        for sha in self.commits:
            found[sha] = None
            for entry in git.ls_tree(self.root, sha, self.pb_rel):
                if entry.path == self.pb_rel:
                    found[sha] = entry.blob
        return found

    def episode_paths(self, ids: Iterable[str]) -> dict[str, set[str]]:
        """Episode ID -> every path under the episodes folder, at any depth, where a
        boundary commit has a file named ``<ID>.yaml`` (only for ``ids``)."""
        # A name with '/' can never be a file name; one with a line break cannot be
        # probed line by line (it is looked up in the listing instead).
        wanted = sorted({i for i in ids if "/" not in i})
        if not wanted or not self.commits:
            return {}
        folders = {sha: self._folders(sha) for sha in self.commits}
        specs = [f"{sha}:{d}/{ep}.yaml" for sha, ds in folders.items() for d in ds for ep in wanted]
        if len(specs) > MAX_PROBES or any("\n" in s or "\r" in s for s in specs):
            return self._listed(set(wanted))
        exists = git.objects_exist(self.root, specs)
        trees = {f"{sha}:{d}" for sha, ds in folders.items() for d in ds}
        found: dict[str, set[str]] = {}
        for spec in specs:
            if exists.get(spec) and spec not in trees:  # a listing shows files, not folders
                path = spec.split(":", 1)[1]
                found.setdefault(rules.episode_id_of(path) or "", set()).add(path)
        return found

    def _folders(self, sha: str) -> list[str]:
        """Every folder under the episodes folder, level by level, without reading the
        month folders' trees (what grows with the ledger: ``ls-tree -r -d`` parses all
        100k entries to find the few dozen folders). Below a ``YYYY/MM`` month folder the
        gate allows no folder, so none is looked for; any other folder (a misplaced
        copy's) is listed to any depth."""
        found = [self.ep_rel]
        level = [self.ep_rel]
        odd: list[str] = []
        for depth in (1, 2):
            children = [d for d in git.ls_subfolders(self.root, sha, level) if rules.is_under(d, self.ep_rel)]
            canonical = [d for d in children if _canonical(d, depth)]
            odd += [d for d in children if not _canonical(d, depth)]
            found += canonical
            level = canonical
            if not level:
                break
        for folder in odd:  # rare: listed whole, to any depth
            found += [d for d in git.ls_tree_dirs(self.root, sha, folder) if rules.is_under(d, self.ep_rel)]
        return sorted(set(found))

    def _listed(self, wanted: set[str]) -> dict[str, set[str]]:
        """The same answer from one listing of each boundary tree."""
        found: dict[str, set[str]] = {}
        for sha in self.commits:
            for entry in git.ls_tree(self.root, sha, self.memory_rel):
                if rules.is_under(entry.path, self.ep_rel):
                    ep = rules.episode_id_of(entry.path)
                    if ep is not None and ep in wanted:
                        found.setdefault(ep, set()).add(entry.path)
        return found


def _canonical(folder: str, depth: int) -> bool:
    """A year folder (``2026``) at depth 1, a month folder (``01``-``12``) at depth 2."""
    name = folder.rsplit("/", 1)[-1]
    if depth == 1:
        return len(name) == 4 and name.isdigit()
    return len(name) == 2 and name.isdigit() and 1 <= int(name) <= 12
