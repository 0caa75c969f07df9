"""Version-2 recall receipts (they name the ledger tree) through the gate: the receipts
recall prints today prove from git alone; forged ones are refused (issue 20)."""

from __future__ import annotations

import subprocess
from typing import Any

from conftest import git
from helpers import commit_no_verify, write_episode

from scarwarden.files.receipt import UNCOMMITTED, Receipt
from scarwarden.gate.check import check_staged
from scarwarden.gate.verify import verify
from scarwarden.recall.engine import recall_task
from scarwarden.repo import MemoryRepo

TASK = "Post our discount code on Twitter"


def issued(repo: MemoryRepo, task: str = TASK) -> dict[str, Any]:
    """The receipt recall prints for ``task`` now."""
    result = recall_task(repo, task, log=False)
    assert result.receipt is not None
    return result.receipt.to_json()


def forged(original: dict[str, Any], **override: Any) -> dict[str, Any]:
    """``original`` with fields changed and the hash recomputed (anyone can)."""
    fields = {k: v for k, v in original.items() if k != "receipt"}
    fields.update(override)
    return Receipt.make(**fields).to_json()


def stage(repo: MemoryRepo, n: int, recalled: dict[str, Any], **extra: Any) -> str:
    task = extra.pop("task", recalled["task"])
    rel = write_episode(repo, f"ep-rcv2{n:06d}", task=task, recalled=recalled, **extra)
    git(repo.root, "add", rel)
    return rel


def codes(report: Any) -> list[str]:
    return [p.code for p in report.problems]


def test_todays_receipt_names_the_ledger_and_proves(demo_repo: MemoryRepo) -> None:
    r = issued(demo_repo)
    assert r["algorithm"] == 6  # recall version 6 (issue 26); test_receipts_v4/v5/v6.py prove the rest
    assert r["ledger"] == git(demo_repo.root, "rev-parse", f"HEAD:{demo_repo.episodes_rel}").stdout.strip()
    stage(demo_repo, 1, r, rules_applied=r["rules"][:1])
    report = check_staged(demo_repo)
    assert report.ok, [str(p) for p in report.problems]
    assert report.stats["receipts_checked"] == 1
    assert not report.warnings, [str(w) for w in report.warnings]  # proved, not unverifiable


def test_forged_rules_verdict_and_order_are_refused(demo_repo: MemoryRepo) -> None:
    r = issued(demo_repo, "Handle a ticket about a failed payment")
    assert r["verdict"] == "ACT" and len(r["rules"]) >= 2
    cases = [
        forged(r, rules=r["rules"] + ["PB-07"]),
        forged(r, verdict="ASK_HUMAN", rules=[]),
        forged(r, rules=list(reversed(r["rules"]))),
    ]
    for n, bad in enumerate(cases, 1):
        rel = stage(demo_repo, n, bad)
        report = check_staged(demo_repo)
        assert not report.ok and set(codes(report)) == {"receipt-mismatch"}, codes(report)
        git(demo_repo.root, "rm", "-q", "--cached", rel)


def test_a_ledger_tree_that_never_existed_is_refused(demo_repo: MemoryRepo) -> None:
    stage(demo_repo, 1, forged(issued(demo_repo), ledger="0123456789abcdef0123456789abcdef01234567"))
    report = check_staged(demo_repo)
    assert codes(report) == ["receipt-ledger-missing"]
    assert "ledger tree 0123456789ab does not exist" in report.problems[0].message


def test_a_tree_that_was_never_the_ledger_is_refused(demo_repo: MemoryRepo, tmp_path: Any) -> None:
    """A forger's ledger: the real episodes plus an invented one, written as a tree that
    no commit has. Trusting it would let invented episodes sway the ranking."""
    import os

    r = issued(demo_repo)
    invented = "id: ep-invent0001\nat: 2026-11-20T10:00:00Z\ntask: Post the code\naction: posted\n"
    blob = subprocess.run(
        ["git", "hash-object", "-w", "--stdin"],
        cwd=demo_repo.root,
        input=invented,
        capture_output=True,
        text=True,
    ).stdout.strip()
    env = {**os.environ, "GIT_INDEX_FILE": str(tmp_path / "forged-index")}
    git(demo_repo.root, "read-tree", f"HEAD:{demo_repo.episodes_rel}", env=env)
    git(
        demo_repo.root,
        "update-index",
        "--add",
        "--cacheinfo",
        f"100644,{blob},2026/11/ep-invent0001.yaml",
        env=env,
    )
    fake = git(demo_repo.root, "write-tree", env=env).stdout.strip()
    stage(demo_repo, 1, forged(r, ledger=fake))
    report = check_staged(demo_repo)
    assert codes(report) == ["receipt-ledger-unknown"]
    assert f"tree {fake[:12]} was never the episodes folder" in report.problems[0].message


