"""A fresh clone checks in O(change) (issue 30): the statistics of the tree a range
starts from, derived where it was last checked and restored from a CI cache, are the
base a receipt's ledger is derived from by a diff; SCARWARDEN_LEDGER_CACHE=off derives
every tree from its episodes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git
from helpers import commit_no_verify, write_episode

from scarwarden.gate.ledger import CITED, LedgerReader, cache_dir
from scarwarden.recall.engine import recall_task
from scarwarden.repo import MemoryRepo

TASK = "Post our discount code on Twitter"


def scarwarden(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=root, capture_output=True, text=True, env={**os.environ, **env}
    )


def with_receipt(repo: MemoryRepo) -> str:
    """Commit an episode carrying a receipt; the ledger tree it names (HEAD~1's)."""
    receipt = recall_task(repo, TASK, log=False).receipt
    assert receipt is not None and receipt.ledger_tree is not None
    write_episode(repo, "ep-fresh00001", task=TASK, recalled=receipt.to_json())
    commit_no_verify(repo.root, "an episode with a receipt")
    return receipt.ledger_tree


def test_a_fresh_clone_with_the_restored_statistics_reads_only_the_change(
    demo_repo: MemoryRepo, tmp_path: Path
) -> None:
    tree = with_receipt(demo_repo)
    # What the CI action runs after the gate on the base branch: HEAD~1's statistics.
    done = scarwarden(demo_repo.root, "scarwarden.gate.ledger", "HEAD~1")
    assert done.returncode == 0 and done.stdout.strip() == tree, done.stderr
    where = cache_dir(demo_repo.root)
    assert where is not None and (where / f"{tree}.json").exists() and (where / CITED).exists()
    # And the names of its month folders, so the clone's boundary reads no tree (issue 30).
    months = git(
        demo_repo.root,
        "ls-tree",
        "-d",
        "-r",
        "--format=%(objectname)",
        "HEAD~1",
        "--",
        demo_repo.episodes_rel,
    )
    assert {(where / "names" / t).exists() for t in months.stdout.split()[1:]} == {True}
    clone = tmp_path / "ci"
    git(tmp_path, "clone", "-q", str(demo_repo.root), str(clone))
    restored = clone / ".git" / "scarwarden" / "ledger"
    shutil.copytree(where, restored)  # what actions/cache/restore puts back
    checked = scarwarden(clone, "scarwarden", "check", "--from-ref", "HEAD~1", "--to-ref", "HEAD")
    assert checked.returncode == 0 and "OK" in checked.stdout, checked.stdout + checked.stderr
    # The receipt's tree came from the restored entry: nothing read, nothing derived.
    reader = LedgerReader(clone, demo_repo.episodes_rel, cache_dir=restored)
    assert reader.stats(tree).task_count > 30 and reader.read_files == 0
    # The head's tree is one episode away: derived by a diff, reading that one file.
    head = git(clone, "rev-parse", f"HEAD:{demo_repo.episodes_rel}").stdout.strip()
    step = LedgerReader(clone, demo_repo.episodes_rel, cache_dir=restored)
    assert step.stats(head).task_count == reader.stats(tree).task_count + 1
    assert step.read_files == 1 and step.derived[head].startswith("diff from")
    assert step.stats(head) == LedgerReader(clone, demo_repo.episodes_rel).stats(head)


def test_ledger_cache_off_derives_from_the_episodes(
    demo_repo: MemoryRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_receipt(demo_repo)
    checked = scarwarden(
        demo_repo.root, "scarwarden", "check", "--from-ref", "HEAD~1", SCARWARDEN_LEDGER_CACHE="off"
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert not (demo_repo.root / ".git" / "scarwarden" / "ledger").exists()
    monkeypatch.setenv("SCARWARDEN_LEDGER_CACHE", "off")
    assert cache_dir(demo_repo.root) is None
    assert scarwarden(demo_repo.root, "scarwarden.gate.ledger").stdout.strip() == "no ledger tree to cache"


def test_warming_a_repository_without_episodes_says_so(git_repo: Path) -> None:
    done = scarwarden(git_repo, "scarwarden.gate.ledger", "HEAD")
    assert done.returncode == 0 and done.stdout.strip() == "no ledger tree to cache"


def test_the_ci_action_carries_the_statistics_across_runs() -> None:
    import yaml
    from conftest import ROOT

    steps = yaml.safe_load((ROOT / "action.yml").read_text())["runs"]["steps"]
    names = [str(s.get("uses") or s.get("run", "")) for s in steps]
    restore = next(i for i, n in enumerate(names) if n.startswith("actions/cache/restore@"))
    check = next(i for i, n in enumerate(names) if "scarwarden check" in n)
    warm = next(i for i, n in enumerate(names) if "python -m scarwarden.gate.ledger" in n)
    save = next(i for i, n in enumerate(names) if n.startswith("actions/cache/save@"))
    assert restore < check < warm < save
    for i in (restore, save):
        assert steps[i]["with"]["path"].endswith("/.git/scarwarden/ledger")
        assert steps[i]["with"]["key"] == "scarwarden-ledger-${{ inputs.head }}"
    assert steps[restore]["with"]["restore-keys"] == "scarwarden-ledger-"
    assert steps[warm]["if"] == steps[save]["if"] == "${{ always() }}"
