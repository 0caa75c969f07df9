"""The struggling-rule check of a receipt's proof counts from each month's tallies
(gate/ledger_months.py, files/lineage_tally.py; issue 30), reading a month's
applications only where the rule's last change falls in it, and answers as counting
every application does: with the cache, without it, and from an entry of the format
before the tallies (converted, no episode read)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import git
from helpers import EP, bypass_env, write_episode, write_playbook

from scarwarden.files.lineage_counts import count, may_struggle
from scarwarden.files.receipt import Receipt
from scarwarden.files.rule_dates import RuleChange, last_changes_at
from scarwarden.gate.ledger import LedgerReader, cache_dir
from scarwarden.gate.ledger_months import OLD_MONTH_FORMAT, MonthStore
from scarwarden.recall.engine import recall_task
from scarwarden.repo import MemoryRepo

TASK = "approve a refund above fifty euros for the manager"
RULE = "Refunds above fifty euros need a manager approval."
CHANGED = "2099-02-15T12:00:00Z"
#: PB-01's applications: went well before its change (January, early February), mostly
#: corrected since (late February, March): struggling since it changed (3 of 4), not
#: over all time (3 of 10).
BEFORE = ["2099-01-05", "2099-01-12", "2099-01-19", "2099-01-26", "2099-02-03", "2099-02-10"]
SINCE = [("2099-02-20", True), ("2099-02-25", True), ("2099-03-03", True), ("2099-03-10", False)]


def commit_at(repo: MemoryRepo, message: str, date: str) -> None:
    git(repo.root, "add", "-A", "memory")
    env = {**bypass_env(), "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    git(repo.root, "commit", "-q", "--no-verify", "-m", message, env=env)


def changed_mid_february(repo: MemoryRepo) -> None:
    write_episode(repo, EP, task="a refund approved without a manager")
    write_playbook(repo, [("PB-01", "Refund approvals", RULE, ["refund"])])
    commit_at(repo, "the rule", "2099-01-01T00:00:00Z")
    for i, day in enumerate(BEFORE):
        write_episode(
            repo, f"ep-before{i:04d}", at=f"{day}T10:00:00Z", task=f"refund {i}", rules_applied=["PB-01"]
        )
    commit_at(repo, "applied, went well", "2099-02-11T00:00:00Z")
    write_playbook(repo, [("PB-01", "Refund approvals", RULE.replace(".", ", in writing."), ["refund"])])
    commit_at(repo, "the rule changes", CHANGED)
    for i, (day, fixed) in enumerate(SINCE):
        extra = {"correction": "wrong: ask finance"} if fixed else {}
        write_episode(
            repo,
            f"ep-since0{i:04d}",
            at=f"{day}T10:00:00Z",
            task=f"case {i}",
            rules_applied=["PB-01"],
            **extra,
        )
    commit_at(repo, "applied since, corrected", "2099-03-11T00:00:00Z")


def tree_at(repo: MemoryRepo, rev: str, folder: str = "") -> str:
    spec = f"{rev}:{repo.episodes_rel}" + (f"/{folder}" if folder else "")
    return git(repo.root, "rev-parse", spec).stdout.strip()


def run(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=root, capture_output=True, text=True, env={**os.environ, **env}
    )


def full(reader: LedgerReader, tree: str, changed: RuleChange | None) -> tuple[bool, bool]:
    """may_struggle and struggling, counted from every application."""
    apps = reader.stats(tree).applications("PB-01")
    return may_struggle(apps), count("PB-01", changed, apps).struggling


def tallied(reader: LedgerReader, tree: str, changed: RuleChange | None) -> tuple[bool, bool]:
    standing = reader.stats(tree).standing("PB-01")
    return standing.may_struggle(), standing.struggling(changed)


def damage(store: MonthStore, folder: str, tree: str, rule: str = "PB-01") -> None:
    """Change a byte of ``rule``'s part of a month entry, its hash left as it was."""
    entry = store.path(folder, tree)
    lines = entry.read_bytes().split(b"\n")
    i = 1 + json.loads(lines[0])["rules"].index(rule) + 1
    lines[i] = lines[i].replace(b"ep-", b"ex-", 1)
    entry.write_bytes(b"\n".join(lines))


def test_a_struggling_check_reads_only_the_month_the_change_falls_in(memory_repo: MemoryRepo) -> None:
    changed_mid_february(memory_repo)
    root, rel = memory_repo.root, memory_repo.episodes_rel
    playbook = git(root, "rev-parse", f"HEAD:{memory_repo.playbook_rel}").stdout.strip()
    changes = last_changes_at(root, "HEAD", memory_repo.playbook_rel, playbook)
    assert changes is not None and changes["PB-01"].date.startswith("2099-02-15T12:00:00")
    changed = changes["PB-01"]
    tree = tree_at(memory_repo, "HEAD")
    assert run(root, "scarwarden.gate.ledger", "HEAD").returncode == 0
    where = cache_dir(root)
    assert where is not None
    fresh = LedgerReader(root, rel)  # no cache: every month from its episodes
    assert full(fresh, tree, changed) == (True, True) and full(fresh, tree, None) == (True, False)
    # January's and March's parts damaged (hashes unchanged): the change is in
    # February, so only February's part is read, and nothing is derived again.
    store = MonthStore(where, rel)
    for month in ("2099/01", "2099/03"):
        damage(store, month, tree_at(memory_repo, "HEAD", month))
    reader = LedgerReader(root, rel, cache_dir=where)
    assert tallied(reader, tree, changed) == (True, True) and reader.read_files == 0
    assert tallied(reader, tree, None) == (True, False) and reader.read_files == 0
    # A change in January reads January's part: its damage is caught, the month read
    # again from its episodes, and the answer is the full computation's.
    january = RuleChange(changed.commit, "2099-01-15T00:00:00Z")
    reader = LedgerReader(root, rel, cache_dir=where)
    assert tallied(reader, tree, january) == full(fresh, tree, january) and reader.read_files == 4
    # Every date the check may be asked about: the same answer as every application's.
    for date in ("2098-12-31T00:00:00Z", "2099-01-05T10:00:00Z", "2099-02-10T10:00:00Z", CHANGED):
        for when in (date, "2099-02-20T10:00:00Z", "2099-03-10T10:00:00Z", "2099-03-10T10:00:01Z"):
            moment = RuleChange(changed.commit, when)
            reader = LedgerReader(root, rel, cache_dir=where)
            assert tallied(reader, tree, moment) == full(fresh, tree, moment), when


