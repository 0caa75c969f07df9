"""What the range check and ``verify`` ask git for, counted (issue 30): at 1M episodes
each question that reads the whole ledger or its whole history costs 0.2-0.5 s."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import git
from helpers import commit_no_verify, write_episode

from scarwarden.gate.verify import verify
from scarwarden.recall.engine import recall_task
from scarwarden.repo import MemoryRepo


def _folder_history_logs(trace: str) -> int:
    """How many ``git log`` over a folder's whole history (a ledger tree looked up) a
    GIT_TRACE log shows."""
    return sum(1 for line in trace.splitlines() if " git log " in line and "%H %P" in line)


def test_a_receipts_ledger_is_found_among_the_walks_commits(
    demo_repo: MemoryRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A receipt names the episodes folder its recall ran on: here the parent's of the
    commit that adds it, a commit the walk has. Proving it asks no ``git log`` over the
    folder's history; a ledger no commit of the walk has still does (and proves)."""
    root = demo_repo.root
    result = recall_task(demo_repo, "Post our discount code on Twitter", log=False)
    assert result.receipt is not None
    receipt = result.receipt.to_json()
    write_episode(demo_repo, "ep-scale0rcpt1", task=receipt["task"], recalled=receipt)
    commit_no_verify(root, "an episode with a receipt")
    write_episode(demo_repo, "ep-scale0next1", task="Reply to the billing ticket")
    commit_no_verify(root, "one more episode")

    def walked(rev_range: str) -> tuple[int, int, list[str]]:
        log = tmp_path / f"trace-{rev_range.replace('.', '_').replace('~', '-')}"
        monkeypatch.setenv("GIT_TRACE", str(log))
        found = verify(root, rev_range)
        monkeypatch.delenv("GIT_TRACE")
        problems = [p.code for p in found.problems]
        return found.receipts, _folder_history_logs(log.read_text()), problems

    assert walked("HEAD~2..HEAD") == (1, 0, [])
    # The receipt's commit alone, with its parent outside the range: still the walk's
    # parent, so found the same way.
    assert walked("HEAD~2..HEAD~1") == (1, 0, [])
    # A receipt whose ledger is older than every commit the walk has: the folder's
    # history is asked, once, and it proves.
    write_episode(demo_repo, "ep-scale0late1", task=receipt["task"], recalled=receipt)
    commit_no_verify(root, "the same receipt, two commits later")
    assert walked("HEAD~1..HEAD") == (1, 1, [])
    assert git(root, "status", "--porcelain").stdout == ""


def test_the_staged_check_finds_ids_from_heads_tree_and_the_staged_diff(
    demo_repo: MemoryRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 30: the pre-commit check reads git's index once (the staged diff), not a
    second time for ``git ls-files``: each ID's paths are HEAD's (the month trees' names
    kept per tree ID) corrected by the diff. The same paths as git's index holds, for
    copies, renames, deletions, empty files and intent-to-add entries."""
    from scarwarden.gate.check import _staged_diff
    from scarwarden.gate.resolve import find_episode_paths, staged_episode_paths

    root, ep = demo_repo.root, demo_repo.episodes_rel
    ids = ["ep-scale0dup01", "ep-scale0mov01", "ep-scale0del01", "ep-scale0emp01", "ep-scale0ita01"]
    for i in ids[:3]:
        write_episode(demo_repo, i, task=f"Reply to ticket {i}")
    write_episode(
        demo_repo, "ep-scale0dup01", task="A misplaced copy", path=f"{ep}/misplaced/ep-scale0dup01.yaml"
    )
    commit_no_verify(root, "episodes and a misplaced copy")
    write_episode(demo_repo, "ep-scale0dup01", task="Again", path=f"{ep}/2026/10/ep-scale0dup01.yaml")
    git(root, "mv", f"{ep}/2026/11/ep-scale0mov01.yaml", f"{ep}/2026/10/ep-scale0mov01.yaml")
    git(root, "rm", "-q", f"{ep}/2026/11/ep-scale0del01.yaml")
    (root / ep / "2026" / "11" / "ep-scale0emp01.yaml").write_text("")
    (root / ep / "2026" / "11" / "ep-scale0ita01.yaml").write_text("id: ep-scale0ita01\n")
    git(root, "add", f"{ep}/2026/10/ep-scale0dup01.yaml", f"{ep}/2026/11/ep-scale0emp01.yaml")
    git(root, "add", "-N", f"{ep}/2026/11/ep-scale0ita01.yaml")
    base, changes = _staged_diff(root, demo_repo.memory_rel, None)
    expected = find_episode_paths(root, ep, ids)
    assert expected["ep-scale0dup01"] == [
        f"{ep}/{m}/ep-scale0dup01.yaml" for m in ("2026/10", "2026/11", "misplaced")
    ]
    assert expected["ep-scale0mov01"] == [f"{ep}/2026/10/ep-scale0mov01.yaml"]
    assert expected["ep-scale0del01"] == expected["ep-scale0emp01"] == expected["ep-scale0ita01"] == []
    assert staged_episode_paths(demo_repo, base, changes, ids) == expected  # names read from git
    assert staged_episode_paths(demo_repo, base, changes, ids) == expected  # names kept
    log = tmp_path / "trace"
    monkeypatch.setenv("GIT_TRACE", str(log))
    from scarwarden.gate.check import check_staged

    report = check_staged(demo_repo)
    monkeypatch.delenv("GIT_TRACE")
    assert "episode-duplicate-id" in [p.code for p in report.problems]
    assert " ls-files " not in log.read_text()
