"""What one walk over a history learns and finds (:mod:`scarwarden.gate.walk`): the
commits' diffs, the blobs to read, the citations to resolve, and the problems, each kept
at the first commit that shows it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from scarwarden import git
from scarwarden.gate.boundary import Boundary
from scarwarden.gate.policy import GateProblem
from scarwarden.gate.walk_result import WalkResult
from scarwarden.records import replace
from scarwarden.repo import MemoryRepo

if TYPE_CHECKING:  # types only: a walk that reads no playbook never imports its parser
    from scarwarden.files import playbook as pb
    from scarwarden.files.episodes import Episode

    RawChange = tuple[str, str, str, str, git.Change]
    #: (order, commit, rule, episode ID, a path it may be at ("" if none), its line).
    Cite = tuple[int, str, pb.Rule, str, str, int | None]


class CommitDiffs(NamedTuple):
    """A commit of the walk with its parents and its diff against each of them (one
    diff, against the empty tree, for a root commit)."""

    sha: str
    parents: list[str]
    diffs: list[list[RawChange]]


#: (order, commit, path, blob) of an episode a commit added.
Added = tuple[int, str, str, str]


class WalkState:
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
        #: Blob ID -> mode of a playbook version that is a symlink or a submodule, not a file.
        self.not_a_file: dict[str, str] = {}
        self.added: list[Added] = []
        #: Blob ID -> content, for every added episode and playbook version.
        self.contents: dict[str, bytes | None] = {}
        self.parsed: dict[str, tuple[pb.Playbook | None, list[GateProblem]]] = {}
        #: Rule ID -> the commit that first removed it (a later rule may not reuse it).
        self.removed: dict[str, str] = {}
        self.cites: list[Cite] = []
        #: (order, commit, rule, episode ID, its line): citations before their paths are known.
        self.citing: list[tuple[int, str, pb.Rule, str, int | None]] = []
        self.boundary: Boundary | None = None
        #: The walk's commits with their parents, oldest first.
        self.listed: list[tuple[str, list[str]]] = []
        #: Screen added episodes for credentials (``check --from-ref``, not ``verify``).
        self.screen = False
        #: (order, commit, path, old blob, new blob) of each episode a commit changed.
        self.modified: list[tuple[int, str, str, str, str]] = []
        #: (commit, path) of the changes judged as redactions (accepted or refused).
        self.judged: set[tuple[str, str]] = set()
        #: (order, commit, path, blob) of each image a commit itself added (issue 19).
        self.media_added: list[tuple[int, str, str, str]] = []
        #: (order, commit, path, problem) the screen found in added episodes.
        self.screened: list[tuple[int, str, str, GateProblem]] = []
        #: Paths of the episodes a commit of the walk redacted (validly).
        self.redacted: set[str] = set()
        #: (order, commit, path, episode) of each added episode that attaches images.
        self.attached: list[tuple[int, str, str, Episode]] = []
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


#: Problems whose staged-change hint ("restore it from HEAD") cannot fix a history.
_APPEND_ONLY = frozenset(
    {"episode-modified", "episode-deleted", "episode-renamed", "episode-mode-changed", "episode-type-changed"}
)


def at(p: GateProblem, sha: str) -> GateProblem:
    """``p`` as found in commit ``sha``, with a hint that fits a history."""
    if p.code in _APPEND_ONLY:
        # The hooks refuse the restore too (any change to a committed episode): it goes
        # past them, as the change did, and verify still reports the change, once.
        back = f"git restore --source={sha[:10]}^ --staged --worktree -- {p.file}"
        if p.code == "episode-renamed":  # policy's hint: "move it back: git mv NEW OLD (...)"
            back = (p.hint or "").removeprefix("move it back: ").split(" (", 1)[0]
        p = replace(
            p,
            hint=(
                f"the change is in commit {sha[:10]}; a later fix does not take it out of the "
                f"history. If that commit is not shared yet, rewrite it (git rebase -i "
                f"{sha[:10]}^) so the episode stays as it was; if it is, restore the file in "
                f"a new commit ({back}; then SCARWARDEN_SKIP=1 git commit --no-verify, since "
                "the hooks refuse a restore as any change to an episode) and record "
                "corrections as new episodes that refs the old one"
            ),
        )
    elif p.code == "citation-missing":  # the staged hint ("commit it with the rule") cannot fix a history
        p = replace(
            p,
            hint=(
                f"the citation is in commit {sha[:10]}; a later commit recording "
                f"{p.episode or 'the episode'} does not take it out of the history. If that "
                f"commit is not shared yet, rewrite it (git rebase -i {sha[:10]}^) so the rule "
                "arrives with its episode or cites one that exists (docs/audit.md, 'When the "
                "gate fails on a pull request'); if it is, "
                "record the episode (scarwarden episode add) and cite its ID from now on"
            ),
        )
    return replace(p, commit=sha)
