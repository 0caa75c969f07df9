"""Version-4 recall receipts (issue 26) name the evidence given with each rule: the gate
re-derives it, refuses a receipt forged to add or change evidence, and still proves
receipts of the older versions."""

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


def test_todays_receipt_names_its_evidence_and_proves(demo_repo: MemoryRepo) -> None:
    r = issued(demo_repo, TASK)
    assert r["algorithm"] == 6 and r["evidence"] == {"PB-02": "ep-wmjgdnc59j"}
    stage(demo_repo, 1, r, rules_applied=r["rules"][:1])
    report = check_staged(demo_repo)
    assert report.ok and not report.warnings, [str(p) for p in report.problems + report.warnings]


def test_a_receipt_forged_to_add_or_change_evidence_is_refused(demo_repo: MemoryRepo) -> None:
    r = issued(demo_repo, TASK)
    cases = [
        forged(r, evidence={**r["evidence"], "PB-02": "ep-56m702j8dv"}),  # another cited episode
        forged(r, evidence={}),  # evidence left out
        forged(r, rules=["PB-02", "PB-01"], evidence={**r["evidence"], "PB-01": "ep-hkgnqdz88f"}),
    ]
    for n, bad in enumerate(cases, 1):
        rel = stage(demo_repo, n, bad)
        report = check_staged(demo_repo)
        assert not report.ok and set(codes(report)) == {"receipt-mismatch"}, codes(report)
        git(demo_repo.root, "rm", "-q", "--cached", rel)
    rel = stage(demo_repo, 9, forged(r, evidence={"PB-02": "ep-56m702j8dv"}))
    message = str(check_staged(demo_repo).problems[0])
    assert "gives PB-02 the evidence of ep-56m702j8dv, but recall gives ep-wmjgdnc59j" in message


def test_a_version_3_receipt_still_proves(demo_repo: MemoryRepo) -> None:
    r = issued(demo_repo, TASK)
    settings = RecallSettings()
    blob = r["playbook"]
    book = postings(pb.parse(git(demo_repo.root, "cat-file", "blob", blob).stdout))
    proofs = LedgerProofs(demo_repo.root, demo_repo.playbook_rel, demo_repo.episodes_rel, revs=["HEAD"])
    fields = {k: v for k, v in r.items() if k not in ("receipt", "evidence")}
    as_v3 = Receipt.make(**{**fields, "algorithm": 3}).to_json()
    derived = proofs.recall(book, Receipt.from_valid(as_v3), settings)
    assert not isinstance(derived, str)
    v3 = forged(as_v3, verdict=derived.verdict, rules=[x.id for x in derived.rules])
    assert "evidence" not in v3
    stage(demo_repo, 1, v3)
    report = check_staged(demo_repo)
    assert report.ok and not report.warnings, [str(p) for p in report.problems + report.warnings]
