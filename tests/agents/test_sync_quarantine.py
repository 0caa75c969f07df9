"""Judging a remote that has no branch of our name leaves our object store as it was when
``sync`` refuses it: the other project's commits are fetched into a quarantine (a
temporary object folder with ours as its alternate), never into our store, and the
quarantine is removed on every path (refused, accepted, failed). Before, a refused
remote's commits stayed in our store, named by no ref, until ``git gc``.

A remote that is accepted keeps its commits: they move into our store, so the first
push sends only what the remote lacks."""

from __future__ import annotations

import shlex
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


def foreign(tmp_path: Path, files: int, tag: bool, branch: str = "master") -> tuple[Path, list[str]]:
    """A bare remote of another project: one commit of ``files`` files (over git's
    unpack limit of 100 objects, the fetch keeps a pack; under, loose objects) on
    ``branch``, or behind an annotated tag alone. The remote, and the IDs of the objects
    its ref names (the tag's too)."""
    work = tmp_path / "other-project"
    git(tmp_path, "init", "-q", "-b", branch, str(work))
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
    git(work, "push", "-q", str(remote), branch)
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


def refs(root: Path) -> tuple[str, bool]:
    """Every ref, with what it names, and whether a ``FETCH_HEAD`` was written."""
    return git(root, "for-each-ref", "--format=%(refname) %(objectname)").stdout, (
        root / ".git" / "FETCH_HEAD"
    ).exists()


def wrong_url(memory_repo: MemoryRepo, tmp_path: Path, files: int, tracked: bool) -> tuple[Path, list[str]]:
    """``origin`` is another project's repository with a branch of our name, ``main``
    (``tracked``: after syncing with this memory's own remote, so ``origin/main`` names
    our commit, and the URL was then changed)."""
    add(memory_repo, 1, "a")
    other, theirs = foreign(tmp_path, files, False, branch="main")
    if tracked:
        ours = tmp_path / "ours.git"
        git(tmp_path, "init", "-q", "--bare", str(ours))
        git(memory_repo.root, "remote", "add", "origin", str(ours))
        assert Cli(memory_repo.root)("sync").exit_code == 0
        git(memory_repo.root, "remote", "set-url", "origin", str(other))
    else:
        git(memory_repo.root, "remote", "add", "origin", str(other))
    return other, theirs


@pytest.mark.parametrize("tracked", [False, True], ids=["untracked", "tracked"])
@pytest.mark.parametrize("files", [1, 120], ids=["loose", "packed"])
def test_a_refused_branch_of_our_name_leaves_every_ref_and_object_as_they_were(
    memory_repo: MemoryRepo, tmp_path: Path, files: int, tracked: bool
) -> None:
    """The remote's ``main`` shares no history with ours: it is judged in a quarantine,
    so after the refusal no ref names it (``origin/main`` is absent, or still ours) and
    none of its objects is in our store."""
    _, theirs = wrong_url(memory_repo, tmp_path, files, tracked)
    before = refs(memory_repo.root), store(memory_repo.root)

    result = Cli(memory_repo.root)("sync")

    assert result.exit_code == 2, result.output
    assert "origin/main shares no history with main: origin is not this memory's remote" in result.stderr
    assert not any(has(memory_repo.root, sha) for sha in theirs)
    assert (refs(memory_repo.root), store(memory_repo.root)) == before


def test_the_unrelated_hints_commands_join_the_two_histories(memory_repo: MemoryRepo, tmp_path: Path) -> None:
    """The refusal's hint names commands that work although no ref names the remote's
    branch: run as written, they merge it; sync then pushes the joined history."""
    other, theirs = wrong_url(memory_repo, tmp_path, 1, False)
    result = Cli(memory_repo.root)("sync")
    assert result.exit_code == 2, result.output
    hint = result.stderr.split("hint: ", 1)[1]
    commands = hint[hint.index("(git fetch") + 1 : hint.rindex(")")].split(" && ")
    assert [c.split()[:2] for c in commands] == [["git", "fetch"], ["git", "merge"]]

    ours = head(memory_repo)
    for command in commands:
        done = subprocess.run(shlex.split(command), cwd=memory_repo.root, capture_output=True, text=True)
        assert done.returncode == 0, (command, done.stderr)

    assert git(memory_repo.root, "rev-parse", "HEAD^1", "HEAD^2").stdout.split() == [ours, theirs[0]]
    synced = Cli(memory_repo.root)("sync")
    assert synced.exit_code == 0, synced.output
    assert head(other) == head(memory_repo)


def test_a_shallow_clone_that_cannot_tell_is_refused_with_refs_and_store_as_they_were(
    demo_repo: MemoryRepo, tmp_path: Path
) -> None:
    """A shallow clone cannot tell a wrong remote from history it was not given: it says
    so, and leaves refs and store as they were, as for an unrelated remote."""
    remote = remote_with(demo_repo, tmp_path)
    agent = tmp_path / "agent"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{remote}", str(agent))
    other, theirs = foreign(tmp_path, 1, False, branch="main")
    git(agent, "remote", "set-url", "origin", str(other))
    before = refs(agent), store(agent)

    result = Cli(agent)("sync")

    assert result.exit_code == 2, result.output
    assert "cannot tell how main and origin/main are related: this clone is shallow" in result.stderr
    assert not any(has(agent, sha) for sha in theirs)
    assert (refs(agent), store(agent)) == before


def test_a_related_branch_is_accepted_and_tracked(demo_repo: MemoryRepo, tmp_path: Path) -> None:
    """The remote's ``main`` moved on (commits the agent never fetched): sync
    fast-forwards to it, its commits are in our store after, whole, ``origin/main``
    names it, and no quarantine is left."""
    remote = remote_with(demo_repo, tmp_path)
    agent, other = clone(remote, tmp_path / "agent"), clone(remote, tmp_path / "other")
    add(other, 3, "other")
    git(other.root, "push", "-q", "origin", "main")
    main = head(remote)
    assert not has(agent.root, main)

    result = Cli(agent.root)("sync", "--json")

    assert result.exit_code == 0, result.output
    assert '"integrated": "fast-forward"' in result.stdout
    assert head(agent) == main == git(agent.root, "rev-parse", "origin/main").stdout.strip()
    git(agent.root, "rev-list", "--objects", main)  # every object it names is here
    assert not list((agent.root / ".git" / "objects").glob(f"{PREFIX}*"))
