"""The pre-commit hook's staged diff through git's cache tree (issue 30): the tree
``git commit`` has just computed is read from the index's ``TREE`` extension (found by
its ``EOIE`` extension) and compared with HEAD by ``git diff-tree``, instead of
``git diff --cached`` reading every index entry. Whenever the cache tree cannot answer
(not yet computed, invalidated by ``git add``, no ``EOIE``, a damaged file) git's index is
asked as before; either way the diff is the same, and so is the gate's verdict."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from conftest import git
from helpers import episode_text, first_episode, write

from scarwarden import git as g
from scarwarden.gate.hooks import install
from scarwarden.git.cache_tree import index_file, staged_tree
from scarwarden.repo import MemoryRepo


def _repo(path: Path, *init: str, eoie: bool = True) -> Path:
    path.mkdir()
    git(path, "init", "-q", "-b", "main", *init)
    if eoie:
        git(path, "config", "index.recordEndOfIndexEntries", "true")
    for i in range(3):
        write(path, f"m/a/f{i}.txt", "".join(f"line {i} {k}\n" for k in range(40)))
        write(path, f"m/b/g{i}.txt", f"other {i}\n")
    write(path, "code.py", "print(1)\n")
    git(path, "add", ".")
    git(path, "commit", "-q", "-m", "one")
    return path


def _stage_every_kind(root: Path) -> None:
    """An add, a delete, a rename, a mode change and a symlink under ``m``, and a change
    outside it."""
    write(root, "m/a/new.txt", "new\n")
    git(root, "rm", "-q", "m/b/g0.txt")
    git(root, "mv", "m/a/f2.txt", "m/a/moved.txt")
    (root / "m/a/f1.txt").chmod(0o755)
    os.symlink("f0.txt", root / "m/a/link")
    write(root, "code.py", "print(2)\n")
    git(root, "add", "-A")


def _write_tree(root: Path, env: dict[str, str] | None = None) -> str:
    """What ``git commit`` does to the index before its pre-commit hook runs."""
    return git(root, "write-tree", env=env).stdout.strip()


@pytest.mark.parametrize("init", [(), ("--object-format=sha256",)], ids=["sha1", "sha256"])
def test_the_cache_tree_is_the_tree_committed_and_diffs_the_same(
    tmp_path: Path, init: tuple[str, ...]
) -> None:
    root = _repo(tmp_path / "repo", *init)
    _stage_every_kind(root)
    assert staged_tree(index_file(root)) is None  # git add left the root invalid
    by_index = g.diff_raw(root, "HEAD", "m")
    assert g.diff_cached(root, "HEAD", "m") == by_index  # the index answers

    tree = _write_tree(root)
    assert staged_tree(index_file(root)) == tree
    assert g.diff_cached(root, "HEAD", "m") == by_index  # the cache tree answers
    statuses = sorted(c.status for *_x, c in by_index)
    assert statuses == ["A", "A", "D", "M", "R"]  # every kind, the change outside m left out
    # Against nothing (a root commit, no commit yet): the empty tree of the repository's
    # own object format (SHA-1's ID named no object in a SHA-256 repository).
    assert g.empty_tree(root) == git(root, "hash-object", "-t", "tree", "/dev/null").stdout.strip()
    everything = g.diff_raw(root, None, "m")
    assert g.diff_cached(root, None, "m") == everything
    assert sorted(c.path for *_x, c in everything) == sorted(git(root, "ls-files", "m").stdout.split())
    committed = [c.path for c in g.diff_name_status(root, None, "HEAD", "m")]
    assert sorted(committed) == sorted(git(root, "ls-tree", "-r", "--name-only", "HEAD", "m").stdout.split())


def test_the_trees_are_diffed_without_reading_the_index(tmp_path: Path) -> None:
    """``git diff-tree`` reads the whole index on start unless told it is empty (0.1 s
    of a 1M-file index): the cache tree's diff gives it none, and answers the same."""
    root = _repo(tmp_path / "repo")
    _stage_every_kind(root)
    tree = _write_tree(root)
    trace = tmp_path / "trace2.txt"
    traced = {**os.environ, "GIT_TRACE2_PERF": str(trace)}
    assert g.diff_cached(root, "HEAD", "m", env=traced) == g.diff_raw(root, "HEAD", "m")
    lines = trace.read_text().splitlines()
    assert any(f" diff-tree -r --raw -z --no-abbrev -M --no-ext-diff HEAD {tree} " in x for x in lines)
    read = [x for x in lines if "label:do_read_index" in x]
    assert read and all(str(root / ".git" / "index") not in x for x in read)
    assert not [x for x in lines if "read/cache_nr" in x]  # no entry was read


