"""``scarwarden sync``: share memory with a remote that other agents push to.

One round: fetch the branch, integrate what the remote has (a fast-forward; else rebase
the local commits onto it, which for episodes cannot conflict: each is a new file with
a random ID, and the playbook merges rule by rule through the merge driver; else a merge
commit, and a merge at once when a local episode's recall receipt names the ledger of a
local commit, which a rebase would rewrite away), then push. When the push is refused
because another agent pushed meanwhile, wait (exponential backoff with jitter) and go
round again, up to ``retries`` times.

A conflict that neither rebase nor merge resolves (the same rule reworded two ways)
stops the sync with the repository exactly as it was: both are aborted, nothing pushed.
So does a remote branch that shares no commit with ours (a wrong remote: a rebase would
rewrite every local commit onto another project), before anything is changed. Any
failure after a round rebased or merged (a push the remote refuses for good, which is
not retried, or a remote that kept moving) puts the branch back where it was. Which
refusals are another clone's push, worth a retry, is read from git's status for our ref
(``git push --porcelain``), never from the text a remote's hook prints. A remote with no
branch of our name but other branches, none of which shares our history (another
project's repository), is refused too: sync creates the branch only on an empty remote
or beside branches of this memory. A remote's commits, of a branch of our name or of
its others, are judged in a quarantine (:mod:`scarwarden.git.quarantine`) before any ref
names them, so a refused remote leaves no ref and no object behind.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from scarwarden import git
from scarwarden.errors import GitError, ScarwardenError, UsageError
from scarwarden.files import write_journal
from scarwarden.files.atomic import held_lock_fds, write_lock
from scarwarden.files.episodes import parse_episode_bytes
from scarwarden.gate.merge_driver import install_merge_driver, merge_driver_installed
from scarwarden.git import remote as remote_git
from scarwarden.repo import MemoryRepo


@dataclass
class SyncResult:
    remote: str
    branch: str
    #: "up-to-date", "fast-forward", "rebase", "merge" or "first-push".
    integrated: str
    pushed: bool
    attempts: int
    head: str
    commits_pushed: int

    def to_json(self) -> dict[str, object]:
        return asdict(self)

    def summary(self) -> str:
        how = {
            "up-to-date": "nothing new on the remote",
            "fast-forward": "fast-forwarded to the remote",
            "rebase": "rebased local commits onto the remote",
            "merge": "merged the remote",
            "first-push": "created the branch on the remote",
        }[self.integrated]
        pushed = f"pushed {self.commits_pushed} commit(s)" if self.pushed else "nothing to push"
        tries = f" after {self.attempts} attempts" if self.attempts > 1 else ""
        return f"Synced {self.branch} with {self.remote}: {how}; {pushed}{tries} (HEAD {self.head[:10]})"


class SyncConflict(GitError):
    """The remote's memory and ours conflict in a way no merge resolves."""


def sync(repo: MemoryRepo, *, remote: str = "origin", retries: int = 8, backoff: float = 0.2) -> SyncResult:
    """Fetch, integrate, push; retry the round when the remote moved meanwhile.

    Under the write lock (writers wait; a killed write is finished or undone first);
    each git step runs as a unit a kill cannot cut in half (see ``git.remote``)."""
    with write_lock(repo):
        write_journal.recover(repo)
        return _sync(repo, remote, retries, backoff)


def _sync(repo: MemoryRepo, remote: str, retries: int, backoff: float) -> SyncResult:
    branch = _preflight(repo, remote)
    before = _head(repo.root)
    try:
        return _rounds(repo, remote, branch, retries, backoff)
    except ScarwardenError as error:  # nothing was pushed: the branch goes back (docs)
        _put_back(repo.root, branch, before, error)
        raise


def _rounds(repo: MemoryRepo, remote: str, branch: str, retries: int, backoff: float) -> SyncResult:
    root = repo.root
    for attempt in range(1, retries + 2):
        integrated, theirs, known = _integrate(repo, remote, branch)
        ahead = _ahead(root, theirs, known)
        if theirs is not None and ahead == 0:
            return SyncResult(remote, branch, integrated, False, attempt, _head(root), 0)
        refused = remote_git.push_branch(root, remote, branch, keep_fds=held_lock_fds())
        if refused is None:
            return SyncResult(remote, branch, integrated, True, attempt, _head(root), ahead)
        if not _remote_moved(root, remote, branch, theirs, refused):
            said = f"; nothing pushed, {branch} is as it was\n{refused.said}"  # a hook's report, in full
            if "\n" not in refused.said:
                said = f": {refused.said}; nothing pushed, {branch} is as it was"
            raise GitError(
                f"the push to {remote} was refused{said}",
                hint="refused for a reason of its own (a pre-push or pre-receive hook, a protected "
                "branch, a branch checked out in a non-bare repository, access rights, a push "
                f"URL that cannot be reached: git remote get-url --push {remote}), not because "
                "another clone pushed first, so sync does not retry: fix that first",
            )
        if attempt <= retries:
            time.sleep(wait(attempt, backoff))
    raise GitError(
        f"{remote} kept moving: gave up after {retries + 1} attempt{'s' if retries else ''}; nothing pushed, "
        f"{branch} is as it was (the local commits are still here)",
        hint="run 'scarwarden sync' again, or raise --retries",
    )


