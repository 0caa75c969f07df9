"""``scarwarden verify``: prove a history honest, one pass over it.

For every commit (oldest first, parents before children) it proves that no episode
file was modified, renamed, deleted or changed mode after it was added, that every
added episode was valid and unique, and that the playbook parsed, kept its rule IDs
on record and cited only episodes in that commit's own tree. A history written with
``git commit --no-verify`` (or rewritten) is caught here; each problem is reported
once, at the first commit that introduced it.

Cost: one ``git rev-list``, one ``git diff-tree --stdin`` for every (commit, parent)
pair, one ``git cat-file --batch`` for every added episode and playbook version, and one
``--batch-check`` for the citations and IDs to look up. A commit whose playbook did not
change re-checks only the rules citing an episode that left its tree, because its
parent's playbook was proven against a tree that had every episode it still has.

:func:`walk` is shared with ``scarwarden check --from-ref A --to-ref B``; with a range,
the trees the range starts from (its boundary) are trusted and listed once.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from scarwarden import git
from scarwarden.config import load_config
from scarwarden.errors import GitError, UsageError
from scarwarden.files import playbook as pb
from scarwarden.gate import policy as rules
from scarwarden.gate.policy import GateProblem
from scarwarden.repo import MemoryRepo

RawChange = tuple[str, str, str, str, git.Change]


@dataclass
class WalkResult:
    """What a walk proved or found (``verify --json`` prints :meth:`to_json`)."""

    rev_range: str
    problems: list[GateProblem] = field(default_factory=list)
    commits: int = 0
    memory_commits: int = 0
    episodes: int = 0
    playbooks: int = 0
    rules: int = 0
    citations: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        def plural(count: int, noun: str) -> str:
            return f"{count} {noun}{'' if count == 1 else 's'}"

        counts = (f"{plural(self.commits, 'commit')} ({self.memory_commits} touching memory), "
                  f"{plural(self.episodes, 'episode')}, "
                  f"{plural(self.playbooks, 'playbook version')}, "
                  f"{plural(self.rules, 'rule version')} and "
                  f"{plural(self.citations, 'citation')} checked")
        if self.ok:
            return f"scarwarden verify: OK, history {self.rev_range} is honest: {counts}"
        n = len(self.problems)
        return f"scarwarden verify: {n} problem{'s' if n != 1 else ''} in {self.rev_range}: {counts}"

    def to_json(self) -> dict[str, object]:
        return {"ok": self.ok, "range": self.rev_range, "commits": self.commits,
                "memory_commits": self.memory_commits, "episodes": self.episodes,
                "playbooks": self.playbooks, "rules": self.rules,
                "citations": self.citations,
                "problems": [p.to_json() for p in self.problems],
                "summary": self.summary()}


def _parse_raw(data: bytes) -> list[RawChange]:
    """``--raw -z`` records: ``:modes blobs status\\0path\\0[new path\\0]``."""
    fields = [f.decode("utf-8", "surrogateescape") for f in data.split(b"\0")]
    out: list[RawChange] = []
    i = 0
    while i < len(fields) and fields[i].startswith(":"):
        old_mode, new_mode, old_blob, new_blob, status = fields[i][1:].split(" ")[:5]
        if status[0] in "RC":
            out.append((old_mode, new_mode, old_blob, new_blob,
                        git.Change(status[0], fields[i + 2], fields[i + 1], status[1:])))
            i += 3
        else:
            out.append((old_mode, new_mode, old_blob, new_blob, git.Change(status[0], fields[i + 1])))
            i += 2
    return out


def _diff_pairs(root: Path, pairs: list[tuple[str, str | None]], pathspec: str
                ) -> list[list[RawChange]]:
    """One ``git diff-tree --stdin`` for every (commit, parent) pair, in order; a root
    commit (parent ``None``) is compared with the empty tree."""
    if not pairs:
        return []
    request = "".join(f"{c} {p}\n" if p else f"{c}\n" for c, p in pairs).encode()
    out = git.run(root, "diff-tree", "--stdin", "--always", "--root", "-r", "--raw", "-z",
                  "--no-abbrev", "-M", "--format=%x01%H", "--", pathspec, input=request)
    blocks = out.split(b"\x01")[1:]
    result = []
    for block in blocks:
        _sha, _, rest = block.partition(b"\0")
        result.append(_parse_raw(rest.lstrip(b"\n")))
    if len(result) != len(pairs):
        raise GitError(f"git diff-tree answered {len(result)} of {len(pairs)} diffs")
    return result


def _exists(root: Path, specs: list[str]) -> dict[str, bool]:
    """``rev:path`` -> whether it exists, with one ``git cat-file --batch-check``."""
    if not specs:
        return {}
    out = git.run(root, "cat-file", "--batch-check",
                  input="".join(f"{s}\n" for s in specs).encode("utf-8", "surrogateescape"))
    lines = out.decode("utf-8", "surrogateescape").split("\n")
    return {spec: not line.endswith(" missing") for spec, line in zip(specs, lines[:len(specs)], strict=True)}


class _Walk:
    def __init__(self, repo: MemoryRepo, rev_range: str) -> None:
        self.repo = repo
        self.root = repo.root
        self.ep_rel = repo.episodes_rel
        self.pb_rel = repo.playbook_rel
        self.result = WalkResult(rev_range)
        self.seen: set[tuple[str, ...]] = set()
        self.found: list[tuple[int, GateProblem]] = []

    def report(self, order: int, key: tuple[str, ...], p: GateProblem) -> None:
        """Keep the first commit per problem: later commits repeating it are not news."""
        if key not in self.seen:
            self.seen.add(key)
            self.found.append((order, p))

    def run(self) -> WalkResult:
        try:
            listing = git.run(self.root, "rev-list", "--reverse", "--topo-order", "--parents",
                              self.result.rev_range, "--").decode()
        except GitError as exc:
            raise UsageError(
                f"cannot walk {self.result.rev_range!r}: it is not a commit range here",
                hint="give a branch, a SHA or a range such as origin/main..HEAD (in CI, "
                     f"fetch the history first); git said: {exc.message}") from None
        commits = [(line.split()[0], line.split()[1:]) for line in listing.splitlines() if line]
        self.result.commits = len(commits)
        if not commits:
            return self.result
        order = {sha: i for i, (sha, _) in enumerate(commits)}
        id_paths: dict[str, set[str]] = {}
        playbook_blob: dict[str, str | None] = {}
        for parent in {p for _, ps in commits for p in ps if p not in order}:
            # The range's boundary: trusted, listed once, so its episodes resolve.
            playbook_blob[parent] = None
            for entry in git.ls_tree(self.root, parent, self.repo.memory_rel):
                if entry.path == self.pb_rel:
                    playbook_blob[parent] = entry.blob
                elif rules.is_under(entry.path, self.ep_rel):
                    ep = rules.episode_id_of(entry.path)
                    if ep:
                        id_paths.setdefault(ep, set()).add(entry.path)
        pairs: list[tuple[str, str | None]] = []
        for sha, parents in commits:
            pairs += [(sha, p) for p in parents] or [(sha, None)]
        diffs = iter(_diff_pairs(self.root, pairs, self.repo.memory_rel))
        per_commit = [(sha, parents, [next(diffs) for _ in range(max(1, len(parents)))])
                      for sha, parents in commits]

        # Pass 1: which playbook each commit has, and every blob to read.
        added: list[tuple[int, str, str, str]] = []  # (order, commit, path, blob)
        for i, (sha, parents, cdiffs) in enumerate(per_commit):
            blob = playbook_blob.get(parents[0]) if parents else None
            for _om, _nm, _ob, new_blob, change in cdiffs[0]:
                if change.path == self.pb_rel:
                    blob = None if change.status == "D" else new_blob
                elif change.old_path == self.pb_rel:
                    blob = None
            playbook_blob[sha] = blob
            if any(cdiffs):
                self.result.memory_commits += 1
            other_added = [{c.path for *_x, c in d if c.status in "AR"} for d in cdiffs[1:]]
            for _om, new_mode, _ob, new_blob, change in cdiffs[0]:
                if change.status not in "AR" or not rules.is_under(change.path, self.ep_rel):
                    continue
                if change.status == "R" and rules.is_under(change.old_path or "", self.ep_rel):
                    continue  # a rename inside the ledger: reported as such below
                if not all(change.path in o for o in other_added):
                    continue  # merged in from another parent: checked in its own commit
                bad = rules.added_path_problem(change.path, new_mode, self.ep_rel)
                if bad is not None:
                    self.report(i, ("path", change.path), _at(bad, sha))
                elif change.path.endswith(".yaml"):
                    added.append((i, sha, change.path, new_blob))
                    ep = rules.episode_id_of(change.path)
                    if ep:
                        id_paths.setdefault(ep, set()).add(change.path)
        books = sorted({b for b in playbook_blob.values() if b})
        wanted = [b for *_x, b in added] + books
        contents = dict(zip(wanted, git.cat_file_batch(self.root, wanted), strict=True))
        self.result.playbooks = len(books)

        # Pass 2: the verdicts, and the lookups they need.
        for i, sha, path, blob in added:
            episode, found = rules.validate_episode(contents.get(blob), path, self.ep_rel)
            self.result.episodes += 1
            for p in found:
                self.report(i, ("invalid", path, p.message), _at(p, sha))
        parsed: dict[str, tuple[pb.Playbook | None, list[GateProblem]]] = {}

        def book(blob: str | None) -> tuple[pb.Playbook | None, list[GateProblem]]:
            if blob is None:
                return pb.empty(), []
            if blob not in parsed:
                parsed[blob] = rules.parse_playbook(contents.get(blob), self.pb_rel)
            return parsed[blob]

        cites: list[tuple[int, str, pb.Rule, str, str, int | None]] = []
        probes: list[tuple[int, str, str, str, str]] = []
        removed: dict[str, str] = {}
        for i, (sha, parents, cdiffs) in enumerate(per_commit):
            lost: set[str] = set()
            for n, d in enumerate(cdiffs):
                for old_mode, new_mode, old_blob, new_blob, change in d:
                    old_path = change.old_path or change.path
                    if change.status == "A" or not rules.is_under(old_path, self.ep_rel):
                        continue
                    status = change.status
                    if status == "R" and n > 0:
                        # Against a merge's other parent, a "rename" pairs the file it
                        # dropped with one the first parent added: it is a deletion.
                        status = "D"
                    if status in "DR":
                        lost.add(rules.episode_id_of(old_path) or "")
                    p = rules.changed_episode_problem(
                        status, old_path, old_mode=old_mode, new_mode=new_mode,
                        old_blob=old_blob, new_blob=new_blob, new_path=change.path)
                    self.report(i, ("append-only", old_path), _at(p, sha))
            blob = playbook_blob[sha]
            parent_blob = playbook_blob.get(parents[0]) if parents else None
            if blob == parent_blob and not lost:
                continue
            new, found = book(blob)
            for p in found:
                self.report(i, ("playbook", p.code, p.message), _at(p, sha))
            if new is None:
                continue
            old = book(parent_blob)[0] if parents else None
            for p in rules.compare_playbooks(old, new, self.pb_rel):
                self.report(i, (p.code, p.rule or ""), _at(p, sha))
            if old is not None:
                new_ids, old_ids = new.all_ids(), old.all_ids()
                for r in old.all_rules():
                    if r.id not in new_ids:
                        removed.setdefault(r.id, sha)
                for r in new.all_rules():
                    if r.id not in old_ids and r.id in removed:
                        self.report(i, ("rule-id-reused", r.id), rules.problem(
                            "rule-id-reused",
                            f"{r.id} reuses the ID of a rule removed in {removed[r.id][:10]}",
                            file=self.pb_rel, line=r.line, rule=r.id, commit=sha,
                            hint="rule IDs are never reused; give it the next free ID"))
            targets = rules.rules_to_resolve(old if blob != parent_blob else new, new, lost)
            self.result.rules += len(targets)
            raw = contents.get(blob) if blob else None
            text = raw.decode("utf-8", "replace") if raw else None
            for r in targets:
                line = rules.learnt_in_line(text, r)
                for ep in r.episode_ids:
                    self.result.citations += 1
                    for candidate in sorted(id_paths.get(ep, ())) or [""]:
                        cites.append((i, sha, r, ep, candidate, line))
        for i, sha, path, _blob in added:
            ep = rules.episode_id_of(path) or ""
            for other in sorted(id_paths.get(ep, set()) - {path}):
                probes.append((i, sha, ep, path, other))
        specs = {f"{sha}:{path}" for _, sha, _, _, path, _ in cites if path}
        specs |= {f"{sha}:{other}" for _, sha, _, _, other in probes}
        exists = _exists(self.root, sorted(specs))
        for i, sha, ep, path, other in probes:
            if exists.get(f"{sha}:{other}"):
                self.report(i, ("duplicate", ep, path),
                            _at(rules.duplicate_id_problem(ep, path, other), sha))
        resolved = {(sha, r.id, ep) for _, sha, r, ep, path, _ in cites
                    if path and exists.get(f"{sha}:{path}")}
        for i, sha, r, ep, _path, line in cites:
            if (sha, r.id, ep) not in resolved:
                self.report(i, ("citation", r.id, ep), _at(rules.citation_problem(
                    r, ep, self.pb_rel, line, f"the tree of commit {sha[:10]}"), sha))
        self.found.sort(key=lambda item: item[0])
        self.result.problems = [p for _, p in self.found]
        return self.result


#: Problems whose staged-change hint ("restore it from HEAD") cannot fix a history.
_APPEND_ONLY = frozenset({"episode-modified", "episode-deleted", "episode-renamed",
                          "episode-mode-changed", "episode-type-changed"})


def _at(p: GateProblem, sha: str) -> GateProblem:
    """``p`` as found in commit ``sha``, with a hint that fits a history."""
    if p.code in _APPEND_ONLY:
        p = replace(p, hint=(
            f"the change is in commit {sha[:10]}; a later fix does not take it out of the "
            f"history. If that commit is not shared yet, rewrite it (git rebase -i "
            f"{sha[:10]}^) so the episode stays as it was; if it is, restore the file in "
            "a new commit and record corrections as new episodes that refs the old one"))
    return replace(p, commit=sha)


def walk(root: Path | MemoryRepo, rev_range: str = "HEAD") -> WalkResult:
    """Walk ``rev_range`` (anything ``git rev-list`` takes, e.g. ``A..B``) oldest first.

    A range git cannot resolve is a :class:`UsageError` (exit 2)."""
    repo = root if isinstance(root, MemoryRepo) else MemoryRepo(root, load_config(root))
    return _Walk(repo, rev_range).run()


def verify(root: Path | str | MemoryRepo, rev_range: str | None = None) -> WalkResult:
    """Prove the history of ``rev_range`` (default: the current branch, all of it)."""
    repo = root if isinstance(root, MemoryRepo) else MemoryRepo(Path(root), load_config(Path(root)))
    if rev_range is None:
        if git.head(repo.root) is None:
            return WalkResult("HEAD")
        rev_range = "HEAD"
    return walk(repo, rev_range)
