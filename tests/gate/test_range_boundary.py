"""The range check reads the trees it starts from only for the IDs it needs (issue 15),
and finds them wherever they are: misplaced copies still collide, odd folders resolve."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import git
from helpers import add_rule, commit_no_verify, episode_text, write

from scarwarden.gate import boundary
from scarwarden.gate.check import check_range
from scarwarden.repo import MemoryRepo

TWIN = "ep-gate0twin1"
ODD = "ep-gate0odd02"


def _range_with_boundary_oddities(repo: MemoryRepo) -> tuple[str, str]:
    """(base, dup): a boundary holding misplaced episodes, then a range that re-adds one
    of their IDs and cites the other and a missing one."""
    root, ep = repo.root, repo.episodes_rel
    write(root, f"{ep}/misplaced/{TWIN}.yaml", episode_text(TWIN))
    write(root, f"{ep}/misplaced/deeper/still/{ODD}.yaml", episode_text(ODD))
    base = commit_no_verify(root, "misplaced episodes, committed around the gate")
    write(root, f"{ep}/2026/11/{TWIN}.yaml", episode_text(TWIN))
    dup = commit_no_verify(root, "re-adds an ID the boundary has")
    add_rule(repo, [ODD, "ep-nosuch0001"])
    commit_no_verify(root, "a rule citing a misplaced episode and a missing one")
    return base, dup


def _found(repo: MemoryRepo, base: str) -> list[tuple[str, str | None, str | None]]:
    return [(p.code, p.commit, p.message) for p in check_range(repo.root, base, "HEAD").problems]


def test_boundary_ids_are_found_at_any_depth(demo_repo: MemoryRepo) -> None:
    base, dup = _range_with_boundary_oddities(demo_repo)
    found = _found(demo_repo, base)
    codes = [(code, commit) for code, commit, _ in found]
    assert ("episode-duplicate-id", dup) in codes
    dup_msg = next(m for c, _, m in found if c == "episode-duplicate-id")
    assert f"misplaced/{TWIN}.yaml" in (dup_msg or "")
    cited = [m for c, _, m in found if c == "citation-missing"]
    assert len(cited) == 1 and "ep-nosuch0001" in (cited[0] or ""), cited


def test_many_ids_parse_each_tree_once_with_the_same_problems(
    demo_repo: MemoryRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    base, _dup = _range_with_boundary_oddities(demo_repo)
    probed = _found(demo_repo, base)
    monkeypatch.setattr(boundary, "MAX_SEARCHES", 0)
    assert _found(demo_repo, base) == probed
    assert git(demo_repo.root, "status", "--porcelain").stdout == ""


def test_the_range_check_does_not_read_gits_index(demo_repo: MemoryRepo) -> None:
    """Issue 30: ``git diff-tree`` reads the whole index on start (0.2-0.3 s at 1M
    episodes) though a range check compares objects only; it is run with an empty one.
    A damaged index (which git refuses to read) changes nothing in the answer."""
    base, _dup = _range_with_boundary_oddities(demo_repo)
    probed = _found(demo_repo, base)
    index = demo_repo.root / ".git" / "index"
    kept = index.read_bytes()
    index.write_bytes(b"DIRC" + b"\0" * 64)  # not an index git can read
    try:
        assert git(demo_repo.root, "diff-tree", "-r", "HEAD~1", "HEAD", check=False).returncode != 0
        assert _found(demo_repo, base) == probed
    finally:
        index.write_bytes(kept)


def _tree_reads(trace: str) -> int:
    """How many ``git cat-file --batch`` (object contents, not ``--batch-check``) a
    GIT_TRACE log shows."""
    return sum(1 for line in trace.splitlines() if " cat-file --batch" in line and "--batch-" not in line)


def test_the_boundarys_month_trees_are_read_once_then_looked_up_by_name(
    demo_repo: MemoryRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 30: the names of each boundary tree are kept by tree ID (names/ in the
    ledger cache folder); the next check of a range starting there reads no tree, and
    finds the same problems. A damaged entry is read again from git; with the cache
    off, nothing is kept and the answer is the same."""
    base, _dup = _range_with_boundary_oddities(demo_repo)
    kept = demo_repo.root / ".git" / "scarwarden" / "ledger" / "names"

    def traced(name: str) -> tuple[list[tuple[str, str | None, str | None]], int]:
        # The support check's kept result (gate/support_memo.py) spares its own read of
        # the cited episodes: dropped, so that only the boundary's tree reads differ.
        shutil.rmtree(kept.parent / "support", ignore_errors=True)
        log = tmp_path / name
        monkeypatch.setenv("GIT_TRACE", str(log))
        found = _found(demo_repo, base)
        monkeypatch.delenv("GIT_TRACE")
        return found, _tree_reads(log.read_text())

    monkeypatch.setenv("SCARWARDEN_LEDGER_CACHE", "off")
    off, reads_off = traced("off")
    assert not kept.exists()
    monkeypatch.delenv("SCARWARDEN_LEDGER_CACHE")
    first, reads_first = traced("first")
    assert first == off and reads_first == reads_off
    month = git(demo_repo.root, "rev-parse", f"{base}:{demo_repo.episodes_rel}/2026/11").stdout.strip()
    entry = kept / month
    header, _, body = entry.read_bytes().partition(b"\n")
    assert header.startswith(b"scarwarden-names 1 " + month.encode())
    assert f"\0{TWIN}.yaml\0".encode() not in body  # the month folder's names, not the misplaced ones
    again, reads_again = traced("again")
    assert again == first and reads_again == reads_first - 1  # no tree read
    entry.write_bytes(header + b"\n\0damaged")
    damaged, reads_damaged = traced("damaged")
    assert damaged == first and reads_damaged == reads_first
    assert entry.read_bytes().partition(b"\n")[2] == body  # read again and kept