#: The longest wait between two rounds before its jitter, in seconds: doubling from
#: 0.2 s, the 12th wait was 7 minutes, and from the 36th ``time.sleep`` raised
#: OverflowError (``--retries`` allows 100).
MAX_WAIT = 10.0


def wait(attempt: int, backoff: float) -> float:
    """Seconds to wait after round ``attempt`` (from 1) was refused because the remote
    moved: ``backoff`` doubled each round, at most :data:`MAX_WAIT`, times a jitter of
    0.5 to 1.5 so that agents refused together do not retry together."""
    return min(MAX_WAIT, backoff * 2.0 ** min(attempt - 1, 64)) * (0.5 + random.random())  # noqa: S311


def _put_back(root: Path, branch: str, before: str, error: ScarwardenError) -> None:
    """The branch, index and work tree back at ``before`` after a failed sync that had
    rebased or merged: a rewritten history nobody received helps no one."""
    if _head(root) == before:
        return
    ok, message = remote_git.reset_keep(root, before, keep_fds=held_lock_fds())
    if not ok:
        raise GitError(
            f"{error.message}; and {branch} could not be put back at {before[:10]}: "
            + remote_git.first_error(message),
            hint=f"git reset --keep {before}",
        ) from error


def _preflight(repo: MemoryRepo, remote: str) -> str:
    root = repo.root
    if remote_git.remote_url(root, remote) is None:
        raise UsageError(f"no remote named {remote!r}", hint="git remote add origin <url>, or --remote NAME")
    busy = remote_git.operation_in_progress(root)  # first: a stopped rebase detaches HEAD
    if busy:
        raise UsageError(f"a {busy} is in progress", hint=f"finish it or abort it (git {busy} --abort) first")
    branch = git.current_branch(root)
    if branch is None:
        raise UsageError("HEAD is not on a branch", hint="git switch <branch> first")
    changed = remote_git.tracked_changes(root)
    if changed:
        raise UsageError(
            f"uncommitted changes to tracked files ({', '.join(changed[:3])}"
            f"{', ...' if len(changed) > 3 else ''}); sync rebases, which needs a clean tree",
            hint="commit them (or git stash) first",
        )
    return branch


def _integrate(repo: MemoryRepo, remote: str, branch: str) -> tuple[str, str | None, list[str]]:
    """Bring the remote's commits in; (how, the remote tip or None, and for a first
    push the tips of the remote's other refs, whose commits the push need not send)."""
    root = repo.root
    fds = held_lock_fds()
    branches = remote_git.remote_branches(root, remote)
    theirs = branches.get(branch)
    if theirs is None:
        return "first-push", None, _check_new_branch(root, remote, branch, branches, fds)
    ours = _head(root)
    base = _fetch_judged(root, remote, branch, theirs, ours, fds)
    if base == theirs:
        return "up-to-date", theirs, []
    if base == ours:
        ok, said = remote_git.fast_forward(root, theirs, keep_fds=fds)
        if not ok:  # an untracked file where the remote adds one, most often
            raise GitError(
                f"cannot fast-forward {branch} to {remote}/{branch} (nothing was changed "
                f"here, nothing pushed)\n{_conflicts(said)}",
                hint="fix what git said (an untracked file in the way: move or commit it; the gate "
                "refusing the remote's commits: fix them there), then sync again",
            )
        return "fast-forward", theirs, []
    if not merge_driver_installed(root):  # here: a sync that changes nothing leaves config alone
        install_merge_driver(root, repo.playbook_rel)
    first = ""
    if not _receipts_would_be_orphaned(repo, base, ours):
        ok, first = remote_git.rebase_onto(root, theirs, keep_fds=fds)
        if ok:
            return "rebase", theirs, []
    ok, second = remote_git.merge_commit(root, theirs, f"sync: merge {remote}/{branch}", keep_fds=fds)
    if ok:
        return "merge", theirs, []
    if _head(root) != ours:  # both were aborted; this would be a bug, so say so loudly
        raise GitError(f"sync left HEAD at {_head(root)[:10]} instead of {ours[:10]}")
    said = second or first
    if "CONFLICT" not in said:  # git could not write a commit (signing, a hook): no conflict
        raise GitError(
            f"cannot integrate {remote}/{branch}: git could not rebase or merge (nothing "
            f"was changed here, nothing pushed)\n{_conflicts(said)}",
            hint="fix what git said (an untracked file in the way, commit.gpgsign without a "
            "working gpg, a hook that refused the commit, a stale index.lock), then sync again",
        )
    raise SyncConflict(
        f"cannot integrate {remote}/{branch}: the changes conflict (nothing was changed "
        f"here, nothing pushed)\n{_conflicts(second or first)}",
        hint="merge by hand (git merge "
        + f"{remote}/{branch}), resolve each conflict, commit, then sync again",
    )


