"""Resolving citations: finding the episode files a playbook cites, cheaply.

Shared by the staged and whole-tree checks (:mod:`scarwarden.gate.check`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path, PurePosixPath

from scarwarden import git
from scarwarden.gate.report import CheckReport
from scarwarden.repo import MemoryRepo, open_repo

TYPE_CHECKING = False
if TYPE_CHECKING:
    from scarwarden.files import playbook as pb
    from scarwarden.gate.policy import GateProblem

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


def staged_episode_paths(
    repo: MemoryRepo,
    base: str | None,
    changes: list[git.RawChange],
    ids: Iterable[str],
    env: Mapping[str, str] | None = None,
) -> dict[str, list[str]]:
    """What :func:`find_episode_paths` answers (ID -> paths in git's index), from HEAD's
    tree and the staged diff (``changes``: the index against ``base``, HEAD), without
    reading the index a second time (0.2-0.3 s at 1M episodes, issue 30): HEAD's paths
    of each ID (:class:`~scarwarden.gate.boundary.Boundary`, names kept per tree ID),
    less those the diff deletes or renames away, plus those it adds, renames to or
    changes. With an unmerged file, no HEAD or the ledger cache off, git's index is
    asked (``git ls-files``)."""
    from scarwarden.gate import policy as rules
    from scarwarden.gate.boundary import Boundary
    from scarwarden.gate.ledger_files import cache_dir

    wanted = sorted(set(ids))
    head = git.rev_parse(repo.root, "HEAD") if base == "HEAD" else None
    if head is None or cache_dir(repo.root) is None or any(c.status not in "ADMRT" for *_x, c in changes):
        return find_episode_paths(repo.root, repo.episodes_rel, wanted, env)
    boundary = Boundary(repo.root, [head], repo.memory_rel, repo.episodes_rel, repo.playbook_rel)
    blobs: dict[str, str | None] = {p: None for ps in boundary.episode_paths(wanted).values() for p in ps}
    for _old_mode, _new_mode, _old_blob, new_blob, change in changes:
        blobs.pop(change.old_path or change.path, None)
        if change.status != "D":
            blobs[change.path] = new_blob
    unread = [f"{head}:{p}" for p, b in blobs.items() if b is None]
    for spec, blob in git.blob_ids(repo.root, unread, env=env).items():
        blobs[spec.split(":", 1)[1]] = blob or ""
    found: dict[str, list[str]] = {i: [] for i in wanted}
    for path, blob in sorted(blobs.items()):
        name = PurePosixPath(path).name
        if blob != EMPTY_BLOB and rules.is_under(path, repo.episodes_rel) and name.endswith(".yaml"):
            if name[:-5] in found:
                found[name[:-5]].append(path)
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


def unmerged_problem(path: str) -> GateProblem:
    """A file in conflict in git's index (one entry per side, none of them the tree):
    what the staged check and ``check --all`` both report."""
    from scarwarden.gate import policy as gate_rules

    return gate_rules.problem(
        "unmerged", "the file is unmerged", file=path, hint="resolve the conflict and 'git add' it"
    )


def memory_mode_problem(
    playbook_rel: str, episodes_rel: str, path: str, mode: str, status: str = "A"
) -> GateProblem | None:
    """The playbook that is no plain file, or anything git holds *at* the episodes
    folder's path or a folder above it (``memory``): there, git can only hold a symlink,
    a submodule or a file, never the folder (``memory/episodes -> ../elsewhere``: git
    keeps no episode beyond a link, and its target is no ledger the gate ever read)."""
    from scarwarden.gate import policy as gate_rules

    if path == playbook_rel:
        return gate_rules.playbook_mode_problem(path, mode, status)
    above = gate_rules.is_under(episodes_rel, path) or gate_rules.is_under(playbook_rel, path)
    if not (path == episodes_rel or above) or status == "D":
        return None
    kind = {"120000": "a symlink", "160000": "a submodule"}.get(mode, "a file")
    where = "the episodes folder" if path == episodes_rel else f"the folder {path}"
    return gate_rules.problem(
        "episodes-not-a-folder",
        f"{kind} where {where} should be; it must be a plain folder",
        file=path,
        hint=f"keep the episodes in the repository itself: git rm --cached {path}, "
        f"then move the files it points to into a folder {path}/ and git add it",
    )


def note_playbook_folder(report: CheckReport, playbook_rel: str, path: str, status: str = "A") -> None:
    """A file inside a folder named as the playbook (``memory/playbook.md/x``): every
    command stops at it, so one ``playbook-not-a-file`` problem for the folder."""
    from scarwarden.gate import policy as gate_rules

    if status != "D" and gate_rules.is_under(path, playbook_rel):
        bad = gate_rules.playbook_mode_problem(playbook_rel, "040000")
        if bad is not None and bad not in report.problems:
            report.problems.append(bad)


def absent_memory(repo: MemoryRepo, base: str | None, env: Mapping[str, str] | None) -> str | None:
    """The memory folder when git has none, with nothing staged under it (the index
    then holds ``base``'s memory): asked of the working folder first, which costs a
    memory repository no git call, then of ``base``'s tree."""
    if repo.memory_dir.is_dir() or (base and git.tree_id(repo.root, base, repo.memory_rel, env=env)):
        return None
    return repo.memory_rel


def open_memory(root: Path | str | MemoryRepo) -> MemoryRepo:
    """The memory repository at ``root`` (a MemoryRepo is taken as it is)."""
    if isinstance(root, MemoryRepo):
        return root  # the CLI has loaded the settings already
    # The gate also runs before 'init' has created the memory: nothing to refuse then.
    return open_repo(root, initialised=False)
