"""Resolving citations: finding the episode files a playbook cites, cheaply.

Shared by the staged and whole-tree checks (:mod:`scarwarden.gate.check`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from scarwarden import git
from scarwarden.gate.report import CheckReport
from scarwarden.repo import MemoryRepo, open_repo

if TYPE_CHECKING:
    from scarwarden.files import playbook as pb

#: Above this many IDs to look up, one listing of the episodes folder is cheaper than
#: one pathspec per ID (git matches every index entry against every pattern).
MAX_ID_PATTERNS = 8


#: An empty file can never be a valid episode; an intent-to-add entry has this blob.
EMPTY_BLOB = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"


def find_episode_paths(
    root: Path, episodes_rel: str, ids: Iterable[str], env: Mapping[str, str] | None = None
) -> dict[str, list[str]]:
    """Episode ID -> paths of files with that name in git's index (any folder depth)."""
    wanted = sorted(set(ids))
    found: dict[str, list[str]] = {i: [] for i in wanted}
    if not wanted:
        return found
    if len(wanted) <= MAX_ID_PATTERNS:
        # Default pathspec magic: '*' also matches '/', so misplaced copies are found too.
        specs = [f"{episodes_rel}/*{i}.yaml" for i in wanted]
    else:
        specs = [f"{episodes_rel}/"]
    for entry in git.ls_files_stage(root, *specs, env=env):
        if entry.blob == EMPTY_BLOB:
            continue  # 'git add -N': in the index by name only, its content unstaged
        name = PurePosixPath(entry.path).name
        if name.endswith(".yaml") and name[:-5] in found:
            found[name[:-5]].append(entry.path)
    return found


def _worktree_hint(repo: MemoryRepo, ep_id: str) -> str | None:
    """Say so when the missing episode exists only in the working folder."""
    matches = sorted(repo.episodes_dir.glob(f"*/*/{ep_id}.yaml"))
    if not matches:
        return None
    rel = matches[0].relative_to(repo.root).as_posix()
    return (
        f"{rel} exists in the working folder but not in this commit: stage it "
        f"(git add {rel}) or name it too in 'git commit <paths>'; untracked and "
        "unstaged files never count"
    )


def check_citations(
    report: CheckReport,
    repo: MemoryRepo,
    rules: Iterable[pb.Rule],
    text: str | None,
    resolves: Callable[[str], bool],
    where: str,
) -> None:
    """One ``citation-missing`` problem per cited ID that ``resolves`` rejects."""
    from scarwarden.gate import policy as gate_rules

    for rule in rules:
        line = gate_rules.learnt_in_line(text, rule)
        for ep in rule.episode_ids:
            report.count("citations_checked")
            if not resolves(ep):
                report.problems.append(
                    gate_rules.citation_problem(
                        rule, ep, repo.playbook_rel, line, where, hint=_worktree_hint(repo, ep)
                    )
                )


def open_memory(root: Path | str | MemoryRepo) -> MemoryRepo:
    """The memory repository at ``root`` (a MemoryRepo is taken as it is)."""
    if isinstance(root, MemoryRepo):
        return root  # the CLI has loaded the settings already
    # The gate also runs before 'init' has created the memory: nothing to refuse then.
    return open_repo(root, initialised=False)