def test_a_ledger_a_rebase_rewrote_is_unverifiable_not_refused(demo_repo: MemoryRepo) -> None:
    """Recall ran on a branch after it committed an episode; the branch was then rebased
    onto a main that moved on: the receipt's tree holds only real episodes, but no
    commit has it any more. Not provable, not a forgery: a warning."""
    root = demo_repo.root
    git(root, "checkout", "-q", "-b", "agent")
    write_episode(demo_repo, "ep-branch0001", task="Draft the launch tweet")
    commit_no_verify(root, "on the branch")
    r = issued(demo_repo)
    git(root, "checkout", "-q", "main")
    write_episode(demo_repo, "ep-mainline01", task="Reply to the billing ticket")
    commit_no_verify(root, "on main")
    git(root, "checkout", "-q", "agent")
    git(root, "rebase", "-q", "main")
    stage(demo_repo, 1, r)
    report = check_staged(demo_repo)
    assert report.ok, [str(p) for p in report.problems]
    [warning] = report.warnings
    assert warning.code == "receipt-unverifiable" and "a rebase rewrote" in warning.message


def test_unverifiable_receipts_say_why(demo_repo: MemoryRepo) -> None:
    r = issued(demo_repo)
    whys = {
        "names no ledger": forged(r, ledger=None),
        "uncommitted": forged(r, ledger=r["ledger"] + UNCOMMITTED),
        "version 7": forged(r, algorithm=7),  # a version this gate does not re-run (6 is today's)
    }
    for n, (why, bad) in enumerate(whys.items(), 1):
        if bad.get("ledger") is None:
            bad.pop("ledger", None)
        rel = stage(demo_repo, n, bad)
        report = check_staged(demo_repo)
        assert report.ok, [str(p) for p in report.problems]
        [warning] = report.warnings
        assert warning.code == "receipt-unverifiable" and why in warning.message
        assert "unverified (not a pass;" in warning.message
        git(demo_repo.root, "rm", "-q", "--cached", rel)


def test_recall_over_uncommitted_episodes_says_so(demo_repo: MemoryRepo) -> None:
    issued(demo_repo)  # the index is built while the ledger is clean
    write_episode(demo_repo, "ep-loose00001", task="Tweet the spring discount code")
    r = issued(demo_repo)
    assert r["ledger"].endswith(UNCOMMITTED)
    commit_no_verify(demo_repo.root, "the loose episode")
    assert not issued(demo_repo)["ledger"].endswith(UNCOMMITTED)


def test_an_index_rebuilt_over_uncommitted_episodes_says_so(demo_repo: MemoryRepo) -> None:
    """A rebuild (a new schema, ``index --rebuild``) indexes the episode files on disk,
    committed or not: one that HEAD lacks still makes receipts say ``+uncommitted``,
    and an edit of it in place is seen by the next refresh."""
    from scarwarden.index import open_index

    rel = write_episode(demo_repo, "ep-loose00002", task="Tweet the spring discount code")
    open_index(demo_repo, rebuild_now=True).close()
    assert issued(demo_repo)["ledger"].endswith(UNCOMMITTED)
    path = demo_repo.root / rel
    path.write_text(path.read_text().replace("spring discount", "summer discount"))
    with open_index(demo_repo) as index:
        assert index.conn.execute("SELECT task FROM episodes WHERE id = 'ep-loose00002'").fetchone() == (
            "Tweet the summer discount code",
        )
    git(demo_repo.root, "add", rel)  # staged, not committed: still not HEAD's ledger
    open_index(demo_repo, rebuild_now=True).close()
    assert issued(demo_repo)["ledger"].endswith(UNCOMMITTED)
    commit_no_verify(demo_repo.root, "the loose episode")
    open_index(demo_repo, rebuild_now=True).close()
    assert not issued(demo_repo)["ledger"].endswith(UNCOMMITTED)


