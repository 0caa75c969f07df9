"""``scarwarden sync`` (issue 15): agents on their own clones share one remote without
losing an episode; a conflict no merge resolves leaves the repository as it was."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import Cli, git, head

from scarwarden.files import playbook as pb
from scarwarden.files.record import add_episodes
from scarwarden.gate.check import check_all
from scarwarden.gate.verify import verify
from scarwarden.repo import MemoryRepo, open_repo


def remote_with(demo_repo: MemoryRepo, tmp_path: Path) -> Path:
    remote = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(demo_repo.root), str(remote))
    return remote


def clone(remote: Path, where: Path) -> MemoryRepo:
    git(remote.parent, "clone", "-q", str(remote), str(where))
    return open_repo(where)


def add(repo: MemoryRepo, n: int, agent: str, per_commit: int = 1) -> None:
    """``n`` episodes of ``agent``, ``per_commit`` to a commit (one by default)."""
    for start in range(0, n, per_commit):
        batch = range(start, min(start + per_commit, n))
        add_episodes(repo, [{"task": f"{agent} task {i}", "outcome": "done", "agent": agent} for i in batch])


def episodes_at(root: Path, rev: str = "HEAD") -> set[str]:
    out = git(root, "ls-tree", "-r", "--name-only", rev, "memory/episodes").stdout
    return {Path(p).stem for p in out.split() if p.endswith(".yaml")}


def test_two_agents_sync_through_one_remote(demo_repo, tmp_path) -> None:
    remote = remote_with(demo_repo, tmp_path)
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    add(a, 2, "a")
    add(b, 3, "b")
    first = Cli(a.root)("sync", "--json")
    assert first.exit_code == 0, first.output
    assert json.loads(first.stdout)["integrated"] == "up-to-date"
    second = Cli(b.root)("sync", "--json")
    assert second.exit_code == 0, second.output
    data = json.loads(second.stdout)
    assert data["integrated"] == "rebase" and data["pushed"] and data["commits_pushed"] == 3
    again = Cli(a.root)("sync")
    assert again.exit_code == 0 and "fast-forwarded to the remote" in again.stdout
    assert episodes_at(a.root) == episodes_at(b.root) == episodes_at(remote, "main")
    assert len(episodes_at(remote, "main")) == len(episodes_at(demo_repo.root)) + 5


def conflicting_clones(demo_repo: MemoryRepo, tmp_path: Path) -> tuple[MemoryRepo, MemoryRepo]:
    """Two clones that reword PB-02 differently; the first has synced already."""
    from dataclasses import replace

    remote = remote_with(demo_repo, tmp_path)
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    for repo, words in ((a, "Ours says this."), (b, "Theirs says that.")):
        book = pb.parse(repo.playbook_path.read_text())
        rule = book.get("PB-02")
        repo.playbook_path.write_text(pb.render(book.with_rule(replace(rule, text=words))))
        git(repo.root, "commit", "-qam", "reword PB-02")
    assert Cli(a.root)("sync").exit_code == 0
    return a, b


def test_an_unresolvable_conflict_changes_nothing(demo_repo, tmp_path) -> None:
    _, b = conflicting_clones(demo_repo, tmp_path)
    before = (head(b), git(b.root, "status", "--porcelain").stdout, b.playbook_path.read_bytes())
    result = Cli(b.root)("sync")
    assert result.exit_code == 1
    assert "cannot integrate origin/main: the changes conflict" in result.stderr
    assert "Traceback" not in result.stderr
    assert (head(b), git(b.root, "status", "--porcelain").stdout, b.playbook_path.read_bytes()) == before
    assert not (b.root / ".git" / "rebase-merge").exists() and not (b.root / ".git" / "MERGE_HEAD").exists()


def test_sync_refuses_without_a_remote_or_with_uncommitted_changes(demo_repo, cli) -> None:
    result = cli("sync")
    assert result.exit_code == 2 and "no remote named 'origin'" in result.stderr
    git(demo_repo.root, "remote", "add", "origin", str(demo_repo.root))
    demo_repo.playbook_path.write_text(demo_repo.playbook_path.read_text() + "\n")
    result = cli("sync")
    assert result.exit_code == 2 and "uncommitted changes" in result.stderr


@pytest.mark.slow
def test_eight_agents_fifty_episodes_each_lose_nothing(demo_repo, tmp_path) -> None:
    remote = remote_with(demo_repo, tmp_path)
    clones = [clone(remote, tmp_path / f"agent{i}") for i in range(8)]
    for i, repo in enumerate(clones):
        # Ten commits of five: each sync still rebases a stack of commits onto the others'
        # pushes and retries, 400 episodes in all; 50 one-episode commits an agent cost
        # 400 in-process writes (~9 s) before the race even began.
        add(repo, 50, f"agent{i}", per_commit=5)
    expected = set().union(*(episodes_at(repo.root) for repo in clones))
    assert len(expected) == len(episodes_at(demo_repo.root)) + 400
    started = time.perf_counter()
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "scarwarden",
                "--repo",
                str(repo.root),
                "sync",
                "--retries",
                "40",
                "--json",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for repo in clones
    ]
    results = [p.communicate(timeout=600) for p in procs]
    for proc, (out, err) in zip(procs, results, strict=True):
        assert proc.returncode == 0, err
        assert json.loads(out)["pushed"]
    print(f"8 concurrent syncs took {time.perf_counter() - started:.1f}s")
    assert episodes_at(remote, "main") == expected  # 400 new, 0 lost
    final = clone(remote, tmp_path / "auditor")
    assert check_all(final).ok
    assert verify(final.root).ok


def test_mcp_sync_pushes_each_write(demo_repo, tmp_path) -> None:
    from scarwarden.agents.mcp.tools import MemoryTools

    remote = remote_with(demo_repo, tmp_path)
    agent = clone(remote, tmp_path / "agent")
    reply = MemoryTools(agent, sync=True).record_episode({"task": "Synced task", "outcome": "done"})
    assert reply["sync"]["pushed"] is True and reply["sync"]["commits_pushed"] == 1
    assert reply["id"] in episodes_at(remote, "main")
    quiet = MemoryTools(agent).record_episode({"task": "Local task", "outcome": "done"})
    assert "sync" not in quiet and quiet["id"] not in episodes_at(remote, "main")


def test_sync_merges_when_a_rebase_would_orphan_a_receipts_ledger(demo_repo, tmp_path) -> None:
    """An episode's receipt names the ledger of a local commit: a rebase would rewrite
    that commit and push the tree nowhere, so no other clone could prove the receipt.
    Sync merges instead, and a fresh clone of the remote proves it."""
    remote = remote_with(demo_repo, tmp_path)
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    add(a, 1, "a")  # a local commit: the ledger recall sees exists only here
    task = "Draft a LinkedIn post announcing our beta"
    given = json.loads(Cli(a.root)("recall", "--json", task).stdout)["receipt"]
    assert given["ledger"] == git(a.root, "rev-parse", "HEAD:memory/episodes").stdout.strip()
    recorded = Cli(a.root)(
        "episode", "add", "--task", task, "--action", "drafted", "--receipt", given["receipt"]
    )
    assert recorded.exit_code == 0, recorded.output
    add(b, 2, "b")
    assert Cli(b.root)("sync").exit_code == 0
    synced = Cli(a.root)("sync", "--json")
    assert synced.exit_code == 0, synced.output
    assert json.loads(synced.stdout)["integrated"] == "merge"
    auditor = clone(remote, tmp_path / "auditor")
    report = check_all(auditor)
    assert report.ok and report.stats["receipts_checked"] == 1, [str(p) for p in report.problems]
    assert not report.warnings, [str(w) for w in report.warnings]  # proved, not unverifiable
    assert verify(auditor.root).ok
    # Without a receipt naming a local ledger, sync still rebases (a linear history).
    add(b, 1, "b")
    assert Cli(b.root)("sync").exit_code == 0
    add(a, 1, "a")
    assert json.loads(Cli(a.root)("sync", "--json").stdout)["integrated"] == "rebase"


def test_sync_moves_the_branch_alone_and_no_tag(demo_repo, tmp_path) -> None:
    """As its --help says: sync fetches no tag (it writes no ref it has not judged) and
    pushes only the branch, where ``git pull`` / ``git push --follow-tags`` would share them."""
    remote = remote_with(demo_repo, tmp_path)
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    add(b, 1, "b")
    git(b.root, "tag", "-a", "-m", "reviewed", "b-reviewed")
    git(b.root, "push", "-q", "origin", "HEAD", "b-reviewed")
    add(a, 1, "a")
    git(a.root, "tag", "-a", "-m", "mine", "a-local")
    synced = Cli(a.root)("sync", "--json")
    assert synced.exit_code == 0, synced.output
    assert json.loads(synced.stdout)["integrated"] == "rebase"
    assert git(a.root, "merge-base", "--is-ancestor", head(b), "HEAD", check=False).returncode == 0
    assert git(a.root, "tag", "--list").stdout.split() == ["a-local"]
    assert "a-local" not in git(remote, "tag", "--list").stdout.split()