def forged_act(repo: MemoryRepo) -> dict[str, Any]:
    """The receipt recall gives (ACT_AND_FLAG: PB-01 struggles since it changed),
    claimed as ACT."""
    honest = recall_task(repo, TASK, log=False).receipt
    assert honest is not None and honest.verdict == "ACT_AND_FLAG"
    fields = {k: v for k, v in honest.to_json().items() if k != "receipt"}
    return Receipt.make(**{**fields, "verdict": "ACT"}).to_json()


def test_verify_refuses_act_on_a_rule_struggling_since_it_changed_with_and_without_the_cache(
    memory_repo: MemoryRepo,
) -> None:
    changed_mid_february(memory_repo)
    root = memory_repo.root
    assert run(root, "scarwarden.gate.ledger", "HEAD").returncode == 0
    honest = recall_task(memory_repo, TASK, log=False).receipt
    assert honest is not None
    forged = forged_act(memory_repo)
    write_episode(memory_repo, "ep-claims00001", task=TASK, recalled=forged, rules_applied=["PB-01"])
    commit_at(memory_repo, "an episode claiming ACT", "2099-03-12T00:00:00Z")
    for env in ({}, {"SCARWARDEN_LEDGER_CACHE": "off"}):
        checked = run(root, "scarwarden", "verify", **env)
        assert checked.returncode == 1 and "receipt says ACT, but" in checked.stdout, checked.stdout
    git(root, "reset", "-q", "--hard", "HEAD~1")
    write_episode(memory_repo, "ep-honest0001", task=TASK, recalled=honest.to_json(), rules_applied=["PB-01"])
    commit_at(memory_repo, "an honest receipt", "2099-03-12T00:00:00Z")
    for env in ({}, {"SCARWARDEN_LEDGER_CACHE": "off"}):
        checked = run(root, "scarwarden", "verify", **env)
        assert checked.returncode == 0 and "1 recall receipt re-derived" in checked.stdout, checked.stdout


def test_a_month_entry_of_the_format_before_the_tallies_is_converted_from_its_own_parts(
    memory_repo: MemoryRepo,
) -> None:
    changed_mid_february(memory_repo)
    root, rel = memory_repo.root, memory_repo.episodes_rel
    assert run(root, "scarwarden.gate.ledger", "HEAD").returncode == 0
    where = cache_dir(root)
    assert where is not None
    store, tree = MonthStore(where, rel), tree_at(memory_repo, "HEAD")
    entries = {m: store.path(m, tree_at(memory_repo, "HEAD", m)) for m in ("2099/01", "2099/02", "2099/03")}
    good = {m: p.read_bytes() for m, p in entries.items()}

    def downgrade() -> None:  # as the code before the tallies wrote them
        for entry in entries.values():
            lines = entry.read_bytes().split(b"\n")
            head = json.loads(lines[0])
            old = {**head, "format": OLD_MONTH_FORMAT, "parts": head["parts"][:-1]}
            entry.write_bytes(
                b"\n".join([json.dumps(old, separators=(",", ":"), sort_keys=True).encode(), *lines[1:-1]])
            )

    # The CI action's last step (a restored cache of the format before) converts them,
    # so that the next job, restoring what it saves, converts nothing.
    downgrade()
    assert all(
        json.loads(p.read_bytes().split(b"\n")[0])["format"] == OLD_MONTH_FORMAT for p in entries.values()
    )
    assert run(root, "scarwarden.gate.ledger", "HEAD").returncode == 0
    assert {m: p.read_bytes() for m, p in entries.items()} == good
    # A proof converts them too.
    downgrade()
    changed = RuleChange("c" * 40, CHANGED)
    reader = LedgerReader(root, rel, cache_dir=where)
    assert tallied(reader, tree, changed) == (True, True) and reader.read_files == 0
    assert {m: p.read_bytes() for m, p in entries.items()} == good  # rewritten in this format
    # A damaged entry of that format is not converted: derived again from its episodes.
    lines = good["2099/03"].split(b"\n")
    head = json.loads(lines[0])
    old = {**head, "format": OLD_MONTH_FORMAT, "parts": head["parts"][:-1]}
    lines[2] = lines[2].replace(b"ep-", b"ex-", 1)
    entries["2099/03"].write_bytes(
        b"\n".join([json.dumps(old, separators=(",", ":"), sort_keys=True).encode(), *lines[1:-1]])
    )
    reader = LedgerReader(root, rel, cache_dir=where)
    assert tallied(reader, tree, changed) == (True, True) and reader.read_files == 2
    assert entries["2099/03"].read_bytes() == good["2099/03"]
