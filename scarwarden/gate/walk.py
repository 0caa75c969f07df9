"""Walking a range of history, commit by commit, with the gate's rules (the engine behind
``verify`` and ``check --from-ref``); see :mod:`scarwarden.gate.verify`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from scarwarden import git
from scarwarden.errors import GitError, UsageError
from scarwarden.files.episodes import Episode
from scarwarden.gate import policy as rules
from scarwarden.gate import walk_checks as checks
from scarwarden.gate.boundary import Boundary
from scarwarden.gate.resolve import memory_mode_problem
from scarwarden.gate.walk_result import WalkResult
from scarwarden.gate.walk_state import CommitDiffs, WalkState, at
from scarwarden.repo import MemoryRepo, open_repo


class _Walk(WalkState):
    """One walk over a history, in two passes: what each commit changed and every blob
    to read, then the verdicts (:mod:`scarwarden.gate.walk_checks` holds the playbook,
    media and citation checks)."""

    def run(self) -> WalkResult:
        commits = self._list_commits()
        self.result.commits = len(commits)
        if not commits:
            return self.result
        self.tip: str = commits[-1][0]
        self.listed = commits
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
        self._report_screened()
        for i, commit in enumerate(per_commit):
            lost = self._check_episode_changes(i, commit)
            checks.check_playbook(self, i, commit, lost)
            checks.check_media_changes(self, i, commit)
            self.tick(self.steps, every=10)
        checks.check_media_content(self)
        checks.check_attachments(self)
        checks.check_ids_and_citations(self)
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
        range needs are known (:func:`~scarwarden.gate.walk_checks.check_ids_and_citations`)."""
        order = {sha for sha, _ in commits}
        parents = {p for _, ps in commits for p in ps if p not in order}
        if parents:
            self.boundary = Boundary(self.root, parents, self.repo.memory_rel, self.ep_rel, self.pb_rel)
            self.playbook_blob.update(self.boundary.playbooks())

    def _diff_commits(self, commits: list[tuple[str, list[str]]]) -> list[CommitDiffs]:
        """Every commit's diff against each parent: kept from an earlier walk (by the two
        commit IDs, :mod:`scarwarden.gate.walk_diffs`), else from one ``git diff-tree
        --stdin``."""
        from scarwarden.gate.walk_diffs import diff_pairs

        pairs: list[tuple[str, str | None]] = []
        for sha, parents in commits:
            pairs += [(sha, p) for p in parents] or [(sha, None)]
        diffs = iter(diff_pairs(self.root, pairs, self.repo.memory_rel))
        return [
            CommitDiffs(sha, parents, [next(diffs) for _ in range(max(1, len(parents)))])
            for sha, parents in commits
        ]

    def _note_playbook(self, commit: CommitDiffs) -> None:
        """Which playbook blob ``commit`` has: its first parent's, unless it changed it."""
        sha, parents, cdiffs = commit
        blob = self.playbook_blob.get(parents[0]) if parents else None
        for _om, new_mode, _ob, new_blob, change in cdiffs[0]:
            if change.path == self.pb_rel:
                blob = None if change.status == "D" else new_blob
                if blob and new_mode not in rules.REGULAR_MODES:
                    self.not_a_file[blob] = new_mode  # its blob is a link's target or a commit
            elif change.old_path == self.pb_rel:
                blob = None
        self.playbook_blob[sha] = blob

    def _note_added_episodes(self, i: int, commit: CommitDiffs) -> None:
        """The episode files ``commit`` itself added (not merged in), to validate;
        a misplaced or irregular file is reported now."""
        sha, _parents, cdiffs = commit
        other_added = [{c.path for *_x, c in d if c.status in "AR"} for d in cdiffs[1:]]
        for _om, new_mode, _ob, new_blob, change in cdiffs[0]:
            if change.status in "AR" and rules.is_under(change.path, self.pb_rel):  # a folder named so
                if folder := rules.playbook_mode_problem(self.pb_rel, "040000"):
                    self.report(i, ("playbook-folder",), at(folder, sha))
            bad = memory_mode_problem(self.pb_rel, self.ep_rel, change.path, new_mode, change.status)
            if change.path != self.pb_rel and bad is not None:  # the playbook's mode is judged above
                self.report(i, ("episodes-folder", change.path), at(bad, sha))
            if change.status not in "AR" or not rules.is_under(change.path, self.ep_rel):
                continue
            if change.status == "R" and rules.is_under(change.old_path or "", self.ep_rel):
                continue  # a rename inside the ledger: reported as such below
            if not all(change.path in o for o in other_added):
                continue  # merged in from another parent: checked in its own commit
            bad = rules.added_path_problem(change.path, new_mode, self.ep_rel)
            if bad is not None:
                self.report(i, ("path", change.path), at(bad, sha))
            elif change.path.endswith(".yaml"):
                self.added.append((i, sha, change.path, new_blob))
                ep = rules.episode_id_of(change.path)
                if ep:
                    self.id_paths.setdefault(ep, set()).add(change.path)

    def _read_blobs(self) -> None:
        """Every added episode and playbook version, with one ``git cat-file --batch``."""
        books = sorted({b for b in self.playbook_blob.values() if b})
        wanted = [b for *_x, b in self.added] + [b for b in books if b not in self.not_a_file]
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
                self.report(i, ("invalid", path, p.message), at(p, sha))
            if self.screen and episode is not None:
                self._screen(i, sha, path, episode, self.contents.get(blob))
            if episode is not None and episode.get("attachments"):
                self.attached.append((i, sha, path, episode))
            if episode is not None and episode.get("recalled") is not None:
                with_receipts.append((i, sha, path, episode))
        if with_receipts:
            self._prove_receipts(with_receipts)

    def _screen(self, i: int, sha: str, path: str, episode: Episode, raw: bytes | None) -> None:
        """No credential in an episode this range adds (CI on a pull request)."""
        from scarwarden.gate import screen

        problems, _warnings = screen.episode_problems(episode, path, raw, self.repo.config)
        self.screened += [(i, sha, path, p) for p in problems]

    def _report_screened(self) -> None:
        """The screen's problems, but for an episode the range itself redacts later: a
        secret taken back by ``scarwarden redact`` (and purged as docs/privacy.md says)
        must not refuse every later push of a new branch with that history."""
        for i, sha, path, p in self.screened:
            if path not in self.redacted:
                self.report(i, ("screen", path, p.message), at(p, sha))

    def _prove_receipts(self, episodes: list[tuple[int, str, str, Episode]]) -> None:
        """Re-run recall for every receipt an added episode carries (issue 20): at a
        playbook version of this walk, or of the history the range starts from."""
        from scarwarden.gate.proofs import Prover

        known = [b for b in self.playbook_blob.values() if b]
        prover = Prover(self.root, self.pb_rel, known=known, rev=self.tip)
        prover.ledgers.near({c for sha, parents in self.listed for c in (sha, *parents)})
        where = {path: (i, sha) for i, sha, path, _ep in episodes}
        for proof in prover.prove_all([(path, ep) for _i, _sha, path, ep in episodes]):
            i, sha = where[proof.path]
            self.result.receipts += proof.derived is not None  # re-derived only (issue 27)
            for p in proof.problems:
                self.report(i, ("receipt", proof.path, p.message), at(p, sha))
            self.result.warnings += [at(p, sha) for p in proof.warnings]

    def _note_modified_episodes(self, i: int, commit: CommitDiffs) -> None:
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
        if not self.modified:
            return
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
                self.redacted.add(path)
            for p in found:
                self.report(i, ("append-only", path), at(p, sha))

    def _check_episode_changes(self, i: int, commit: CommitDiffs) -> set[str]:
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
                self.report(i, ("append-only", old_path), at(p, sha))
        return lost


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