def test_an_old_receipt_proves_across_a_playbook_change_and_later_episodes(demo_repo: MemoryRepo) -> None:
    old = issued(demo_repo)
    # Later: more episodes (the ledger moves on) and a playbook change.
    for i in range(3):
        write_episode(demo_repo, f"ep-later{i:05d}", task=f"Post the discount code on Twitter, take {i}")
    playbook = demo_repo.playbook_path.read_text()
    demo_repo.playbook_path.write_text(
        playbook.replace("Never share discount codes", "Never post discount codes")
    )
    commit_no_verify(demo_repo.root, "later")
    assert issued(demo_repo)["ledger"] != old["ledger"]
    stage(demo_repo, 1, old, rules_applied=old["rules"][:1])
    report = check_staged(demo_repo)
    assert report.ok and not report.warnings, [str(p) for p in report.problems + report.warnings]
    # ...and in history, where verify proves it again.
    commit_no_verify(demo_repo.root, "the episode with the old receipt")
    result = verify(demo_repo)
    assert result.ok and result.receipts >= 1, result


def test_the_ledger_cache_is_keyed_and_checked(demo_repo: MemoryRepo) -> None:
    """A second run reads the cache; a damaged entry is derived again, never trusted."""
    from scarwarden.gate.ledger import LedgerReader, cache_dir

    tree = issued(demo_repo)["ledger"]
    where = cache_dir(demo_repo.root)
    assert where is not None
    first = LedgerReader(demo_repo.root, demo_repo.episodes_rel, cache_dir=where)
    stats = first.stats(tree)
    assert first.read_files > 30 and (where / f"{tree}.json").exists()
    again = LedgerReader(demo_repo.root, demo_repo.episodes_rel, cache_dir=where)
    assert again.stats(tree) == stats and again.read_files == 0
    entry = where / f"{tree}.json"
    entry.write_text(entry.read_text().replace('"task_count":', '"task_count":1'))
    damaged = LedgerReader(demo_repo.root, demo_repo.episodes_rel, cache_dir=where)
    assert damaged.stats(tree) == stats and damaged.read_files > 30
    # A later tree is derived from the cached one, reading only what differs.
    write_episode(demo_repo, "ep-later00001", task="One more")
    commit_no_verify(demo_repo.root, "one more")
    later = git(demo_repo.root, "rev-parse", f"HEAD:{demo_repo.episodes_rel}").stdout.strip()
    step = LedgerReader(demo_repo.root, demo_repo.episodes_rel, cache_dir=where)
    assert step.stats(later).task_count == stats.task_count + 1 and step.read_files == 1
    fresh = LedgerReader(demo_repo.root, demo_repo.episodes_rel, cache_dir=None)
    assert fresh.stats(later) == step.stats(later)
    # The episodes a playbook cites are kept by blob ID: the next run reads none again.
    cited = sorted(stats.months)[:5]
    assert sorted(step.episodes(later, cited)) == cited
    before = step.read_files
    again = LedgerReader(demo_repo.root, demo_repo.episodes_rel, cache_dir=where)

    def words(eps: dict[str, Any]) -> list[tuple[str, str, str | None]]:
        return [(i, e.task, e.get("correction")) for i, e in sorted(eps.items())]

    assert words(again.episodes(later, cited)) == words(fresh.episodes(later, cited))
    assert again.read_files == 0 and step.read_files == before


def test_check_all_proves_every_receipt_in_the_tree(demo_repo: MemoryRepo) -> None:
    from scarwarden.gate.check_tree import check_all

    honest = issued(demo_repo)
    stage(demo_repo, 1, honest, rules_applied=honest["rules"][:1])
    commit_no_verify(demo_repo.root, "an honest receipt")
    report = check_all(demo_repo)
    assert report.ok and report.stats["receipts_checked"] == 1 and not report.warnings
    # A forged one that got in with --no-verify: check --all names it.
    later = issued(demo_repo)
    stage(demo_repo, 2, forged(later, rules=later["rules"] + ["PB-07"]))
    commit_no_verify(demo_repo.root, "a forged receipt")
    report = check_all(demo_repo)
    assert report.stats["receipts_checked"] == 2
    assert codes(report) == ["receipt-mismatch"] and "ep-rcv2000002" in report.problems[0].message


