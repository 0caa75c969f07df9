"""What the range check and ``verify`` ask git for, counted (issue 30): at 1M episodes
each question that reads the whole ledger or its whole history costs 0.2-0.5 s."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import git
from helpers import commit_no_verify, write_episode

from scarwarden.gate.check import check_range
from scarwarden.gate.ledger import CITED, cache_dir, warm
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


def _tree_listings(trace: str, episodes_rel: str) -> int:
    """How many ``git ls-tree -r`` of the whole episodes folder a GIT_TRACE log shows."""
    return sum(
        1 for line in trace.splitlines() if " ls-tree -r " in line and line.endswith(f"-- {episodes_rel}")
    )


def test_cited_places_carry_over_from_the_newest_kept_tree(
    demo_repo: MemoryRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hook's range starts at a tree no run kept the cited episodes' places for (the
    branch tip the last check ended at moved on): they are carried over from the newest
    tree kept by one diff, with no statistics and no listing of the ledger; the same
    answer as with the cache off."""
    root = demo_repo.root
    assert warm(root, "HEAD") is not None  # cited.json: HEAD's places
    for n in (1, 2):
        write_episode(demo_repo, f"ep-scale0carr{n}", task=f"Reply to billing ticket {n}")
        commit_no_verify(root, f"episode {n}")
    kept = cache_dir(root)
    assert kept is not None
    for entry in kept.glob("*.json"):
        if entry.name != CITED:
            entry.unlink()  # no statistics to find them by

    def ranged(**env: str) -> tuple[list[str], list[str], int]:
        log = tmp_path / f"trace-{sorted(env)}"
        monkeypatch.setenv("GIT_TRACE", str(log))
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        report = check_range(root, "HEAD~1", "HEAD")
        monkeypatch.delenv("GIT_TRACE")
        for name in env:
            monkeypatch.delenv(name)
        listings = _tree_listings(log.read_text(), demo_repo.episodes_rel)
        return [p.code for p in report.problems], [w.message for w in report.warnings], listings

    problems, warnings, listings = ranged(SCARWARDEN_LEDGER_CACHE="off")
    assert listings == 1
    assert ranged() == (problems, warnings, 0)
