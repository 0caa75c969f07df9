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
the trees the range starts from (its boundary) are trusted, and read only for the
episode IDs the range adds or cites (:mod:`scarwarden.gate.boundary`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from scarwarden import git
from scarwarden.gate.walk import walk
from scarwarden.gate.walk_result import WalkResult
from scarwarden.repo import MemoryRepo, open_repo

RawChange = tuple[str, str, str, str, git.Change]

__all__ = ["WalkResult", "verify", "walk"]


def verify(
    root: Path | str | MemoryRepo,
    rev_range: str | None = None,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> WalkResult:
    """Prove the history of ``rev_range`` (default: the current branch, all of it);
    ``progress(done, total)`` as :func:`walk` reports it."""
    repo = root if isinstance(root, MemoryRepo) else open_repo(root, initialised=False)
    if rev_range is None:
        if git.head(repo.root) is None:
            return WalkResult("HEAD")
        rev_range = "HEAD"
    else:
        _refuse_options(rev_range)
        _require_commits(repo, rev_range)
    result = walk(repo, rev_range, progress=progress)
    from scarwarden.gate.report import CheckReport  # issue 25: sentence support at the tip
    from scarwarden.gate.support import check_tree_support

    tip = CheckReport("verify")
    start, dots, end = rev_range.rpartition("..")
    check_tree_support(tip, repo, end or "HEAD", base=start if dots and start and "." not in start else None)
    result.problems += tip.problems
    result.warnings += tip.warnings
    return result


#: The words of a RANGE that select commits (``HEAD --not --branches``); any other
#: option would change what ``git rev-list`` does (``--output=FILE`` writes FILE,
#: ``--bisect`` walks half the history) or what it prints.
_SELECTING = ("--not", "--all", "--branches", "--tags", "--remotes", "--glob=", "--exclude=")


def _refuse_options(rev_range: str) -> None:
    from scarwarden.errors import UsageError

    for word in rev_range.split():
        if word.startswith("-") and not any(
            word == opt or word.startswith(opt if opt.endswith("=") else f"{opt}=") for opt in _SELECTING
        ):
            raise UsageError(
                f"cannot verify {rev_range!r}: {word!r} is not a revision",
                hint="give a branch, a SHA or a range such as origin/main..HEAD (beside them, only "
                "--not, --all, --branches, --tags, --remotes, --glob and --exclude)",
            )


def _require_commits(repo: MemoryRepo, rev_range: str) -> None:
    """Refuse (exit 2) a range naming a tree, a blob or a tag of one: ``git rev-list``
    walks nothing for it, and "0 commits, honest" would prove nothing."""
    from scarwarden.errors import GitError, UsageError

    try:
        found = git.range_non_commits(repo.root, rev_range)
    except GitError:
        return  # what git cannot parse, the walk reports (with git's words)
    if found:
        kind, sha = found[0]
        what = "an object missing from this repository" if kind.endswith(" missing") else f"a {kind}"
        raise UsageError(
            f"cannot verify {rev_range!r}: it names {what} ({sha[:10]}), not a commit",
            hint="give a branch, a SHA or a range of commits such as origin/main..HEAD",
        )
