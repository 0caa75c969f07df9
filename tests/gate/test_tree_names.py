"""The names kept per tree ID (gate/tree_names.py) answer a lookup as the tree does:
a name is found between two fences and only there (issue 30), so every name of a real
git tree is found, from the first to the last, and nothing else is, whatever the
spacing of the fences."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest
from conftest import git

from scarwarden.gate import tree_names

ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"


def _month_tree(root: Path, names: list[str]) -> bytes:
    """A real month tree of ``names`` (one empty blob each) and a folder, as git stores it."""
    blob = git(root, "hash-object", "-w", "--stdin").stdout.strip()
    sub = subprocess.run(
        ["git", "mktree"], cwd=root, input="", capture_output=True, text=True, check=True
    ).stdout.strip()
    lines = [f"100644 blob {blob}\t{name}" for name in names] + [f"040000 tree {sub}\tnot-a-file.yaml"]
    tree = subprocess.run(
        ["git", "mktree"], cwd=root, input="\n".join(lines) + "\n", capture_output=True, text=True, check=True
    ).stdout.strip()
    raw = subprocess.run(["git", "cat-file", "tree", tree], cwd=root, capture_output=True, check=True).stdout
    return raw


def _probes(names: list[bytes]) -> list[bytes]:
    """Every name, and names that are not there: before the first, after the last,
    between neighbours, prefixes and extensions of real ones, a folder's name."""
    out = list(names) + [b"", b"\0", b"a", b"ep-", b"zzzz.yaml", b"not-a-file.yaml", b"ep-" + b"~" * 10]
    for name in names:
        out += [name[:-5], name + b"x", name[:-6] + b"~.yaml", name[:-6] + b"!.yaml", b"x" + name]
    return out


@pytest.mark.parametrize("block", [4096, 512, 64, 8])
def test_a_kept_tree_finds_its_file_names_and_nothing_else(
    git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    """Names of a real month tree (~11 KB of them), kept, mapped back and looked up,
    with fences every ``block`` bytes (8: a fence after nearly every name)."""
    monkeypatch.setattr(tree_names, "BLOCK", block)
    rnd = random.Random(30)
    ids = sorted({"ep-" + "".join(rnd.choice(ALPHABET) for _ in range(10)) for _ in range(600)})
    raw = _month_tree(git_repo, [f"{i}.yaml" for i in ids])
    listed = tree_names.file_names(raw, 20)
    assert sorted(listed) == sorted(f"{i}.yaml".encode() for i in ids)  # the folder is not a file
    store = tree_names.NamesCache(tmp_path / "ledger")
    store.save("a" * 40, tree_names.Names.of(listed), len(listed))
    kept = store.load("a" * 40)
    assert kept is not None and kept.body() == tree_names.Names.of(listed).body()
    present = set(listed)
    probes = _probes(sorted(listed))
    for names in (kept, tree_names.Names.of(listed)):  # mapped from the file, and in memory
        assert [p for p in probes if p in names] == [p for p in probes if p in present]
    assert sorted(listed)[0] in kept and sorted(listed)[-1] in kept  # the first, the last
    if block < 4096:
        assert len(kept._fences()[0]) > 2  # looked up between fences, not in one search


def test_a_small_tree_and_an_empty_one(tmp_path: Path) -> None:
    """A tree under one block is searched whole; one with no file finds nothing."""
    small = tree_names.Names.of([b"ep-b.yaml", b"ep-a.yaml"])
    assert b"ep-a.yaml" in small and b"ep-b.yaml" in small
    assert b"ep-c.yaml" not in small and b"ep-a" not in small and b"p-a.yaml" not in small
    empty = tree_names.Names.of([])
    assert b"ep-a.yaml" not in empty and b"" not in empty