#: Git's advice after a failed merge or rebase, which sync has already undone (issue 28:
#: "nothing was changed here" beside "fix conflicts and then commit the result").
_GIT_ADVICE = (
    "automatic merge failed",
    "fix conflicts",
    "resolve all conflicts",
    "could not apply",
    "hint:",
    "when you have resolved",
    "git rebase --",
    "to abort and get back",
    "if you prefer to skip",
    "to check out the original branch",
    "not committing merge",  # a pre-commit hook (the gate) refused the merge commit
    # sync's own clean-up when git stopped before starting (an untracked file in the way)
    "there is no merge to abort",
    "no rebase in progress",
)


def _conflicts(output: str) -> str:
    """What git said about the conflict, without its advice to resolve and commit: sync
    aborted the merge, so the files that conflict are what matters."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    kept = [line for line in lines if not any(a in line.lower() for a in _GIT_ADVICE)]
    conflicts = [line for line in kept if line.startswith("CONFLICT")]
    return "\n".join(conflicts or kept)


def _fetch_judged(root: Path, remote: str, branch: str, theirs: str, ours: str, fds: Sequence[int]) -> str:
    """Fetch ``remote``'s ``branch`` (``theirs``: its tip, as listed) and judge it before
    any ref or object of ours changes: its commits go into a quarantine, and join our
    store, with ``<remote>/<branch>`` pointing at ``theirs``, only when it shares our
    history; a refused remote leaves both as they were. A tip we have already costs no
    fetch. The merge base of ``theirs`` and ``ours`` (``theirs`` itself when we are up to
    date, ``ours`` for a fast-forward)."""
    from scarwarden.git.quarantine import quarantine

    if git.object_exists(root, theirs):
        base = git.merge_base(root, theirs, ours)
    else:
        with quarantine(root) as held:  # a refused project's objects never enter our store
            remote_git.fetch_commits(root, remote, [f"refs/heads/{branch}"], keep_fds=fds, env=held.env)
            if not remote_git.commit_exists(root, theirs, env=held.env):
                raise GitError(
                    f"{remote}/{branch} was rewritten while sync fetched it; nothing was "
                    "changed here, nothing pushed",
                    hint="run 'scarwarden sync' again",
                )
            base = git.merge_base(root, theirs, ours, env=held.env)
            if base is not None:
                held.accept()
    if base is None:
        raise _unrelated(root, remote, branch)
    remote_git.set_remote_branch(root, remote, branch, theirs)
    return base


def _unrelated(root: Path, remote: str, branch: str) -> UsageError:
    """The refusal when ``branch`` and ``remote``'s share no commit: ``git pull`` refuses
    such "unrelated histories" too. In a shallow clone the common commit may be hidden."""
    from scarwarden.git.integrity import shallow_depth

    if shallow_depth(root) is not None:
        return UsageError(
            f"cannot tell how {branch} and {remote}/{branch} are related: this clone is "
            "shallow; nothing was changed here, nothing pushed",
            hint=f"fetch the whole history (git fetch --unshallow {remote}), then sync again",
        )
    return UsageError(
        f"{remote}/{branch} shares no history with {branch}: {remote} is not this memory's "
        "remote; nothing was changed here, nothing pushed",
        hint=f"check its URL (git remote get-url {remote}); to join two histories on purpose, "
        f"fetch it and merge by hand (git fetch {remote} {branch} && git merge "
        "--allow-unrelated-histories FETCH_HEAD)",
    )


def _check_new_branch(
    root: Path, remote: str, branch: str, branches: dict[str, str], fds: Sequence[int]
) -> list[str]:
    """Before ``branch`` is created on ``remote``: an empty remote (a fresh bare
    repository) takes it, and so does one with a branch that shares our history (another
    branch of this memory); a remote whose every branch is another project's history is
    refused, as ``_unrelated`` refuses such a branch of our name: a wrong URL must not
    push this memory into someone else's repository (``branches``: the remote's, by
    name). A remote with tags and no branch is judged by its tags. Their commits are
    fetched into a quarantine, and kept (so the first push sends only what the remote
    lacks) only when they share our history. Their tips, now in our store."""
    from scarwarden.git.integrity import shallow_depth
    from scarwarden.git.quarantine import quarantine

    kind, found = "branches", branches
    if not found:
        kind, found = "tags", remote_git.remote_tags(root, remote)
    if not found:
        return []
    names = sorted(found)
    refs = [f"refs/{'heads' if kind == 'branches' else 'tags'}/{name}" for name in names]
    with quarantine(root) as held:  # a refused project's objects never enter our store
        remote_git.fetch_commits(root, remote, refs, keep_fds=fds, env=held.env)
        if git.merge_base(root, _head(root), *sorted(set(found.values())), env=held.env) is not None:
            held.accept()
            return sorted(set(found.values()))
    listed = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
    if shallow_depth(root) is not None:
        raise UsageError(
            f"cannot tell how {branch} and {remote}'s {kind} ({listed}) are related: this "
            f"clone is shallow; {remote} has no branch {branch} yet, and nothing was pushed",
            hint="fetch the whole history (git fetch --unshallow), then sync again",
        )
    raise UsageError(
        f"{remote} has no branch {branch}, and none of its {kind} ({listed}) shares "
        f"history with {branch}: {remote} is not this memory's remote; nothing pushed",
        hint=f"check its URL (git remote get-url {remote}); to put {branch} there anyway, "
        f"push it yourself (git push {remote} {branch}), then sync",
    )


def _receipts_would_be_orphaned(repo: MemoryRepo, base: str, ours: str) -> bool:
    """Whether a local episode's recall receipt names the ledger of a local commit.

    A version-2 receipt names the episodes folder's tree recall ran on; if that tree is
    the ledger of a commit only this clone has, a rebase rewrites the commit, the tree
    is pushed nowhere, and no other clone can prove the receipt (docs/receipts.md). A
    merge keeps the commits as they were, so such a sync merges instead of rebasing."""
    root = repo.root
    added = [c.path for c in git.diff_name_status(root, base, ours, repo.episodes_rel) if c.status == "A"]
    named: set[str] = set()
    for raw in git.cat_file_batch(root, [f"{ours}:{path}" for path in added]):
        if raw is None or b"ledger:" not in raw:
            continue  # most episodes carry no receipt: no YAML parse for them
        try:
            recalled = parse_episode_bytes(raw).get("recalled")
        except ScarwardenError:
            continue
        if isinstance(recalled, dict) and isinstance(recalled.get("ledger"), str):
            named.add(recalled["ledger"].partition("+")[0])
    if not named:
        return False
    local = git.rev_list(root, f"{base}..{ours}")
    trees = git.tree_ids(root, [f"{c}:{repo.episodes_rel}" for c in local])
    return any(tree in named for tree in trees.values())


def _ahead(root: object, theirs: str | None, known: Sequence[str] = ()) -> int:
    if theirs is None:  # a first push sends what none of the remote's refs has
        return len(git.rev_list(str(root), "HEAD", *(["--not", *known] if known else [])))
    return len(git.rev_list(str(root), f"{theirs}..HEAD"))


def _head(root: object) -> str:
    sha = git.head(str(root))
    if sha is None:
        raise UsageError("nothing to sync: the repository has no commit yet")
    return sha


def _remote_moved(
    root: Path, remote: str, branch: str, theirs: str | None, refused: remote_git.PushRefused
) -> bool:
    """Whether the push was refused because another clone pushed first: worth another
    round. Read from git's status for our ref, never from what the remote printed (a hook
    may print "failed to update ref" too). Either the remote was ahead when the push
    started ("[rejected] (fetch first)"), or the server could not update the ref
    ("[remote rejected] (failed to update ref)") and the ref has moved since we fetched
    it: another push landed while ours was on its way. A ref the server cannot lock for
    another reason (a stale ``main.lock``) is refused the same way, but has not moved;
    a hook's "declined" is the same next time."""
    if refused.remote_was_ahead:
        return True
    if refused.status != "remote rejected" or refused.reason.endswith("hook declined"):
        return False
    return remote_git.remote_branches(root, remote).get(branch) != theirs