def test_no_answer_without_the_end_of_entries_record_or_from_a_damaged_index(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo", eoie=False)
    _write_tree(root)
    assert staged_tree(index_file(root)) is None  # the entries would have to be walked
    git(root, "config", "index.recordEndOfIndexEntries", "true")
    tree = _write_tree(root)
    # git writes the index again, with EOIE: read-tree always writes it (and primes the
    # cache tree); 'update-index --really-refresh' wrote it only when some entry was
    # racily clean, which a slow (loaded) run's were not: the test failed under load.
    git(root, "read-tree", tree)
    assert staged_tree(index_file(root)) == tree

    index = index_file(root)
    whole = index.read_bytes()
    for damaged in (whole[:-30], whole[:11], b"", b"DIRC" + whole[4:-60] + whole[-20:]):
        index.write_bytes(damaged)
        assert staged_tree(index) is None
    assert staged_tree(tmp_path / "no-such-index") is None


def test_git_index_file_is_honoured_relative_to_the_repository(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    other = {**os.environ, "GIT_INDEX_FILE": ".git/other-index"}
    git(root, "read-tree", "HEAD", env=other)
    write(root, "m/b/only-here.txt", "x\n")
    git(root, "add", "m/b/only-here.txt", env=other)
    tree = _write_tree(root, other)
    assert index_file(root, other) == root / ".git" / "other-index"
    assert staged_tree(index_file(root, other)) == tree
    changes = g.diff_cached(root, "HEAD", "m", env=other)
    assert [c.path for *_x, c in changes] == ["m/b/only-here.txt"]
    assert g.diff_cached(root, "HEAD", "m") == []  # the repository's own index: nothing staged


def _commit_traced(root: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """``git commit`` with the installed hooks, and the git commands the pre-commit
    hook's Python started."""
    trace = root / ".git" / "trace.txt"
    trace.unlink(missing_ok=True)
    env = {**os.environ, "GIT_TRACE": str(trace)}
    env.pop("SCARWARDEN_SKIP", None)
    proc = git(root, "commit", *args, check=False, env=env)
    commands = [
        line.split("trace: built-in: ", 1)[1]
        for line in trace.read_text().splitlines()
        if "built-in: git " in line
    ]
    return proc, commands


def _staged_diffs(commands: list[str]) -> tuple[list[str], list[str]]:
    trees = [c for c in commands if c.startswith("git diff-tree -r --raw")]
    index = [c for c in commands if c.startswith("git diff --raw") and "--cached" in c]
    return trees, index


def test_the_hook_in_git_commit_reads_the_cache_tree_and_refuses_the_same(demo_repo: MemoryRepo) -> None:
    root = demo_repo.root
    install(root)
    g.apply_scale_settings(root)  # as 'init' and 'hooks install' do: a split index, EOIE
    write(root, "memory/episodes/2026/11/ep-gate0new01.yaml", episode_text("ep-gate0new01"))
    git(root, "add", "memory")
    proc, commands = _commit_traced(root, "-m", "a good episode")
    assert proc.returncode == 0, proc.stderr
    assert "scarwarden check: OK" in proc.stderr
    trees, index = _staged_diffs(commands)
    assert len(trees) == 1 and index == []  # the cache tree answered; the index was not diffed

    # An edited episode: refused through the same path, nothing committed.
    before = git(root, "rev-parse", "HEAD").stdout
    rel = first_episode(demo_repo)
    (root / rel).write_text((root / rel).read_text().replace("task:", "task: (edited)", 1))
    git(root, "add", rel)
    proc, commands = _commit_traced(root, "-m", "edit history")
    assert proc.returncode == 1
    assert rel in proc.stdout + proc.stderr and "scarwarden check: OK" not in proc.stderr
    assert _staged_diffs(commands)[0] and git(root, "rev-parse", "HEAD").stdout == before

    # A partial commit ('git commit <path>') hands the hook an index whose cache tree git
    # did not compute: the index is diffed, and the verdict is the same.
    proc, commands = _commit_traced(root, "-m", "edit history", "--", rel)
    trees, index = _staged_diffs(commands)
    assert proc.returncode == 1 and trees == [] and len(index) == 1
    assert git(root, "rev-parse", "HEAD").stdout == before