def test_the_hash_covers_the_ledger(demo_repo: MemoryRepo) -> None:
    r = issued(demo_repo)
    r["ledger"] = "0123456789abcdef0123456789abcdef01234567"  # edited, hash left as it was
    stage(demo_repo, 1, r)
    report = check_staged(demo_repo)
    assert not report.ok and any("does not match its contents" in str(p) for p in report.problems)
    r.pop("ledger")  # a version-1 receipt's hash is what it was: the field is optional
    assert Receipt.make(**{k: v for k, v in r.items() if k != "receipt"}).id != r["receipt"]


def test_a_version_2_receipt_still_proves_after_recall_moved_to_3(memory_repo: MemoryRepo) -> None:
    """Recall version 3 ranks with pairs of adjacent words; a receipt made by version 2
    before the upgrade is still re-derived as version 2 (and proved), and a version-2
    receipt carrying version 3's ranking is refused."""
    from helpers import write_playbook

    from scarwarden.config import RecallSettings
    from scarwarden.files import playbook as pb
    from scarwarden.gate.proofs_ledger import LedgerProofs
    from scarwarden.index import open_index
    from scarwarden.recall.engine import recall
    from scarwarden.recall.pure import postings

    write_playbook(
        memory_repo,
        [
            (
                "PB-01",
                "Card and credit fees",
                "A fee on each card; credit limits, card fees and credit fees differ.",
                [],
            ),
            ("PB-02", "Waive the credit card fee", "The yearly credit card fee is waived for students.", []),
            ("PB-03", "Tweet the launch", "Post the launch on Twitter with a picture.", []),
            ("PB-04", "Name the flags", "Feature flags get plain names.", []),
        ],
        commit=True,
    )
    task, settings = "credit card fee", RecallSettings(floor=0.0, act_threshold=0.0)
    # Issue 27: a receipt's settings must be ones the committed configuration gave.
    (memory_repo.root / "scarwarden.yaml").write_text("recall:\n  floor: 0.0\n  act_threshold: 0.0\n")
    git(memory_repo.root, "add", "scarwarden.yaml")
    git(memory_repo.root, "commit", "-q", "-m", "recall settings for the test", "--", "scarwarden.yaml")
    with open_index(memory_repo) as index:
        v3 = recall(index, task, settings=settings)
    assert v3.receipt is not None and v3.receipt.algorithm == 6
    assert [r.id for r in v3.rules][:2] == ["PB-02", "PB-01"]  # the pair "credit card" lifts PB-02
    blob = git(memory_repo.root, "rev-parse", f"HEAD:{memory_repo.playbook_rel}").stdout.strip()
    proofs = LedgerProofs(memory_repo.root, memory_repo.playbook_rel, memory_repo.episodes_rel, revs=["HEAD"])
    as_v2 = forged(v3.receipt.to_json(), algorithm=2, verdict="ACT", rules=[])
    book = postings(pb.parse(git(memory_repo.root, "cat-file", "blob", blob).stdout))
    derived = proofs.recall(book, Receipt.from_valid(as_v2), settings)
    assert not isinstance(derived, str)
    v2_rules = [r.id for r in derived.rules]
    assert v2_rules[:2] == ["PB-01", "PB-02"]  # words alone: PB-01 says them more often
    cases = {
        "v3 as recall printed it": (v3.receipt.to_json(), []),
        "v2 as version 2 gave it": (forged(as_v2, verdict=derived.verdict, rules=v2_rules), []),
        "v2 claiming v3's ranking": (
            forged(as_v2, verdict=v3.verdict, rules=[r.id for r in v3.rules]),
            ["receipt-mismatch"],
        ),
    }
    for n, (name, (receipt, expected)) in enumerate(cases.items(), 1):
        rel = stage(memory_repo, n, receipt)
        report = check_staged(memory_repo)
        assert codes(report) == expected, (name, codes(report))
        assert not report.warnings, (name, [str(w) for w in report.warnings])
        git(memory_repo.root, "rm", "-q", "--cached", rel)
