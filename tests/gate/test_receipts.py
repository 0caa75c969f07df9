"""Recall receipts through the gate: honest ones prove, forged ones are refused (issue 20)."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest
from conftest import git
from helpers import add_rule, commit_no_verify

from scarwarden.config import RecallSettings
from scarwarden.files import playbook as pb
from scarwarden.files.episodes import expected_relpath, render_episode
from scarwarden.files.receipt import Receipt
from scarwarden.gate.check import check_staged
from scarwarden.gate.verify import verify
from scarwarden.recall.pure import IMPLEMENTS, recall_playbook
from scarwarden.repo import MemoryRepo

TASK = "Post our discount code on Twitter"


def playbook_blob(repo: MemoryRepo, rev: str = "HEAD") -> str:
    return git(repo.root, "rev-parse", f"{rev}:{repo.playbook_rel}").stdout.strip()


def receipt(
    repo: MemoryRepo, task: str = TASK, *, blob: str | None = None, **override: Any
) -> dict[str, Any]:
    """The receipt recall (the version the gate reproduces) gives at ``blob``, with any
    field overridden and the hash recomputed (a forger can always recompute it)."""
    blob = blob or playbook_blob(repo)
    book = pb.parse(git(repo.root, "cat-file", "blob", blob).stdout)
    fields: dict[str, Any] = {
        "task": task,
        "playbook": blob,
        "algorithm": IMPLEMENTS,
        "settings": {"act_threshold": 0.175, "floor": 0.0925, "act_tag_hits": 2, "limit": 5},
    }
    fields.update(override)
    result = recall_playbook(book, task, settings=RecallSettings(**fields["settings"]))
    fields.setdefault("verdict", result.verdict)
    fields.setdefault("rules", [r.id for r in result.rules])
    return Receipt.make(**fields).to_json()


def stage(repo: MemoryRepo, n: int, recalled: dict[str, Any] | None, **extra: Any) -> str:
    data: dict[str, Any] = {
        "id": f"ep-rcpt{n:06d}",
        "at": "2026-11-20T10:00:00Z",
        "task": extra.pop("task", TASK),
        "action": "Kept the code out of the post",
        **extra,
    }
    if recalled is not None:
        data["recalled"] = recalled
    rel = expected_relpath(data["id"], data["at"], repo.episodes_rel)
    path = repo.root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_episode(data))
    git(repo.root, "add", rel)
    return rel


def codes(report: Any) -> list[str]:
    return [p.code for p in report.problems]


def test_an_honest_receipt_proves(demo_repo: MemoryRepo) -> None:
    r = receipt(demo_repo)
    assert r["verdict"] == "ACT" and r["rules"][0] == "PB-02"
    stage(demo_repo, 1, r, rules_applied=["PB-02"])
    report = check_staged(demo_repo)
    assert report.ok, [str(p) for p in report.problems]
    assert report.stats["receipts_checked"] == 1 and not report.warnings
    assert "1 receipt re-derived" in report.summary()


def test_an_edited_rule_list_is_refused_naming_the_rule(demo_repo: MemoryRepo) -> None:
    blob = playbook_blob(demo_repo)
    stage(demo_repo, 1, receipt(demo_repo, rules=["PB-02", "PB-07"]))
    report = check_staged(demo_repo)
    assert codes(report) == ["receipt-mismatch", "receipt-mismatch"]
    message = report.problems[0].message
    assert message.startswith("ep-rcpt000001's receipt ")
    assert f"lists PB-07, which recall did not return for this task at playbook {blob[:12]}" in message
    assert "leaves out PB-01" in report.problems[1].message
    assert "ACT PB-02, PB-01" in (report.problems[0].hint or "")


@pytest.mark.parametrize(
    ("override", "says"),
    [
        ({"verdict": "ASK_HUMAN", "rules": []}, "says ASK_HUMAN, but recall gives ACT"),
        ({"rules": ["PB-01", "PB-02"]}, "ranks the rules PB-01, PB-02; recall ranks them PB-02, PB-01"),
        (
            {"settings": {"act_threshold": 0.175, "floor": 0.0925, "act_tag_hits": 2, "limit": 1}},
            "lists PB-01",
        ),
    ],
)
def test_other_forgeries_are_refused(demo_repo: MemoryRepo, override: dict[str, Any], says: str) -> None:
    # The last case: honest rules, but a limit of 1 would have returned PB-02 only.
    forged = receipt(demo_repo, **override)
    if "settings" in override:
        forged = receipt(demo_repo, rules=["PB-02", "PB-01"], **override)
    stage(demo_repo, 1, forged)
    report = check_staged(demo_repo)
    assert not report.ok and set(codes(report)) == {"receipt-mismatch"}
    assert any(says in p.message for p in report.problems), [p.message for p in report.problems]


def test_a_wrong_hash_is_an_invalid_episode(cli, demo_repo: MemoryRepo) -> None:
    r = receipt(demo_repo)
    r["rules"] = ["PB-02"]  # edited by hand, hash left as it was
    stage(demo_repo, 1, r)
    report = check_staged(demo_repo)
    assert codes(report) == ["episode-invalid"] or "does not match its contents" in report.problems[0].message
    assert any("does not match its contents" in str(p) for p in report.problems)
    # Through the door: nothing is written, nothing committed.
    before = git(demo_repo.root, "rev-parse", "HEAD").stdout
    result = cli("episode", "add", "--task", TASK, "--action", "x", "--receipt", json.dumps(r))
    assert result.exit_code == 1 and "does not match its contents" in result.output
    assert git(demo_repo.root, "rev-parse", "HEAD").stdout == before


def test_a_playbook_blob_that_never_existed_is_refused(demo_repo: MemoryRepo) -> None:
    r = receipt(demo_repo)
    forged = receipt(demo_repo, playbook="0123456789abcdef0123456789abcdef01234567", rules=r["rules"])
    stage(demo_repo, 1, forged)
    report = check_staged(demo_repo)
    assert codes(report) == ["receipt-playbook-missing"]
    assert "blob 0123456789ab does not exist" in report.problems[0].message


def test_a_blob_that_was_never_the_playbook_is_refused(demo_repo: MemoryRepo) -> None:
    # A forged playbook that holds the claimed rule, written as a blob (not committed).
    book = pb.parse((demo_repo.root / demo_repo.playbook_rel).read_text())
    fake = pb.render(book).replace("Never share discount codes", "Always share discount codes")
    blob = subprocess.run(
        ["git", "hash-object", "-w", "--stdin"],
        cwd=demo_repo.root,
        input=fake,
        capture_output=True,
        text=True,
    ).stdout.strip()
    stage(demo_repo, 1, receipt(demo_repo, blob=blob))
    report = check_staged(demo_repo)
    assert codes(report) == ["receipt-playbook-unknown"]
    assert f"blob {blob[:12]} was never a version of memory/playbook.md" in report.problems[0].message


def test_another_algorithm_version_is_unverifiable_never_a_pass(demo_repo: MemoryRepo) -> None:
    stage(demo_repo, 1, receipt(demo_repo, algorithm=IMPLEMENTS + 7, rules=["PB-07"]))
    report = check_staged(demo_repo)
    assert report.ok  # not refused: it cannot be judged here...
    [warning] = report.warnings  # ...and it is said so
    assert warning.code == "receipt-unverifiable"
    assert f"version {IMPLEMENTS + 7}" in warning.message and "unverified (not a pass;" in warning.message
    # What can be checked still is: the playbook version, and that the rules exist there.
    rel = f"memory/episodes/2026/11/ep-rcpt{1:06d}.yaml"
    git(demo_repo.root, "rm", "-q", "--cached", rel)
    stage(demo_repo, 2, receipt(demo_repo, algorithm=IMPLEMENTS + 1, rules=["PB-02", "PB-99"]))
    report = check_staged(demo_repo)
    assert codes(report) == ["receipt-rule-absent"] and report.problems[0].rule == "PB-99"
    assert "PB-99, which is not an active rule of playbook" in report.problems[0].message
    git(demo_repo.root, "rm", "-q", "--cached", f"memory/episodes/2026/11/ep-rcpt{2:06d}.yaml")
    missing = "0123456789abcdef0123456789abcdef01234567"
    stage(demo_repo, 3, receipt(demo_repo, algorithm=IMPLEMENTS + 1, playbook=missing, rules=["PB-02"]))
    assert codes(check_staged(demo_repo)) == ["receipt-playbook-missing"]


def test_a_receipt_for_another_task_is_refused(demo_repo: MemoryRepo) -> None:
    stage(demo_repo, 1, receipt(demo_repo), task="Write the release notes for version 2.3")
    report = check_staged(demo_repo)
    assert codes(report) == ["receipt-other-task"]
    assert "is for another task ('Post our discount code on Twitter'" in report.problems[0].message


def test_rules_applied_beyond_the_receipt_need_a_reason(demo_repo: MemoryRepo) -> None:
    rel = stage(demo_repo, 1, receipt(demo_repo), rules_applied=["PB-02", "PB-11"])
    report = check_staged(demo_repo)
    assert codes(report) == ["rules-applied-not-recalled"]
    p = report.problems[0]
    assert p.rule == "PB-11" and p.field == "rules_applied"
    assert "ep-rcpt000001 says it applied PB-11, which its receipt" in p.message
    git(demo_repo.root, "rm", "-q", "--cached", rel)
    stage(
        demo_repo,
        2,
        receipt(demo_repo),
        rules_applied=["PB-02", "PB-11"],
        rules_applied_reason="The editor asked for release-notes style too",
    )
    assert check_staged(demo_repo).ok


def test_an_old_playbook_version_still_proves_after_the_playbook_changed(demo_repo: MemoryRepo) -> None:
    old_blob = playbook_blob(demo_repo)
    old = receipt(demo_repo)
    # The playbook changes: a new rule about discount codes outranks nothing old, but the
    # old receipt must still prove at the old blob.
    first = sorted(demo_repo.episodes_dir.glob("*/*/*.yaml"))[0].stem
    add_rule(demo_repo, [first], title="Discount codes on Twitter need the marketing lead")
    git(demo_repo.root, "add", demo_repo.playbook_rel)
    git(demo_repo.root, "commit", "-q", "-m", "new rule")
    assert playbook_blob(demo_repo) != old_blob
    stage(demo_repo, 1, old)
    report = check_staged(demo_repo)
    assert report.ok, [str(p) for p in report.problems]


def test_verify_refuses_a_forged_receipt_in_history(demo_repo: MemoryRepo) -> None:
    stage(demo_repo, 1, receipt(demo_repo), rules_applied=["PB-02"])
    git(demo_repo.root, "commit", "-q", "-m", "honest")
    stage(demo_repo, 2, receipt(demo_repo, rules=["PB-02", "PB-07"]))
    forged = commit_no_verify(demo_repo.root, "forged")
    result = verify(demo_repo)
    assert result.receipts == 2
    assert [p.code for p in result.problems] == ["receipt-mismatch", "receipt-mismatch"]
    assert all(p.commit == forged for p in result.problems)
    assert "2 recall receipts re-derived" in result.summary()


def test_receipts_survive_a_rebase(demo_repo: MemoryRepo) -> None:
    root = demo_repo.root
    git(root, "checkout", "-q", "-b", "agent")
    stage(demo_repo, 1, receipt(demo_repo), rules_applied=["PB-02"])
    git(root, "commit", "-q", "-m", "episode with receipt")
    git(root, "checkout", "-q", "main")
    (root / "NOTES.md").write_text("unrelated\n")
    git(root, "add", "NOTES.md")
    git(root, "commit", "-q", "-m", "unrelated")
    git(root, "checkout", "-q", "agent")
    git(root, "rebase", "-q", "main")
    result = verify(demo_repo)
    assert result.ok and result.receipts == 1, [str(p) for p in result.problems]


def test_many_receipts_in_one_commit(demo_repo: MemoryRepo) -> None:
    tasks = ["Post our discount code on Twitter", "Draft a LinkedIn post announcing our beta", "refund"]
    honest = {t: receipt(demo_repo, t) for t in tasks}
    for n in range(300):
        task = tasks[n % 3]
        stage(demo_repo, n, honest[task], task=task)
    report = check_staged(demo_repo)
    assert report.ok and report.stats["receipts_checked"] == 300
    stage(demo_repo, 999, receipt(demo_repo, rules=["PB-05"]))
    report = check_staged(demo_repo)
    assert [p.episode for p in report.problems] == ["ep-rcpt000999"] * 3


def test_review_shows_what_each_new_episode_was_given_and_applied(demo_repo: MemoryRepo) -> None:
    from scarwarden.audit.review.build import build_review
    from scarwarden.audit.review.markdown import render_markdown

    base = git(demo_repo.root, "rev-parse", "HEAD").stdout.strip()
    stage(demo_repo, 1, receipt(demo_repo), rules_applied=["PB-02"])
    stage(
        demo_repo,
        2,
        receipt(demo_repo),
        rules_applied=["PB-02", "PB-11"],
        rules_applied_reason="Editor | asked",
    )
    stage(demo_repo, 3, None, rules_applied=["PB-05"])
    commit_no_verify(demo_repo.root, "three episodes")
    review = build_review(demo_repo, base, "HEAD", run_gate=False)
    rows = {g.episode: g for g in review.given}
    assert rows["ep-rcpt000001"].status == "proved", (rows["ep-rcpt000001"], rows["ep-rcpt000001"].problems)
    assert rows["ep-rcpt000001"].given == ["PB-02", "PB-01"]
    assert rows["ep-rcpt000002"].beyond == ["PB-11"] and rows["ep-rcpt000002"].status == "proved"
    assert rows["ep-rcpt000003"].verdict is None and rows["ep-rcpt000003"].applied == ["PB-05"]
    text = render_markdown(review)
    assert "### What each new episode was given, and what it applied" in text
    assert "| `ep-rcpt000001` | ACT PB-02, PB-01 | PB-02 | ✅ proved `" in text
    assert "PB-02, **PB-11** (not given); reason: Editor \\| asked" in text
    assert "| `ep-rcpt000003` | — | PB-05 | no receipt |" in text
    assert review.to_json()["given"][1]["beyond_receipt"] == ["PB-11"]


def test_applied_rules_says_which_applications_are_verified() -> None:
    from scarwarden.files.receipt import applied_rules

    # A receipt the gate re-derives (version 1 names no ledger); issue 27: of another
    # version, it proves nothing (unverifiable, not counted).
    recalled = {"rules": ["PB-02", "PB-01"], "algorithm": 1}
    assert applied_rules({"rules_applied": ["PB-02", "PB-11"], "recalled": recalled}) == {"PB-02": "verified"}
    other = {**recalled, "algorithm": 99}
    assert applied_rules({"rules_applied": ["PB-02"], "recalled": other}) == {"PB-02": "unverifiable"}
    assert applied_rules(
        {"rules_applied": ["PB-02", "PB-11"], "recalled": recalled, "rules_applied_reason": "asked"}
    ) == {"PB-02": "verified", "PB-11": "reason"}
    assert applied_rules({"rules_applied": ["PB-05"]}) == {"PB-05": "claimed"}


def test_every_door_stores_the_receipt_recall_gave(cli, demo_repo: MemoryRepo) -> None:
    from scarwarden.agents.mcp.tools import MemoryTools
    from scarwarden.errors import ValidationError

    tools = MemoryTools(demo_repo)
    given = tools.recall(TASK)["receipt"]
    assert given["rules"][0] == "PB-02" and given["playbook"] == playbook_blob(demo_repo)
    reply = tools.record_episode(
        {"task": TASK, "action": "Kept it out", "rules_applied": ["PB-02"], "receipt": given}
    )
    assert reply["episode"]["recalled"] == given
    forged = dict(given, rules=["PB-07"])
    with pytest.raises(ValidationError, match="does not match its contents"):
        tools.record_episode({"task": TASK, "action": "x", "receipt": forged})
    # The CLI takes the receipt's ID from this clone's recall log, and says so when unknown.
    printed = json.loads(cli("recall", "--json", TASK).stdout)["receipt"]
    out = cli("episode", "add", "--task", TASK, "--action", "y", "--receipt", printed["receipt"], "--json")
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["recalled"] == printed
    unknown = cli("episode", "add", "--task", TASK, "--action", "y", "--receipt", "0123456789abcdef")
    assert unknown.exit_code == 2 and "no recall with receipt 0123456789abcdef" in unknown.output
    both = cli("episode", "add", "--file", "-", "--receipt", printed["receipt"], input="task: x\naction: y\n")
    assert both.exit_code == 2 and "--receipt goes with the episode flags" in both.output
    # The recorded episode moved the ledger on: the next recall is another recall
    # (its receipt names the new ledger tree), and the text output prints its receipt.
    again = json.loads(cli("recall", "--json", TASK).stdout)["receipt"]
    assert again["ledger"] != printed["ledger"] and again["rules"] == printed["rules"]
    assert "receipt: " + again["receipt"] in cli("recall", TASK).stdout


def _edit_rule_text(repo: MemoryRepo, rule_id: str, text: str) -> None:
    from dataclasses import replace

    from scarwarden.files.playbook_edit import load_playbook, save_playbook

    book = load_playbook(repo)
    rules = tuple(replace(r, text=text) if r.id == rule_id else r for r in book.rules)
    save_playbook(repo, pb.Playbook(rules, book.retired, book.preamble))
    git(repo.root, "add", repo.playbook_rel)


def test_a_merge_brings_receipts_made_on_the_other_branchs_playbook(demo_repo: MemoryRepo) -> None:
    root = demo_repo.root
    git(root, "checkout", "-q", "-b", "agent")
    _edit_rule_text(demo_repo, "PB-01", "Open every LinkedIn post with the reader's pain, then the product.")
    git(root, "commit", "-q", "-m", "agent: reword PB-01")
    agent_blob = playbook_blob(demo_repo)
    stage(demo_repo, 1, receipt(demo_repo), rules_applied=["PB-02"])
    git(root, "commit", "-q", "-m", "episode with a receipt at the agent's playbook")
    git(root, "checkout", "-q", "main")
    _edit_rule_text(demo_repo, "PB-14", "Promotional messages need the marketing lead's approval first.")
    git(root, "commit", "-q", "-m", "main: reword PB-14")
    git(root, "merge", "-q", "--no-commit", "--no-ff", "agent")
    report = check_staged(demo_repo)
    assert report.stats.get("receipts_checked") == 1
    assert report.ok, [str(p) for p in report.problems]
    assert agent_blob not in git(root, "log", "--raw", "--no-abbrev", "--format=", "HEAD").stdout
