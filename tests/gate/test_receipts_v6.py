"""Version-6 recall receipts (issue 26): the same-case term and every first-pass
candidate scored. The gate re-derives today's receipts, still proves a version-5
receipt by version 5's arithmetic, and refuses a forged version-6 one."""

from __future__ import annotations

from conftest import git
from test_receipts_v2 import codes, forged, issued, stage
from test_receipts_v5 import assert_an_older_receipt_proves

from scarwarden.files.receipt import REDERIVED
from scarwarden.gate.check import check_staged
from scarwarden.gate.proofs import IMPLEMENTED
from scarwarden.repo import MemoryRepo

TASK = "Post our discount code on Twitter"


def test_a_version_6_receipt_proves(demo_repo: MemoryRepo) -> None:
    r = issued(demo_repo, TASK)
    assert r["algorithm"] == 6 and 6 in IMPLEMENTED and 6 in REDERIVED
    stage(demo_repo, 1, r)
    report = check_staged(demo_repo)
    assert report.ok and not report.warnings, [str(p) for p in report.problems + report.warnings]


def test_a_version_5_receipt_still_proves(demo_repo: MemoryRepo) -> None:
    assert_an_older_receipt_proves(demo_repo, 5)


def test_a_version_6_receipt_forged_to_reorder_its_rules_is_refused(demo_repo: MemoryRepo) -> None:
    r = issued(demo_repo, "Write the release notes for the beta and post the discount code")
    assert len(r["rules"]) >= 2, r
    rel = stage(demo_repo, 1, forged(r, rules=list(reversed(r["rules"]))))
    report = check_staged(demo_repo)
    assert not report.ok and set(codes(report)) == {"receipt-mismatch"}, codes(report)
    git(demo_repo.root, "rm", "-q", "--cached", rel)
