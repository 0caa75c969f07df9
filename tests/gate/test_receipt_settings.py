"""A receipt's settings must be the repository's committed ones; a ledger must be an
episodes folder (issue 27)."""

from __future__ import annotations

import json

from conftest import Cli, git
from test_lineage_unverified import forged as recall_receipt
from test_receipts import codes, receipt, stage

from scarwarden.errors import ExitCode
from scarwarden.gate.check import check_staged
from scarwarden.repo import MemoryRepo

TASK = "Post our discount code on Twitter"
FORGED = {"act_threshold": 0.0, "floor": 0.0, "act_tag_hits": 2, "limit": 5}


def test_settings_the_repository_never_had_are_refused(demo_repo: MemoryRepo) -> None:
    honest = receipt(demo_repo)
    forged = receipt(demo_repo, settings=FORGED)
    # What the forged settings buy: an ACT the repository's settings never give.
    assert forged["verdict"] == "ACT" and forged["settings"]["act_threshold"] == 0.0
    rel = stage(demo_repo, 1, forged, rules_applied=forged["rules"][:1])
    report = check_staged(demo_repo)
    assert codes(report) == ["receipt-settings-unknown"]
    [found] = report.problems
    assert "claims recall settings (act_threshold 0.0, floor 0.0, act_tag_hits 2)" in found.message
    assert "never gave" in found.message and "scarwarden.yaml" in (found.hint or "")
    git(demo_repo.root, "rm", "-q", "--cached", rel)
    stage(demo_repo, 2, honest, rules_applied=honest["rules"][:1])
    assert check_staged(demo_repo).ok


def test_committed_configuration_makes_its_settings_good(demo_repo: MemoryRepo) -> None:
    mine = {"act_threshold": 0.3, "floor": 0.2, "act_tag_hits": 3, "limit": 5}
    made = receipt(demo_repo, settings=mine)
    # Not committed yet: an uncommitted edit of scarwarden.yaml gives nothing.
    (demo_repo.root / "scarwarden.yaml").write_text(
        "recall:\n  act_threshold: 0.3\n  floor: 0.2\n  act_tag_hits: 3\n"
    )
    stage(demo_repo, 1, made)
    assert codes(check_staged(demo_repo)) == ["receipt-settings-unknown"]
    git(demo_repo.root, "add", "scarwarden.yaml")
    git(demo_repo.root, "commit", "-q", "--no-verify", "-m", "settings", "--", "scarwarden.yaml")
    report = check_staged(demo_repo)
    assert report.ok, [str(p) for p in report.problems]
    # A later configuration does not take back what an earlier commit gave.
    (demo_repo.root / "scarwarden.yaml").write_text("recall:\n  act_threshold: 0.25\n")
    git(demo_repo.root, "commit", "-q", "--no-verify", "-m", "settings 2", "--", "scarwarden.yaml")
    assert check_staged(demo_repo).ok


def test_the_episode_add_door_refuses_forged_settings(cli: Cli, demo_repo: MemoryRepo) -> None:
    before = git(demo_repo.root, "rev-parse", "HEAD").stdout
    forged = receipt(demo_repo, settings=FORGED)
    out = cli("episode", "add", "--task", TASK, "--action", "Kept it out", "--receipt", json.dumps(forged))
    assert out.exit_code == ExitCode.CHECK_FAILED, out.output
    assert "never gave" in out.output
    assert git(demo_repo.root, "rev-parse", "HEAD").stdout == before


def test_a_ledger_that_is_the_memory_tree_is_unknown(cli: Cli, demo_repo: MemoryRepo) -> None:
    memory_tree = git(demo_repo.root, "rev-parse", "HEAD:memory").stdout.strip()
    forged = recall_receipt(cli, TASK, ledger=memory_tree)
    stage(demo_repo, 1, forged, rules_applied=forged["rules"][:1])
    report = check_staged(demo_repo)
    assert codes(report) == ["receipt-ledger-unknown"], [str(p) for p in report.problems + report.warnings]
    assert "was never the episodes folder in this history" in report.problems[0].message
    assert not [w for w in report.warnings if w.code == "receipt-unverifiable"]
