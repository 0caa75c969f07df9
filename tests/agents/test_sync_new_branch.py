"""Where ``sync`` creates our branch on a remote that has none of that name: on an empty
remote (a fresh bare repository: the first push) and beside branches of this memory, as
a fleet's agents each on a branch of their own do; never in another project's repository
(a wrong URL), which is refused before anything is pushed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import Cli, git, head
from test_sync import add, clone, episodes_at, remote_with
from test_sync_refusals import snapshot

from scarwarden.repo import MemoryRepo


def refs(root: Path) -> str:
    return git(root, "for-each-ref", "--format=%(refname) %(objectname)").stdout


def another_project(tmp_path: Path, *branches: str) -> Path:
    """A bare remote of another project (no commit shared with ours), with ``branches``."""
    work = tmp_path / "other-project"
    git(tmp_path, "init", "-q", "-b", branches[0], str(work))
    (work / "README").write_text("another project\n")
    git(work, "add", "README")
    git(work, "commit", "-qm", "root of another project")
    for name in branches[1:]:
        git(work, "branch", name)
    remote = tmp_path / "other-project.git"
    git(tmp_path, "clone", "-q", "--bare", str(work), str(remote))
    return remote


def test_sync_refuses_to_start_its_branch_in_another_projects_remote(
    memory_repo: MemoryRepo, tmp_path: Path
) -> None:
    add(memory_repo, 1, "a")
    remote = another_project(tmp_path, "master", "gh-pages")
    git(memory_repo.root, "remote", "add", "origin", str(remote))
    theirs, ours, before = refs(remote), refs(memory_repo.root), snapshot(memory_repo.root)

    result = Cli(memory_repo.root)("sync")

    assert result.exit_code == 2, result.output
    error, hint = result.stderr.strip().splitlines()
    assert error == (
        "error: origin has no branch main, and none of its branches (gh-pages, master) shares "
        "history with main: origin is not this memory's remote; nothing pushed"
    )
    assert hint == (
        "hint: check its URL (git remote get-url origin); to put main there anyway, "
        "push it yourself (git push origin main), then sync"
    )
    assert refs(remote) == theirs  # no branch of ours in their repository
    assert refs(memory_repo.root) == ours  # not even a remote-tracking branch of theirs
    assert snapshot(memory_repo.root) == before


def test_sync_pushes_to_an_empty_remote(memory_repo: MemoryRepo, tmp_path: Path) -> None:
    add(memory_repo, 2, "a")
    remote = tmp_path / "fresh.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(memory_repo.root, "remote", "add", "origin", str(remote))
    commits = len(git(memory_repo.root, "rev-list", "HEAD").stdout.split())

    result = Cli(memory_repo.root)("sync", "--json")

    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["integrated"], data["pushed"], data["commits_pushed"]) == ("first-push", True, commits)
    assert refs(remote) == f"refs/heads/main {head(memory_repo)}\n"


@pytest.mark.parametrize("beside", [(), ("other-project",)])
def test_sync_starts_its_branch_beside_a_branch_of_this_memory(
    demo_repo: MemoryRepo, tmp_path: Path, beside: tuple[str, ...]
) -> None:
    """An agent on a branch of its own: the remote's main shares its history, and has
    moved on since the agent cloned (commits the agent has never fetched); a branch of
    unrelated history beside it changes nothing."""
    remote = remote_with(demo_repo, tmp_path)
    agent, other = clone(remote, tmp_path / "agent"), clone(remote, tmp_path / "other")
    add(other, 1, "other")
    git(other.root, "push", "-q", "origin", "main")
    for name in beside:
        unrelated = another_project(tmp_path, name)
        git(remote, "fetch", "-q", str(unrelated), f"{name}:{name}")
    git(agent.root, "switch", "-q", "-c", "agent-1")
    add(agent, 2, "agent")
    main = head(remote)

    result = Cli(agent.root)("sync")

    assert result.exit_code == 0, result.output
    # the two commits the remote lacks, not the whole history it already has on main
    assert result.stdout.startswith(
        "Synced agent-1 with origin: created the branch on the remote; pushed 2 commit(s)"
    )
    assert git(remote, "rev-parse", "agent-1").stdout.strip() == head(agent)
    assert episodes_at(remote, "agent-1") == episodes_at(agent.root)
    assert git(remote, "rev-parse", "main").stdout.strip() == main


@pytest.mark.parametrize("annotated", [False, True], ids=["light", "annotated"])
def test_a_remote_of_another_projects_tags_alone_is_not_empty(
    memory_repo: MemoryRepo, tmp_path: Path, annotated: bool
) -> None:
    """A remote with no branch but another project's tags counted as empty, and sync
    started our branch there; it is judged by its tags (an annotated one by the commit
    it names). A remote whose tag is this memory's own takes the branch."""
    add(memory_repo, 1, "a")
    work = tmp_path / "tags-only"
    remote = tmp_path / "tags-only.git"
    git(tmp_path, "init", "-q", "-b", "main", str(work))
    (work / "README").write_text("another project\n")
    git(work, "add", "README")
    git(work, "commit", "-qm", "root of another project")
    git(work, "tag", *(["-a", "-m", "release"] if annotated else []), "v1")
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(work, "push", "-q", str(remote), "refs/tags/v1")
    git(memory_repo.root, "remote", "add", "origin", str(remote))
    theirs = refs(remote)

    result = Cli(memory_repo.root)("sync")

    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(
        "error: origin has no branch main, and none of its tags (v1) shares history with main"
    )
    assert refs(remote) == theirs

    git(memory_repo.root, "push", "-q", "origin", "--force", "HEAD:refs/tags/v1")
    assert Cli(memory_repo.root)("sync").exit_code == 0
    assert git(remote, "rev-parse", "main").stdout.strip() == head(memory_repo)
