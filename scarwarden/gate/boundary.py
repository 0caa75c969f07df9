"""The trees a checked range starts from (its boundary), read only for what it needs.

``check --from-ref A --to-ref B`` and the reference-transaction and pre-push hooks
trust the commits just outside the range: their episodes resolve citations and collide
with added IDs. Listing a 100k-episode tree to learn that costs 0.6 s; so the boundary
gives its playbook blob (one literal pathspec) and, for the few episode IDs the range
adds or cites, the paths they have there: its folders (``git ls-tree -r -d``, a few
dozen lines) times those IDs, probed with one ``git cat-file --batch-check``. Many IDs
(a large import) fall back to one listing, which then costs what the change does.
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
        return [
            d
            for d in git.ls_tree_dirs(self.root, sha, self.ep_rel)
            if d == self.ep_rel or rules.is_under(d, self.ep_rel)
        ]

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
