"""The trees a checked range starts from (its boundary), read only for what it needs.

``check --from-ref A --to-ref B`` and the reference-transaction and pre-push hooks
trust the commits just outside the range: their episodes resolve citations and collide
with added IDs. Listing a 100k-episode tree to learn that costs 0.6 s; so the boundary
gives its playbook blob (one literal pathspec) and, for the episode IDs the range adds
or cites, the paths they have there: its folders (``git ls-tree -d``, level by level),
then each folder's tree object read once (one ``git cat-file --batch`` for all) and
searched for ``<ID>.yaml`` in memory. Asking git for ``<commit>:<folder>/<ID>.yaml``
instead made git parse a whole month tree for every ID and every folder (a 50-episode
move cost 9.8 s at 1M episodes, issue 30); now the trees are read once whatever the
number of IDs, each ID costs one search of bytes already read (a C ``find``), and
above :data:`MAX_SEARCHES` IDs each tree is split once at its NULs into a set of name
candidates instead (one C split: at 100k episodes 39 ms for every month tree against
139 ms for a regex parse and 165 ms for 50 finds), so there is no cliff by batch size.
The trees' bytes are still read whole: what grows with the ledger, in C.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from scarwarden import git
from scarwarden.gate import policy as rules
from scarwarden.gate import tree_names
from scarwarden.gate.ledger_files import cache_dir

#: Above this many IDs, each tree is split once into name candidates rather than
#: searched once per ID (a split costs ~12 searches).
MAX_SEARCHES = 8
_FILE_MODES = tree_names.FILE_MODES


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
        # A name with '/' can never be a file name.
        wanted = sorted({i for i in ids if "/" not in i})
        if not wanted or not self.commits:
            return {}
        specs = [f"{sha}:{d}" for sha in self.commits for d in self._folders(sha)]
        if any("\n" in s or "\r" in s for s in specs):
            return self._listed(set(wanted))  # a folder git cannot be asked about by line
        trees, kept, raws = self._trees(specs)
        names = {f"{ep}.yaml".encode("utf-8", "surrogateescape"): ep for ep in wanted}
        lengths = {len(n) + 1 for n in names}
        parsed: dict[str, set[bytes]] = {}
        found: dict[str, set[str]] = {}
        for spec, tree in trees.items():
            if tree is not None and tree in kept:
                hits = [n for n in names if n in kept[tree]]
            elif tree is None or not (raw := raws.get(tree)):
                continue
            elif len(names) > MAX_SEARCHES:
                if tree not in parsed:
                    parsed[tree] = _name_tails(raw, lengths)
                hits = [n for n in names if b" " + n in parsed[tree] and _has_file(raw, n)]
            else:
                hits = [n for n in names if _has_file(raw, n)]
            folder = spec.split(":", 1)[1]
            for name in hits:
                found.setdefault(names[name], set()).add(
                    f"{folder}/{name.decode('utf-8', 'surrogateescape')}"
                )
        return found

    def keep_names(self) -> None:
        """Read and keep the names of every boundary folder's tree (what the CI action's
        last step leaves for the next job, with the ledger statistics)."""
        specs = [f"{sha}:{d}" for sha in self.commits for d in self._folders(sha)]
        if not any("\n" in s or "\r" in s for s in specs):
            self._trees(specs)

    def _trees(
        self, specs: list[str]
    ) -> tuple[dict[str, str | None], dict[str, tree_names.Names], dict[str, bytes | None]]:
        """(spec -> its tree, tree -> its kept names, tree -> its raw object): each tree
        is looked up in the names kept per tree ID (:mod:`scarwarden.gate.tree_names`),
        and the others read from git (one ``cat-file --batch``), then kept."""
        trees = git.tree_ids(self.root, specs)
        unique = sorted({t for t in trees.values() if t})
        store = tree_names.NamesCache(cache_dir(self.root))
        kept = {t: n for t in unique if (n := store.load(t)) is not None}
        missing = [t for t in unique if t not in kept]
        raws = dict(zip(missing, git.cat_file_batch(self.root, missing), strict=True))
        if store.folder is not None:
            for tree, raw in raws.items():
                if raw is not None:
                    listed = tree_names.file_names(raw, len(tree) // 2)
                    kept[tree] = tree_names.Names.of(listed)
                    store.save(tree, kept[tree], len(listed))
        return trees, kept, raws

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


def _has_file(tree: bytes, name: bytes) -> bool:
    """Whether a raw tree object (``<mode> <name>\\0<hash>`` entries) has a file ``name``."""
    needle = b" " + name + b"\0"
    at = tree.find(needle)
    while at >= 0:
        if tree[max(0, at - 6) : at] in _FILE_MODES:
            return True
        at = tree.find(needle, at + 1)
    return False


def _name_tails(tree: bytes, lengths: set[int]) -> set[bytes]:
    """The last ``lengths`` bytes before each NUL of a raw tree object: every entry's
    name, with the space before it, is among them (a name holds no NUL); one C split, no
    parse (~3x faster than a regex over the entries). Candidates only: each one found
    is confirmed by :func:`_has_file`."""
    pieces = tree.split(b"\0")
    return {piece[-k:] for k in lengths for piece in pieces}
