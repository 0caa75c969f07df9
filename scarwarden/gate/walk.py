"""Walking a range of history, commit by commit, with the gate's rules (the engine behind
``verify`` and ``check --from-ref``); see :mod:`scarwarden.gate.verify`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

from scarwarden import git
from scarwarden.errors import GitError, UsageError
from scarwarden.files import playbook as pb
from scarwarden.files.episodes import Episode
from scarwarden.gate import policy as rules
from scarwarden.gate.boundary import Boundary
from scarwarden.gate.policy import GateProblem
from scarwarden.gate.walk_result import WalkResult
from scarwarden.repo import MemoryRepo, open_repo

RawChange = tuple[str, str, str, str, git.Change]


class _CommitDiffs(NamedTuple):
    """A commit of the walk with its parents and its diff against each of them (one
    diff, against the empty tree, for a root commit)."""

    sha: str
    parents: list[str]
    diffs: list[list[RawChange]]


#: (order, commit, path, blob) of an episode a commit added.
_Added = tuple[int, str, str, str]
#: (order, commit, rule, episode ID, a path it may be at ("" if none), its line).
_Cite = tuple[int, str, pb.Rule, str, str, int | None]


class _Walk:
    """One walk over a history: what the two passes learn, and the problems found."""

    def __init__(self, repo: MemoryRepo, rev_range: str) -> None:
        self.repo = repo
        self.root = repo.root
        self.ep_rel = repo.episodes_rel
        self.pb_rel = repo.playbook_rel
        self.result = WalkResult(rev_range)
        self.seen: set[tuple[str, ...]] = set()
        self.found: list[tuple[int, GateProblem]] = []
        #: Episode ID -> every path it was added at (in the boundary or the range).
        self.id_paths: dict[str, set[str]] = {}
        #: Commit -> the blob of its playbook (``None``: it has none).
        self.playbook_blob: dict[str, str | None] = {}
        self.added: list[_Added] = []
        #: Blob ID -> content, for every added episode and playbook version.
        self.contents: dict[str, bytes | None] = {}
        self.parsed: dict[str, tuple[pb.Playbook | None, list[GateProblem]]] = {}
        #: Rule ID -> the commit that first removed it (a later rule may not reuse it).
        self.removed: dict[str, str] = {}
        self.cites: list[_Cite] = []
        #: (order, commit, rule, episode ID, its line): citations before their paths are known.
        self.citing: list[tuple[int, str, pb.Rule, str, int | None]] = []
        self.boundary: Boundary | None = None
        #: Screen added episodes for credentials (``check --from-ref``, not ``verify``).
        self.screen = False
        #: (order, commit, path, old blob, new blob) of each episode a commit changed.
        self.modified: list[tuple[int, str, str, str, str]] = []
        #: (commit, path) of the changes judged as redactions (accepted or refused).
        self.judged: set[tuple[str, str]] = set()
        #: (order, commit, path, blob) of each image a commit itself added (issue 19).
        self.media_added: list[tuple[int, str, str, str]] = []
        #: ``progress(done, total)`` over the added episodes, then the commits (issue 18).
        self.progress: Callable[[int, int], None] | None = None
        self.done = self.steps = 0

    def tick(self, total: int, every: int = 1) -> None:
        """One more step of ``total`` done; the bar hears of every ``every``-th."""
        self.done += 1
        if self.progress is not None and (self.done % every == 0 or self.done == total):
            self.progress(self.done, total)

    def report(self, order: int, key: tuple[str, ...], p: GateProblem) -> None:
        """Keep the first commit per problem: later commits repeating it are not news."""
        if key not in self.seen:
            self.seen.add(key)
            self.found.append((order, p))

    def run(self) -> WalkResult:
        commits = self._list_commits()
        self.result.commits = len(commits)
        if not commits:
            return self.result
        self.tip: str = commits[-1][0]
        self._trust_boundary(commits)
        per_commit = self._diff_commits(commits)
        # Pass 1: which playbook each commit has, and every blob to read.
        for i, commit in enumerate(per_commit):
            self._note_playbook(commit)
            if any(commit.diffs):
                self.result.memory_commits += 1
            self._note_added_episodes(i, commit)
            self._note_modified_episodes(i, commit)
        self._read_blobs()
        # Pass 2: the verdicts, and the lookups they need.
        self.steps = len(self.added) + len(per_commit)
        self._validate_added_episodes()
        self._judge_redactions()
        for i, commit in enumerate(per_commit):
            lost = self._check_episode_changes(i, commit)
            self._check_playbook(i, commit, lost)
            self._check_media_changes(i, commit)
            self.tick(self.steps, every=10)
        self._check_media_content()
        self._check_ids_and_citations()
        self.found.sort(key=lambda item: item[0])
        self.result.problems = [p for _, p in self.found]
        return self.result

    def _list_commits(self) -> list[tuple[str, list[str]]]:
        """The range's commits with their parents, oldest first; a range git cannot
        resolve is a :class:`UsageError`."""
        try:
            return git.rev_list_with_parents(self.root, self.result.rev_range)
        except GitError as exc:
            raise UsageError(
                f"cannot walk {self.result.rev_range!r}: it is not a commit range here",
                hint="give a branch, a SHA or a range such as origin/main..HEAD (in CI, "
                f"fetch the history first); git said: {exc.message}",
            ) from None

    def _trust_boundary(self, commits: list[tuple[str, list[str]]]) -> None:
        """The parents outside the range (its boundary) are trusted: their playbook is
        the one the range starts from; their episodes are looked up once the IDs the
        range needs are known (:meth:`_resolve_boundary`)."""
        order = {sha for sha, _ in commits}
        parents = {p for _, ps in commits for p in ps if p not in order}
        if parents:
            self.boundary = Boundary(self.root, parents, self.repo.memory_rel, self.ep_rel, self.pb_rel)
            self.playbook_blob.update(self.boundary.playbooks())

    def _resolve_boundary(self) -> None:
        """Add the boundary's paths of every ID added or cited, then expand each
        citation into the paths its episode may be at."""
        if self.boundary is not None:
            ids = {rules.episode_id_of(path) or "" for *_x, path, _blob in self.added}
            ids |= {ep for *_x, ep, _line in self.citing}
            for ep, paths in self.boundary.episode_paths(ids).items():
                if ep:
                    self.id_paths.setdefault(ep, set()).update(paths)
        for i, sha, r, ep, line in self.citing:
            for candidate in sorted(self.id_paths.get(ep, ())) or [""]:
                self.cites.append((i, sha, r, ep, candidate, line))

    def _diff_commits(self, commits: list[tuple[str, list[str]]]) -> list[_CommitDiffs]:
        """Every commit's diff against each parent, from one ``git diff-tree --stdin``."""
        pairs: list[tuple[str, str | None]] = []
        for sha, parents in commits:
            pairs += [(sha, p) for p in parents] or [(sha, None)]
        diffs = iter(git.diff_tree_pairs(self.root, pairs, self.repo.memory_rel))
        return [
            _CommitDiffs(sha, parents, [next(diffs) for _ in range(max(1, len(parents)))])
            for sha, parents in commits
        ]

    def _note_playbook(self, commit: _CommitDiffs) -> None:
        """Which playbook blob ``commit`` has: its first parent's, unless it changed it."""
        sha, parents, cdiffs = commit
        blob = self.playbook_blob.get(parents[0]) if parents else None
        for _om, _nm, _ob, new_blob, change in cdiffs[0]:
            if change.path == self.pb_rel:
                blob = None if change.status == "D" else new_blob
            elif change.old_path == self.pb_rel:
                blob = None
        self.playbook_blob[sha] = blob

    def _note_added_episodes(self, i: int, commit: _CommitDiffs) -> None:
        """The episode files ``commit`` itself added (not merged in), to validate;
        a misplaced or irregular file is reported now."""
        sha, _parents, cdiffs = commit
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
                self.added.append((i, sha, change.path, new_blob))
                ep = rules.episode_id_of(change.path)
                if ep:
                    self.id_paths.setdefault(ep, set()).add(change.path)

    def _read_blobs(self) -> None:
        """Every added episode and playbook version, with one ``git cat-file --batch``."""
        books = sorted({b for b in self.playbook_blob.values() if b})
        wanted = [b for *_x, b in self.added] + books
        wanted += [b for *_x, old, new in self.modified for b in (old, new)]
        self.contents = dict(zip(wanted, git.cat_file_batch(self.root, wanted), strict=True))
        self.result.playbooks = len(books)

    def _validate_added_episodes(self) -> None:
        with_receipts: list[tuple[int, str, str, Episode]] = []
        for i, sha, path, blob in self.added:
            episode, found = rules.validate_episode(self.contents.get(blob), path, self.ep_rel)
            self.result.episodes += 1
            self.tick(self.steps, every=200)
            for p in found:
                self.report(i, ("invalid", path, p.message), _at(p, sha))
            if self.screen and episode is not None:
                self._screen(i, sha, path, episode, self.contents.get(blob))
            if episode is not None and episode.get("recalled") is not None:
                with_receipts.append((i, sha, path, episode))
        if with_receipts:
            self._prove_receipts(with_receipts)

    def _screen(self, i: int, sha: str, path: str, episode: Episode, raw: bytes | None) -> None:
        """No credential in an episode this range adds (CI on a pull request)."""
        from scarwarden.gate import screen

        problems, _warnings = screen.episode_problems(episode, path, raw, self.repo.config)
        for p in problems:
            self.report(i, ("screen", path, p.message), _at(p, sha))

    def _prove_receipts(self, episodes: list[tuple[int, str, str, Episode]]) -> None:
        """Re-run recall for every receipt an added episode carries (issue 20): at a
        playbook version of this walk, or of the history the range starts from."""
        from scarwarden.gate.proofs import Prover

        known = [b for b in self.playbook_blob.values() if b]
        prover = Prover(self.root, self.pb_rel, known=known, rev=self.tip)
        where = {path: (i, sha) for i, sha, path, _ep in episodes}
        for proof in prover.prove_all([(path, ep) for _i, _sha, path, ep in episodes]):
            i, sha = where[proof.path]
            self.result.receipts += 1
            for p in proof.problems:
                self.report(i, ("receipt", proof.path, p.message), _at(p, sha))
            self.result.warnings += [_at(p, sha) for p in proof.warnings]

    def _note_modified_episodes(self, i: int, commit: _CommitDiffs) -> None:
        """The episodes ``commit`` changed in content only: each may be a redaction."""
        sha, _parents, cdiffs = commit
        others = [{c.path for *_x, c in d} for d in cdiffs[1:]]
        for old_mode, new_mode, old_blob, new_blob, change in cdiffs[0]:
            if any(change.path not in o for o in others):
                continue  # merged in as it was: judged in its own commit
            if (
                change.status == "M"
                and rules.is_under(change.path, self.ep_rel)
                and old_mode == new_mode
                and new_mode in rules.REGULAR_MODES
                and old_blob != new_blob
            ):
                self.modified.append((i, sha, change.path, old_blob, new_blob))

    def _judge_redactions(self) -> None:
        """Each changed episode is a valid redaction, recorded by an episode its commit
        adds, or it is refused (issue 17)."""
        from scarwarden.gate import redactions

        added: dict[str, set[str]] = {}
        for _i, sha, path, _blob in self.added:
            added.setdefault(sha, set()).add(rules.episode_id_of(path) or "")
        for i, sha, path, old, new in self.modified:
            self.judged.add((sha, path))
            stub, found = redactions.judge(
                path,
                self.contents.get(old),
                self.contents.get(new),
                added.get(sha, set()),
                self.ep_rel,
                self.repo.config,
            )
            if stub is not None:
                self.result.redactions += 1
            for p in found:
                self.report(i, ("append-only", path), _at(p, sha))

    def _book(self, blob: str | None) -> tuple[pb.Playbook | None, list[GateProblem]]:
        """The playbook in ``blob`` (parsed once) and its problems; none is empty."""
        if blob is None:
            return pb.empty(), []
        if blob not in self.parsed:
            self.parsed[blob] = rules.parse_playbook(self.contents.get(blob), self.pb_rel)
        return self.parsed[blob]

    def _check_episode_changes(self, i: int, commit: _CommitDiffs) -> set[str]:
        """Report every episode ``commit`` modified, renamed or deleted; the IDs that
        left its tree (their citations must be checked again)."""
        sha, _parents, cdiffs = commit
        lost: set[str] = set()
        # A merge: the paths each parent's diff shows (a change absent from one of them
        # was taken from that parent as it was).
        changed = [{c.old_path or c.path for *_x, c in d} for d in cdiffs] if len(cdiffs) > 1 else []
        for n, d in enumerate(cdiffs):
            for old_mode, new_mode, old_blob, new_blob, change in d:
                old_path = change.old_path or change.path
                if change.status == "A" or not rules.is_under(old_path, self.ep_rel):
                    continue
                if (sha, old_path) in self.judged and n == 0:
                    continue  # a redaction, judged on its own
                if change.status == "M" and any(old_path not in c for m, c in enumerate(changed) if m != n):
                    continue  # taken as it was from another parent: checked in its own commit
                status = change.status
                if status == "R" and n > 0:
                    # Against a merge's other parent, a "rename" pairs the file it
                    # dropped with one the first parent added: it is a deletion.
                    status = "D"
                if status in "DR":
                    lost.add(rules.episode_id_of(old_path) or "")
                p = rules.changed_episode_problem(
                    status,
                    old_path,
                    old_mode=old_mode,
                    new_mode=new_mode,
                    old_blob=old_blob,
                    new_blob=new_blob,
                    new_path=change.path,
                )
                self.report(i, ("append-only", old_path), _at(p, sha))
        return lost

    def _check_media_changes(self, i: int, commit: _CommitDiffs) -> None:
        """Images attached to episodes are append-only too (issue 19): against the first
        parent, no media file changed, renamed or deleted. The ones the commit itself
        added (not merged in) are noted for :meth:`_check_media_content`."""
        from scarwarden.gate import media

        added, problems = media.changed_media(self.repo, commit.diffs[0])
        other_added = [{c.path for *_x, c in d if c.status in "AR"} for d in commit.diffs[1:]]
        for path, blob in added.items():
            if all(path in o for o in other_added):
                self.media_added.append((i, commit.sha, path, blob))
        for p in problems:
            self.report(i, ("media", p.code, p.file or ""), _at(p, commit.sha))

    def _check_media_content(self) -> None:
        """Each image the range added has the content its name says and is a whole image,
        read from the stored objects (a swapped blob cannot hide) in one stream. Ranges
        (``check --from-ref``) apply today's size cap; ``verify`` proves what was
        committed."""
        from scarwarden.gate import media

        items = [(path, blob) for _i, _sha, path, blob in self.media_added]
        found, self.result.media_lfs = media.check_history_media(self.repo, items, cap=self.screen)
        self.result.media = len(items)
        for n, p in found:
            i, sha, _path, _blob = self.media_added[n]
            self.report(i, ("media", p.code, p.file or ""), _at(p, sha))

    def _check_playbook(self, i: int, commit: _CommitDiffs, lost: set[str]) -> None:
        """Check ``commit``'s playbook against its first parent's (when it changed, or
        when episodes left the tree) and note the citations to resolve."""
        sha, parents, _cdiffs = commit
        blob = self.playbook_blob[sha]
        parent_blob = self.playbook_blob.get(parents[0]) if parents else None
        if blob == parent_blob and not lost:
            return
        new, found = self._book(blob)
        for p in found:
            self.report(i, ("playbook", p.code, p.message), _at(p, sha))
        if new is None:
            return
        old = self._book(parent_blob)[0] if parents else None
        for p in rules.compare_playbooks(old, new, self.pb_rel):
            self.report(i, (p.code, p.rule or ""), _at(p, sha))
        if old is not None:
            self._check_reused_ids(i, sha, old, new)
        targets = rules.rules_to_resolve(old if blob != parent_blob else new, new, lost)
        self.result.rules += len(targets)
        raw = self.contents.get(blob) if blob else None
        text = raw.decode("utf-8", "replace") if raw else None
        for r in targets:
            line = rules.learnt_in_line(text, r)
            for ep in r.episode_ids:
                self.result.citations += 1
                self.citing.append((i, sha, r, ep, line))

    def _check_reused_ids(self, i: int, sha: str, old: pb.Playbook, new: pb.Playbook) -> None:
        """Note the rules ``new`` removed; report a rule that takes a removed one's ID."""
        new_ids, old_ids = new.all_ids(), old.all_ids()
        for r in old.all_rules():
            if r.id not in new_ids:
                self.removed.setdefault(r.id, sha)
        for r in new.all_rules():
            if r.id not in old_ids and r.id in self.removed:
                self.report(
                    i,
                    ("rule-id-reused", r.id),
                    rules.problem(
                        "rule-id-reused",
                        f"{r.id} reuses the ID of a rule removed in {self.removed[r.id][:10]}",
                        file=self.pb_rel,
                        line=r.line,
                        rule=r.id,
                        commit=sha,
                        hint="rule IDs are never reused; give it the next free ID",
                    ),
                )

    def _check_ids_and_citations(self) -> None:
        """Each added ID unique and each citation resolving in its commit's own tree,
        with one ``git cat-file --batch-check`` for all of them."""
        self._resolve_boundary()
        probes: list[tuple[int, str, str, str, str]] = []
        for i, sha, path, _blob in self.added:
            ep = rules.episode_id_of(path) or ""
            for other in sorted(self.id_paths.get(ep, set()) - {path}):
                probes.append((i, sha, ep, path, other))
        specs = {f"{sha}:{path}" for _, sha, _, _, path, _ in self.cites if path}
        specs |= {f"{sha}:{other}" for _, sha, _, _, other in probes}
        exists = git.objects_exist(self.root, sorted(specs))
        for i, sha, ep, path, other in probes:
            if exists.get(f"{sha}:{other}"):
                self.report(i, ("duplicate", ep, path), _at(rules.duplicate_id_problem(ep, path, other), sha))
        resolved = {
            (sha, r.id, ep) for _, sha, r, ep, path, _ in self.cites if path and exists.get(f"{sha}:{path}")
        }
        for i, sha, r, ep, _path, line in self.cites:
            if (sha, r.id, ep) not in resolved:
                self.report(
                    i,
                    ("citation", r.id, ep),
                    _at(
                        rules.citation_problem(r, ep, self.pb_rel, line, f"the tree of commit {sha[:10]}"),
                        sha,
                    ),
                )


