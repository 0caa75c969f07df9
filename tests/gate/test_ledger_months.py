"""The ledger statistics split by month folder (issue 30): a tree's entry keeps the counts
and the month trees, each month's entry its IDs and applications. A cache in this form
proves what the whole-tree form did (and that form is converted, reading no episode); a
damaged month entry is derived again from its episodes; one rewritten whole, its hashes
fixed, is trusted as the chain of trust says, and ``SCARWARDEN_LEDGER_CACHE=off
scarwarden verify`` catches what it sways."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import git
from helpers import EP, commit_no_verify, write_episode, write_playbook

from scarwarden.files.episodes import parse_episode_bytes
from scarwarden.files.receipt import Receipt
from scarwarden.gate.ledger import LedgerReader, cache_dir
from scarwarden.gate.ledger_months import MonthStore
from scarwarden.gate.ledger_store import OLD_FORMAT
from scarwarden.recall.engine import recall_task
from scarwarden.recall.ledger_stats import LedgerStats
from scarwarden.repo import MemoryRepo

TASK = "approve a refund above fifty euros for the manager"
MONTH = "2099/01"
RULE = "Refunds above fifty euros need a manager approval."


def run(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=root, capture_output=True, text=True, env={**os.environ, **env}
    )


def tree_at(repo: MemoryRepo, rev: str, folder: str = "") -> str:
    spec = f"{rev}:{repo.episodes_rel}" + (f"/{folder}" if folder else "")
    return git(repo.root, "rev-parse", spec).stdout.strip()


def struggling_rule(repo: MemoryRepo) -> None:
    """PB-01, corrected in each of its four applications (in ``MONTH``): recall keeps
    ACT off it (ACT_AND_FLAG), only because of those applications."""
    write_episode(repo, EP, task="a refund approved without a manager")  # the rule's source
    write_playbook(
        repo,
        [("PB-01", "Refund approvals", "Refunds above fifty euros need a manager approval.", ["refund"])],
    )
    for i in range(4):
        write_episode(
            repo,
            f"ep-strug{i:05d}",
            at=f"2099-01-0{i + 1}T10:00:00Z",
            task=f"refund case {i}",
            rules_applied=["PB-01"],
            correction="wrong: ask finance",
        )
    commit_no_verify(repo.root, "corrections")


def forged_act(repo: MemoryRepo) -> dict[str, Any]:
    """The receipt recall gives (ACT_AND_FLAG), claimed as ACT, carried by a new episode."""
    honest = recall_task(repo, TASK, log=False).receipt
    assert honest is not None and honest.verdict == "ACT_AND_FLAG"
    fields = {k: v for k, v in honest.to_json().items() if k != "receipt"}
    return Receipt.make(**{**fields, "verdict": "ACT"}).to_json()


def carry(repo: MemoryRepo, receipt: dict[str, Any]) -> None:
    write_episode(repo, "ep-claims00001", task=TASK, recalled=receipt, rules_applied=["PB-01"])
    commit_no_verify(repo.root, "an episode claiming ACT")


def test_a_rewritten_month_entry_is_trusted_and_verify_without_the_cache_catches_it(
    memory_repo: MemoryRepo,
) -> None:
    struggling_rule(memory_repo)
    assert run(memory_repo.root, "scarwarden.gate.ledger", "HEAD").returncode == 0
    where = cache_dir(memory_repo.root)
    assert where is not None
    store, month_tree = MonthStore(where, memory_repo.episodes_rel), tree_at(memory_repo, "HEAD", MONTH)
    receipt = forged_act(memory_repo)
    carry(memory_repo, receipt)
    # Honest cache: the forged verdict is refused.
    checked = run(memory_repo.root, "scarwarden", "verify")
    assert checked.returncode == 1 and "receipt says ACT, but" in checked.stdout
    # The month's entry rewritten whole, its hashes fixed: PB-01 applied nowhere.
    month = store.load(MONTH, month_tree)
    assert month is not None and month.rule("PB-01")
    del month._rules["PB-01"]
    store.save(MONTH, month_tree, month)
    swayed = run(memory_repo.root, "scarwarden", "verify")
    assert swayed.returncode == 0, swayed.stdout + swayed.stderr  # trusted, as whoever writes .git is
    off = run(memory_repo.root, "scarwarden", "verify", SCARWARDEN_LEDGER_CACHE="off")
    assert off.returncode == 1 and "receipt says ACT, but" in off.stdout


def test_a_damaged_month_entry_is_derived_again_from_its_episodes(memory_repo: MemoryRepo) -> None:
    struggling_rule(memory_repo)
    assert run(memory_repo.root, "scarwarden.gate.ledger", "HEAD").returncode == 0
    where = cache_dir(memory_repo.root)
    assert where is not None
    tree, month_tree = tree_at(memory_repo, "HEAD"), tree_at(memory_repo, "HEAD", MONTH)
    store = MonthStore(where, memory_repo.episodes_rel)
    entry = store.path(MONTH, month_tree)
    good = entry.read_bytes()
    truth = LedgerReader(memory_repo.root, memory_repo.episodes_rel).stats(tree)
    # One byte of PB-01's part changed (its hash left as it was), then the entry cut short,
    # then another month's entry under this one's name: each caught, the month read again.
    lines = good.split(b"\n")
    assert b"PB-01" in lines[0] and b"ep-strug00000" in lines[2]  # header, IDs, PB-01's part
    flipped = b"\n".join([*lines[:2], lines[2].replace(b"ep-strug00000", b"ep-strug00009")])
    other = good.replace(month_tree.encode(), b"0" * 40)
    for damaged in (flipped, good[:-5], other):
        entry.write_bytes(damaged)
        reader = LedgerReader(memory_repo.root, memory_repo.episodes_rel, cache_dir=where)
        apps = reader.stats(tree).applications("PB-01")
        assert [a.id for a in apps] == [f"ep-strug{i:05d}" for i in range(4)] and reader.read_files == 4
        assert reader.stats(tree) == truth
        assert entry.read_bytes() == good  # derived again and kept
    # The forged verdict is refused with the damaged entry in place, cache on.
    entry.write_bytes(flipped)
    carry(memory_repo, forged_act(memory_repo))
    checked = run(memory_repo.root, "scarwarden", "verify")
    assert checked.returncode == 1 and "receipt says ACT, but" in checked.stdout


def _whole_entry(repo: MemoryRepo, tree: str) -> bytes:
    """``tree``'s statistics in the previous format (one entry, read whole), as a CI
    cache saved by the code before the split holds them."""
    stats = LedgerStats()
    for rel in sorted(p.relative_to(repo.root).as_posix() for p in repo.episodes_dir.rglob("*.yaml")):
        stats.add(parse_episode_bytes((repo.root / rel).read_bytes(), rel, episodes_dir=repo.episodes_rel))
    body = stats.to_bytes()
    digest = hashlib.sha256(body).hexdigest()
    head = {"format": OLD_FORMAT, "tree": tree, "episodes": repo.episodes_rel, "sha256": digest}
    return json.dumps(head, sort_keys=True).encode() + b"\n" + body


def test_an_entry_of_the_previous_format_is_converted_and_proves_alike(
    demo_repo: MemoryRepo, tmp_path: Path
) -> None:
    receipt = recall_task(demo_repo, "Post our discount code on Twitter", log=False).receipt
    assert receipt is not None and receipt.ledger_tree is not None
    tree = receipt.ledger_tree
    old = _whole_entry(demo_repo, tree)
    write_episode(demo_repo, "ep-fresh00001", task=receipt.task, recalled=receipt.to_json())
    commit_no_verify(demo_repo.root, "an episode with a receipt")
    clone = tmp_path / "ci"
    git(tmp_path, "clone", "-q", str(demo_repo.root), str(clone))
    restored = clone / ".git" / "scarwarden" / "ledger"
    restored.mkdir(parents=True)
    (restored / f"{tree}.json").write_bytes(old)
    reader = LedgerReader(clone, demo_repo.episodes_rel, cache_dir=restored)
    stats = reader.stats(tree)
    assert reader.derived[tree] == "converted" and reader.read_files == 0
    assert stats == LedgerReader(clone, demo_repo.episodes_rel).stats(tree)
    # Kept in the new form: the tree's entry and one entry per month folder.
    assert json.loads((restored / f"{tree}.json").read_bytes().partition(b"\n")[0])["format"] != OLD_FORMAT
    months = {p.parent for p in (clone / demo_repo.episodes_rel).rglob("*.yaml")}
    assert len(list((restored / "months").glob("*.json"))) == len(months) > 1
    again = LedgerReader(clone, demo_repo.episodes_rel, cache_dir=restored)
    assert again.stats(tree) == stats and again.read_files == 0 and not again.derived
    shutil.rmtree(restored)
    restored.mkdir(parents=True)
    (restored / f"{tree}.json").write_bytes(old)
    checked = run(clone, "scarwarden", "check", "--from-ref", "HEAD~1", "--to-ref", "HEAD")
    assert checked.returncode == 0 and "OK" in checked.stdout, checked.stdout + checked.stderr


def test_a_new_episode_rewrites_its_month_alone(demo_repo: MemoryRepo) -> None:
    where = cache_dir(demo_repo.root)
    assert where is not None
    base = tree_at(demo_repo, "HEAD")
    LedgerReader(demo_repo.root, demo_repo.episodes_rel, cache_dir=where).stats(base)
    months = where / "months"
    before = {p.name: p.stat().st_mtime_ns for p in months.glob("*.json")}
    write_episode(
        demo_repo, "ep-newmonth01", at="2026-11-21T10:00:00Z", task="one more", rules_applied=["PB-01"]
    )
    commit_no_verify(demo_repo.root, "one more")
    head = tree_at(demo_repo, "HEAD")
    step = LedgerReader(demo_repo.root, demo_repo.episodes_rel, cache_dir=where)
    stats = step.stats(head)
    assert step.derived[head].startswith("diff from") and step.read_files == 1
    after = {p.name: p.stat().st_mtime_ns for p in months.glob("*.json")}
    assert len(set(after) - set(before)) == 1  # the changed month's new entry, no other
    assert all(after[n] == t for n, t in before.items() if n in after)
    assert stats == LedgerReader(demo_repo.root, demo_repo.episodes_rel).stats(head)
    assert any(a.id == "ep-newmonth01" for a in stats.applications("PB-01"))
