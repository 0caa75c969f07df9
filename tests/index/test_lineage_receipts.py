"""Lineage uses receipts (issue 20): where a rule's applications carry recall receipts,
its figures count only the verified ones, and say so; the gate's re-derived recall
counts alike (the struggling-rule condition reads the same figures)."""

from __future__ import annotations

from typing import Any

from conftest import Cli, git
from helpers import commit_no_verify, write_episode, write_playbook

from scarwarden.config import RecallSettings
from scarwarden.files.receipt import Receipt
from scarwarden.index import open_index
from scarwarden.index.lineage import lineage_counts
from scarwarden.recall.engine import recall
from scarwarden.repo import MemoryRepo

TASK = "approve a refund above fifty euros for the manager"
SETTINGS = {"act_threshold": 0.1825, "floor": 0.13, "act_tag_hits": 2, "limit": 5}


def _receipt(task: str, rules: list[str]) -> dict[str, Any]:
    return Receipt.make(
        task=task,
        playbook="0" * 40,
        algorithm=2,
        settings=SETTINGS,
        verdict="ACT",
        rules=rules,
        ledger="1" * 40,
    ).to_json()


def _ledger(repo: MemoryRepo) -> None:
    write_playbook(
        repo,
        [
            ("PB-01", "Refund approvals", "Refunds above fifty euros need a manager approval.", ["refund"]),
            ("PB-02", "Refund speed", "Refund within five days.", ["refund"]),
        ],
        commit=True,
    )
    # PB-01: three corrected applications verified by receipts, two that are not.
    for i in range(3):
        task = f"refund case {i}"
        write_episode(
            repo,
            f"ep-verif{i:05d}",
            at=f"2099-01-0{i + 1}T10:00:00Z",
            task=task,
            rules_applied=["PB-01"],
            correction="wrong: ask finance",
            recalled=_receipt(task, ["PB-01"]),
        )
    write_episode(
        repo,
        "ep-reasn00001",
        at="2099-01-05T10:00:00Z",
        task="refund case r",
        rules_applied=["PB-01"],
        rules_applied_reason="the manager asked for it",
        recalled=_receipt("refund case r", ["PB-02"]),
    )
    write_episode(repo, "ep-claim00001", at="2099-01-06T10:00:00Z", rules_applied=["PB-01", "PB-02"])
    commit_no_verify(repo.root, "applications")


def test_only_verified_applications_count_where_receipts_exist(memory_repo: MemoryRepo) -> None:
    _ledger(memory_repo)
    with open_index(memory_repo) as index:
        counts = lineage_counts(index, ["PB-01", "PB-02"])
    one, two = counts["PB-01"], counts["PB-02"]
    assert (one.applied, one.corrected, one.not_counted, one.basis) == (3, 3, 2, "verified")
    assert "(applications verified by recall receipts; 2 not verified, not counted)" in one.sentence()
    assert one.struggling  # three verified corrections: struggling on verified figures alone
    # PB-02's only application carries no receipt: counted on the episode's word, said so.
    assert (two.applied, two.basis, two.not_counted) == (1, "claimed", 0)
    assert "(as the episodes claim: none carries a recall receipt)" in two.sentence()
    out = Cli(memory_repo.root)("rule", "show", "PB-01")
    assert out.exit_code == 0 and "verified by recall receipts" in out.output


def test_the_gate_counts_alike(memory_repo: MemoryRepo) -> None:
    """The struggling check, fed verified figures, agrees between the engine and the gate."""
    from scarwarden.gate.proofs_ledger import LedgerProofs
    from scarwarden.recall.pure import postings

    _ledger(memory_repo)
    with open_index(memory_repo) as index:
        ours = recall(index, TASK, settings=RecallSettings())
    assert ours.verdict == "ACT_AND_FLAG" and ours.receipt is not None
    blob = ours.receipt.playbook
    proofs = LedgerProofs(memory_repo.root, memory_repo.playbook_rel, memory_repo.episodes_rel, revs=["HEAD"])
    from scarwarden.files import playbook as pb

    book = postings(pb.parse(git(memory_repo.root, "cat-file", "blob", blob).stdout))
    pure = proofs.recall(book, ours.receipt, RecallSettings())
    assert not isinstance(pure, str) and pure.verdict == ours.verdict
    assert [r.id for r in pure.rules] == [r.id for r in ours.rules]


def test_the_index_sums_what_count_gives(memory_repo: MemoryRepo) -> None:
    """lineage_counts sums each rule's rows in SQL (issue 30: no object per application);
    every figure equals files.lineage_counts.count over the same applications, with the
    rule changed between two of them, receipts verified, unverifiable and absent, and an
    episode naming a rule twice."""
    from scarwarden.files.lineage_counts import count
    from scarwarden.files.rule_dates import last_changes
    from scarwarden.index.lineage import applications

    _ledger(memory_repo)
    unverifiable = Receipt.make(
        task="refund case u",
        playbook="0" * 40,
        algorithm=2,
        settings=SETTINGS,
        verdict="ACT",
        rules=["PB-01"],
        ledger="1" * 40 + "+uncommitted",
    ).to_json()
    write_episode(
        memory_repo,
        "ep-unver00001",
        at="2099-01-07T10:00:00Z",
        task="refund case u",
        rules_applied=["PB-01"],
        correction="no",
        recalled=unverifiable,
    )
    write_episode(memory_repo, "ep-twice00001", at="2000-01-01T10:00:00Z", rules_applied=["PB-02", "PB-02"])
    write_episode(
        memory_repo, "ep-fixed00001", at="2000-01-02T10:00:00Z", rules_applied=["PB-02"], correction="x"
    )
    commit_no_verify(memory_repo.root, "more")
    with open_index(memory_repo) as index:
        ours = lineage_counts(index, ["PB-01", "PB-02", "PB-99"])
        apps = applications(index, ["PB-01", "PB-02", "PB-99"])
        changes = last_changes(memory_repo)
        assert changes["PB-02"] is not None  # committed: PB-02's old applications are not recent
        for rule_id, counted in ours.items():
            assert counted == count(rule_id, changes.get(rule_id), apps.get(rule_id, []))
    assert ours["PB-01"].unverifiable == 1 and ours["PB-01"].basis == "verified"
    assert (ours["PB-02"].applied_total, ours["PB-02"].applied, ours["PB-02"].corrected_total) == (4, 1, 1)
    assert ours["PB-99"].applied_total == 0
