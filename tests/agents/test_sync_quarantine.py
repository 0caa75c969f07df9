"""Judging a remote that has no branch of our name leaves our object store as it was when
``sync`` refuses it: the other project's commits are fetched into a quarantine (a
temporary object folder with ours as its alternate), never into our store, and the
quarantine is removed on every path (refused, accepted, failed). Before, a refused
remote's commits stayed in our store, named by no ref, until ``git gc``.

A remote that is accepted keeps its commits: they move into our store, so the first
push sends only what the remote lacks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import Cli, git, head
from test_sync import add, clone, remote_with

from scarwarden.git.quarantine import PREFIX
from scarwarden.repo import MemoryRepo


def store(root: Path) -> tuple[list[str], str]:
    """Every file and folder of the object store, and git's count of its objects."""
    objects = root / ".git" / "objects"
    files = sorted(str(path.relative_to(objects)) for path in objects.rglob("*"))
    return files, git(root, "count-objects", "-v").stdout


def has(root: Path, sha: str) -> bool:
    return (
        subprocess.run(["git", "-C", str(root), "cat-file", "-e", sha], capture_output=True).returncode == 0
    )


def foreign(tmp_path: Path, files: int, tag: bool) -> tuple[Path, list[str]]:
    """A bare remote of another project: one commit of ``files`` files (over git's
    unpack limit of 100 objects, the fetch keeps a pack; under, loose objects) on a
    branch, or behind an annotated tag alone. The remote, and the IDs of the objects
    its ref names (the tag's too)."""
    work = tmp_path / "other-project"
    git(tmp_path, "init", "-q", "-b", "master", str(work))
    for i in range(files):
        (work / f"f{i}").write_text(f"another project, file {i}\n")
    git(work, "add", ".")
    git(work, "commit", "-qm", "root of another project")
    remote = tmp_path / "other-project.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    if tag:
        git(work, "tag", "-a", "-m", "release", "v1")
        git(work, "push", "-q", str(remote), "refs/tags/v1")
        return remote, [git(work, "rev-parse", "v1").stdout.strip(), head(work)]
    git(work, "push", "-q", str(remote), "master")
    return remote, [head(work), git(work, "rev-parse", "HEAD^{tree}").stdout.strip()]


@pytest.mark.parametrize(
    ("files", "tag"), [(1, False), (120, False), (1, True)], ids=["loose", "packed", "tag"]
)
def test_a_refused_remote_leaves_our_object_store_as_it_was(
    memory_repo: MemoryRepo, tmp_path: Path, files: int, tag: bool
) -> None:
    add(memory_repo, 1, "a")
    remote, theirs = foreign(tmp_path, files, tag)
    git(memory_repo.root, "remote", "add", "origin", str(remote))
    before = store(memory_repo.root)

    result = Cli(memory_repo.root)("sync")

    assert result.exit_code == 2, result.output
    assert "shares history with main: origin is not this memory's remote" in result.stderr
    assert not any(has(memory_repo.root, sha) for sha in theirs)
    assert store(memory_repo.root) == before  # no loose object, no pack, no quarantine


@pytest.mark.parametrize("episodes", [1, 20], ids=["loose", "packed"])
def test_an_accepted_remotes_commits_move_into_our_store(
    demo_repo: MemoryRepo, tmp_path: Path, episodes: int
) -> None:
    """The remote's main moved on (commits the agent never fetched) and shares our
    history: sync starts the agent's branch there, and the commits it fetched to judge
    are in our store after, whole, with no quarantine left."""
    remote = remote_with(demo_repo, tmp_path)
    agent, other = clone(remote, tmp_path / "agent"), clone(remote, tmp_path / "other")
    add(other, episodes, "other")
    git(other.root, "push", "-q", "origin", "main")
    git(agent.root, "switch", "-q", "-c", "agent-1")
    add(agent, 1, "agent")
    main = head(remote)
    assert not has(agent.root, main)

    result = Cli(agent.root)("sync")

    assert result.exit_code == 0, result.output
    assert git(remote, "rev-parse", "agent-1").stdout.strip() == head(agent)
    assert has(agent.root, main)
    git(agent.root, "rev-list", "--objects", main)  # every object it names is here
    assert not list((agent.root / ".git" / "objects").glob(f"{PREFIX}*"))


def test_a_failed_fetch_leaves_no_quarantine(memory_repo: MemoryRepo, tmp_path: Path) -> None:
    """The fetch fails midway: our clone checks what it receives (transfer.fsckObjects)
    and the other project's tip is a commit with no author email, after 120 good files.
    git leaves a partial pack (``tmp_pack_*``) where it was writing; the error is one
    line, and the quarantine, with that pack, is gone; so is one a killed sync left."""
    add(memory_repo, 1, "a")
    remote, theirs = foreign(tmp_path, 120, False)
    bad = f"tree {theirs[1]}\nparent {theirs[0]}\nauthor nobody 0 +0000\ncommitter nobody 0 +0000\n\nbad\n"
    made = ["git", "-C", str(remote), "hash-object", "-t", "commit", "--literally", "-w", "--stdin"]
    tip = subprocess.run(made, input=bad, capture_output=True, text=True, check=True).stdout.strip()
    git(remote, "update-ref", "refs/heads/master", tip)
    git(memory_repo.root, "remote", "add", "origin", str(remote))
    git(memory_repo.root, "config", "transfer.fsckObjects", "true")
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    objects = memory_repo.root / ".git" / "objects"
    before = store(memory_repo.root)
    left = objects / f"{PREFIX}{dead.stdout.strip()}-killed"
    (left / "ab").mkdir(parents=True)
    (left / "ab" / "cdef").write_bytes(b"a killed sync's object")

    result = Cli(memory_repo.root)("sync")

    assert result.exit_code != 0 and "Traceback" not in result.stderr
    assert result.stderr.startswith("error: git fetch origin failed"), result.stderr
    assert "missingEmail" in result.stderr  # the fetch did receive it
    assert not any(has(memory_repo.root, sha) for sha in [tip, *theirs])
    assert store(memory_repo.root) == before