#: Problems whose staged-change hint ("restore it from HEAD") cannot fix a history.
_APPEND_ONLY = frozenset(
    {"episode-modified", "episode-deleted", "episode-renamed", "episode-mode-changed", "episode-type-changed"}
)


def _at(p: GateProblem, sha: str) -> GateProblem:
    """``p`` as found in commit ``sha``, with a hint that fits a history."""
    if p.code in _APPEND_ONLY:
        p = replace(
            p,
            hint=(
                f"the change is in commit {sha[:10]}; a later fix does not take it out of the "
                f"history. If that commit is not shared yet, rewrite it (git rebase -i "
                f"{sha[:10]}^) so the episode stays as it was; if it is, restore the file in "
                "a new commit and record corrections as new episodes that refs the old one"
            ),
        )
    return replace(p, commit=sha)


def walk(
    root: Path | MemoryRepo,
    rev_range: str = "HEAD",
    *,
    screen: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> WalkResult:
    """Walk ``rev_range`` (anything ``git rev-list`` takes, e.g. ``A..B``) oldest first.

    ``screen``: also refuse credentials in the episodes the range adds (``check
    --from-ref``; ``verify`` proves the history's form and leaves old content alone:
    a secret committed long ago is redacted or purged, docs/privacy.md).
    A range git cannot resolve is a :class:`UsageError` (exit 2). ``progress(done,
    total)`` follows the added episodes, then the commits (a bar on a terminal)."""
    repo = root if isinstance(root, MemoryRepo) else open_repo(root, initialised=False)
    walker = _Walk(repo, rev_range)
    walker.screen = screen
    walker.progress = progress
    return walker.run()
