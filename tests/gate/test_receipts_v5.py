"""Version-5 recall receipts (issue 26): the evidence adds to the rule (its sentences the
rule already says are left out). The gate re-derives today's receipts, still proves a
version-4 receipt by version 4's arithmetic, and refuses a forged one."""

from __future__ import annotations

from conftest import git
from test_receipts_v2 import codes, forged, issued, stage

from scarwarden.config import RecallSettings
from scarwarden.files import playbook as pb
from scarwarden.files.receipt import Receipt
from scarwarden.gate.check import check_staged
from scarwarden.gate.proofs_ledger import LedgerProofs
from scarwarden.recall.pure import postings
from scarwarden.repo import MemoryRepo

TASK = "Post our discount code on Twitter"


def _derived(demo_repo: MemoryRepo, receipt: dict, algorithm: int):  # type: ignore[no-untyped-def]
    blob = receipt["playbook"]
    book = postings(pb.parse(git(demo_repo.root, "cat-file", "blob", blob).stdout))
    proofs = LedgerProofs(demo_repo.root, demo_repo.playbook_rel, demo_repo.episodes_rel, revs=["HEAD"])
    fields = {k: v for k, v in receipt.items() if k != "receipt"}
    as_old = Receipt.make(**{**fields, "algorithm": algorithm}).to_json()
    derived = proofs.recall(book, Receipt.from_valid(as_old), RecallSettings())
    assert not isinstance(derived, str)
    return as_old, derived


def assert_an_older_receipt_proves(demo_repo: MemoryRepo, algorithm: int) -> None:
    """Today's receipt for TASK, made again as version ``algorithm`` would have made it
    (the gate's own re-derivation gives its answer), is staged and proves."""
    r = issued(demo_repo, TASK)
    assert r["algorithm"] == 6
    as_old, derived = _derived(demo_repo, r, algorithm)
    old = forged(
        as_old,
        verdict=derived.verdict,
        rules=[x.id for x in derived.rules],
        evidence={x.id: x.quotes[0].episode_id for x in derived.rules if x.quotes},
    )
    stage(demo_repo, 1, old)
    report = check_staged(demo_repo)
    assert report.ok and not report.warnings, [str(p) for p in report.problems + report.warnings]


def test_a_version_4_receipt_still_proves(demo_repo: MemoryRepo) -> None:
    assert_an_older_receipt_proves(demo_repo, 4)


def test_version_5_gives_evidence_that_adds_to_the_rule(demo_repo: MemoryRepo) -> None:
    r = issued(demo_repo, TASK)
    _as_v4, v4 = _derived(demo_repo, r, 4)
    _as_v5, v5 = _derived(demo_repo, r, 5)
    assert [x.id for x in v4.rules] == [x.id for x in v5.rules]
    for old, new in zip(v4.rules, v5.rules, strict=True):
        # the same episode named; the new text is the old one's sentences the rule does not say
        assert [q.episode_id for q in old.quotes] == [q.episode_id for q in new.quotes]
        for q in new.quotes:
            assert all(sentence in old.quotes[0].text for sentence in q.text.split("  ") if sentence)


def test_a_version_5_receipt_forged_to_drop_evidence_is_refused(demo_repo: MemoryRepo) -> None:
    r = issued(demo_repo, TASK)
    rel = stage(demo_repo, 1, forged(r, evidence={}))
    report = check_staged(demo_repo)
    assert not report.ok and set(codes(report)) == {"receipt-mismatch"}, codes(report)
    git(demo_repo.root, "rm", "-q", "--cached", rel)
