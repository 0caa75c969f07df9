"""``check --from-ref A --to-ref B``: every commit of a range against its parents (CI on
a pull request), by the walk :mod:`scarwarden.gate.verify` proves history with, plus the
credential screen."""

from __future__ import annotations

from pathlib import Path

from scarwarden import git
from scarwarden.errors import UsageError
from scarwarden.gate.report import CheckReport
from scarwarden.gate.resolve import open_memory
from scarwarden.repo import MemoryRepo


def check_range(root: Path | str | MemoryRepo, from_ref: str, to_ref: str) -> CheckReport:
    """Every commit in ``from_ref..to_ref``, each against its parents (CI on a PR).

    A ref that names no commit is a :class:`UsageError` (exit 2), not a failed check."""
    from scarwarden.gate.walk import walk

    repo = open_memory(root)
    for name, ref in (("--from-ref", from_ref), ("--to-ref", to_ref)):
        if ref == git.EMPTY_TREE and name == "--from-ref":
            continue  # before the first commit (issue 28: review on a new repository)
        if git.rev_parse(repo.root, ref) is None:
            raise UsageError(
                f"{name} {ref}: no such commit in {repo.root}",
                hint="in CI, fetch the history first (actions/checkout with "
                "fetch-depth: 0); locally, check the branch or SHA",
            )
    rev_range = to_ref if from_ref == git.EMPTY_TREE else f"{from_ref}..{to_ref}"
    result = walk(repo, rev_range, screen=True)
    report = CheckReport("range", problems=list(result.problems), base=rev_range)
    report.stats = {
        "commits": result.commits,
        "episodes_added": result.episodes,
        "rules_checked": result.rules,
        "citations_checked": result.citations,
    }
    from scarwarden.gate.support import check_tree_support  # issue 25: sentence support

    check_tree_support(report, repo, to_ref, base=None if from_ref == git.EMPTY_TREE else from_ref)
    return report
