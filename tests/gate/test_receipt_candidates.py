"""The receipt covers the candidates ASK_HUMAN showed (issue 26): a receipt names them
(``candidates``, ``candidate_evidence``), the gate re-derives them from git (the nearest
rules, or the nearest failed episodes when no rule is near) and refuses a receipt forged
to add, drop, reorder or change one, through ``check_staged``, ``scarwarden check`` and
the pre-commit hook. Receipts that name no candidates (older ones) prove as before."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest
from conftest import git
from helpers import write_episode
from test_receipts_v2 import codes, forged, issued, stage

from scarwarden.errors import ValidationError
from scarwarden.files import playbook as pb
from scarwarden.files import receipt as receipt_format
from scarwarden.files.episodes import Episode
from scarwarden.files.redact import redact
from scarwarden.gate.check import check_staged
from scarwarden.gate.proofs import Prover
from scarwarden.recall import given, nearest
from scarwarden.recall.engine import recall_task
from scarwarden.repo import MemoryRepo

#: A demo task no rule answers, whose nearest rules are PB-01 and PB-04.
TASK = "Rename the production Kafka topic"


def _ok(report: Any) -> None:
    assert report.ok and not report.warnings, [str(p) for p in report.problems + report.warnings]


def _refused(repo: MemoryRepo, n: int, bad: dict[str, Any]) -> list[str]:
    """Stage ``bad``, check, unstage: the messages of the gate's problems."""
    rel = stage(repo, n, bad)
    report = check_staged(repo)
    git(repo.root, "rm", "-q", "--cached", rel)
    assert not report.ok and set(codes(report)) == {"receipt-mismatch"}, codes(report)
    return [p.message for p in report.problems]


def test_an_ask_human_receipt_names_its_candidates_and_proves(demo_repo: MemoryRepo) -> None:
    result = recall_task(demo_repo, TASK, log=False)
    r = issued(demo_repo, TASK)
    assert r["verdict"] == "ASK_HUMAN" and r["rules"] == []
    assert r["candidates"] == [c.id for c in result.candidates] == ["PB-01", "PB-04"]
    assert r["candidate_evidence"] == {c.id: c.quotes[0].episode_id for c in result.candidates}
    stage(demo_repo, 1, r)
    report = check_staged(demo_repo)
    _ok(report)
    assert report.stats["receipts_checked"] == 1


def test_an_act_receipt_names_no_candidates(demo_repo: MemoryRepo) -> None:
    r = issued(demo_repo, "Post our discount code on Twitter")
    assert r["verdict"] == "ACT" and "candidates" not in r and "candidate_evidence" not in r


def test_a_receipt_forged_to_add_drop_reorder_or_change_a_candidate_is_refused(
    demo_repo: MemoryRepo,
) -> None:
    r = issued(demo_repo, TASK)
    evidence = r["candidate_evidence"]
    other = next(ep for ep in ("ep-hkgnqdz88f", "ep-56m702j8dv", "ep-wmjgdnc59j") if ep != evidence["PB-01"])
    cases = {
        "names the candidate PB-07, which recall did not show": forged(
            r, candidates=["PB-01", "PB-04", "PB-07"]
        ),
        "leaves out the candidate PB-04, which recall showed": forged(
            r, candidates=["PB-01"], candidate_evidence={"PB-01": evidence["PB-01"]}
        ),
        "orders the candidates PB-04, PB-01; recall shows them as PB-01, PB-04": forged(
            r, candidates=["PB-04", "PB-01"]
        ),
        f"shows the candidate PB-01 with the evidence of {other}": forged(
            r, candidate_evidence={**evidence, "PB-01": other}
        ),
        "shows the candidate PB-04 with the evidence of no episode": forged(
            r, candidate_evidence={"PB-01": evidence["PB-01"]}
        ),
    }
    for n, (says, bad) in enumerate(cases.items(), 1):
        messages = _refused(demo_repo, n, bad)
        assert any(says in m for m in messages), messages


def test_a_receipt_without_candidates_still_proves_and_covers_none(demo_repo: MemoryRepo) -> None:
    """An older receipt (no ``candidates``) is valid for what it covers: the gate does
    not derive the candidates for it, so it proves as before."""
    r = issued(demo_repo, TASK)
    old = {k: v for k, v in r.items() if k not in ("candidates", "candidate_evidence")}
    old = forged(old)
    assert "candidates" not in old and old["receipt"] != r["receipt"]
    stage(demo_repo, 1, old)
    _ok(check_staged(demo_repo))


def test_a_version_4_receipt_with_candidates_proves_by_version_4s_arithmetic(demo_repo: MemoryRepo) -> None:
    r = issued(demo_repo, TASK)
    as_v4 = forged(r, algorithm=4)
    stage(demo_repo, 1, as_v4)
    _ok(check_staged(demo_repo))


@pytest.mark.parametrize("algorithm", [1, 2, 3])
def test_older_versions_prove_as_today(demo_repo: MemoryRepo, algorithm: int) -> None:
    """An ASK_HUMAN receipt of versions 1 to 3 (no candidates then) still proves."""
    r = issued(demo_repo, TASK)
    fields = {k: v for k, v in r.items() if k not in ("evidence", "candidates", "candidate_evidence")}
    if algorithm == 1:
        fields.pop("ledger")
    old = forged(fields, algorithm=algorithm)
    stage(demo_repo, 1, old)
    report = check_staged(demo_repo)
    _ok(report)
    assert report.stats["receipts_checked"] == 1


@pytest.mark.parametrize(
    ("override", "says"),
    [
        ({"candidate_evidence": None}, "candidates and candidate_evidence go together"),
        ({"algorithm": 3, "evidence": None}, "candidates are given from recall version 4 on"),
        ({"candidates": ["PB-01", "ep-hkgnqdz88f"]}, "a list of rule IDs (PB-03) or of episode IDs"),
        ({"candidates": ["PB-01", "PB-01"], "candidate_evidence": {}}, "candidates lists one twice"),
        ({"candidate_evidence": {"PB-09": "ep-hkgnqdz88f"}}, "candidate_evidence must map candidate rule"),
    ],
)
def test_a_malformed_candidates_field_is_an_invalid_receipt(
    demo_repo: MemoryRepo, override: dict[str, Any], says: str
) -> None:
    r = issued(demo_repo, TASK)
    fields = {k: v for k, v in r.items() if k != "receipt"}
    fields.update(override)
    fields = {k: v for k, v in fields.items() if v is not None}
    fields["receipt"] = "0" * 16
    with pytest.raises(ValidationError) as caught:
        receipt_format.parse(fields)
    assert any(says in p.message for p in caught.value.problems), [p.message for p in caught.value.problems]


def test_candidates_on_another_verdict_are_an_invalid_receipt(demo_repo: MemoryRepo) -> None:
    r = issued(demo_repo, "Post our discount code on Twitter")
    bad = {**r, "candidates": ["PB-01"], "candidate_evidence": {}}
    with pytest.raises(ValidationError) as caught:
        receipt_format.parse(bad)
    assert any("candidates are given only on ASK_HUMAN" in p.message for p in caught.value.problems)


# -- no rule near: the nearest failed episodes -------------------------------------


def _no_rule_near(repo: MemoryRepo) -> None:
    """Episodes about kafka that no rule cites, and one rule about something else."""
    write_episode(
        repo, "ep-kafka00001", task="Rotate the kafka credentials", correction="Ask security first."
    )
    write_episode(repo, "ep-kafka00002", task="Rotate the kafka topics", outcome="fine")  # no correction
    write_episode(repo, "ep-kafka00003", task="Resize the kafka cluster", correction="Wait for the weekend.")
    write_episode(repo, "ep-kafka00004", task="Kafka rotate secrets", correction="Use the vault, never chat.")
    write_episode(repo, "ep-canary0001", task="Deploy the canary", correction="Canary first.")
    rule = pb.make_rule("PB-01", "Canary", "Deploy to a canary first.", ["canary"], ["ep-canary0001"])
    repo.playbook_path.write_text(pb.render(pb.Playbook(rules=(rule,))))
    git(repo.root, "add", "-A")
    git(repo.root, "commit", "-q", "--no-verify", "-m", "memory")


def test_with_no_rule_near_the_failed_episodes_shown_are_proved(memory_repo: MemoryRepo) -> None:
    _no_rule_near(memory_repo)
    r = issued(memory_repo, "Rotate kafka secrets")
    assert r["verdict"] == "ASK_HUMAN"
    assert r["candidates"] == ["ep-kafka00004", "ep-kafka00001", "ep-kafka00003"]
    assert r["candidate_evidence"] == {}
    stage(memory_repo, 1, r)
    _ok(check_staged(memory_repo))
    cases = {
        "leaves out the candidate ep-kafka00004": forged(r, candidates=["ep-kafka00001", "ep-kafka00003"]),
        "names the candidate ep-kafka00002, which recall did not show": forged(
            r, candidates=["ep-kafka00004", "ep-kafka00001", "ep-kafka00002"]
        ),
        "orders the candidates": forged(r, candidates=["ep-kafka00001", "ep-kafka00004", "ep-kafka00003"]),
    }
    for n, (says, bad) in enumerate(cases.items(), 2):
        messages = _refused(memory_repo, n, bad)
        assert any(says in m for m in messages), messages


def test_a_redacted_episode_is_never_a_candidate_and_the_gate_agrees(memory_repo: MemoryRepo) -> None:
    _no_rule_near(memory_repo)
    redact(memory_repo, "ep-kafka00004", reason="held a secret")
    r = issued(memory_repo, "Rotate kafka secrets")
    assert r["candidates"] == ["ep-kafka00001", "ep-kafka00003"]
    stage(memory_repo, 1, r)
    _ok(check_staged(memory_repo))
    messages = _refused(memory_repo, 2, forged(r, candidates=["ep-kafka00004", *r["candidates"]]))
    assert any("names the candidate ep-kafka00004" in m for m in messages), messages


def test_no_candidate_at_all_is_an_empty_list_the_gate_proves(memory_repo: MemoryRepo) -> None:
    _no_rule_near(memory_repo)
    r = issued(memory_repo, "Xylophone zebra quux")
    assert r["verdict"] == "ASK_HUMAN" and r["candidates"] == [] and r["candidate_evidence"] == {}
    stage(memory_repo, 1, r)
    _ok(check_staged(memory_repo))
    messages = _refused(memory_repo, 2, forged(r, candidates=["ep-kafka00001"]))
    assert any("names the candidate ep-kafka00001" in m for m in messages), messages


def _prove(repo: MemoryRepo, r: dict[str, Any]) -> tuple[Prover, str]:
    from scarwarden.gate.ledger_files import cache_dir

    prover = Prover(
        repo.root,
        repo.playbook_rel,
        episodes_rel=repo.episodes_rel,
        ledger_cache=cache_dir(repo.root) is not None,
    )
    ep = Episode({"id": "ep-rcv2000001", "at": "2026-11-20T10:00:00Z", "task": r["task"], "recalled": r})
    (proof,) = prover.prove_all([("x.yaml", ep)])
    return prover, proof.status


def test_proving_rule_candidates_reads_no_episode_of_the_ledger(demo_repo: MemoryRepo) -> None:
    r = issued(demo_repo, TASK)
    assert r["candidates"] == ["PB-01", "PB-04"]
    prover, status = _prove(demo_repo, r)
    assert status == "proved" and prover.episodes.read_files == 0


def test_episode_candidates_read_the_ledger_once_and_only_when_a_past_task_shares_a_word(
    memory_repo: MemoryRepo,
) -> None:
    _no_rule_near(memory_repo)
    prover, status = _prove(memory_repo, issued(memory_repo, "Rotate kafka secrets"))
    assert status == "proved" and prover.episodes.read_files == 5
    prover, status = _prove(memory_repo, issued(memory_repo, "Xylophone zebra quux"))
    assert status == "proved" and prover.episodes.read_files == 0  # no past task says a word of it


def test_each_months_words_are_kept_by_month_tree(memory_repo: MemoryRepo, monkeypatch: Any) -> None:
    """A second proof parses no episode; a commit adding one episode and a new month
    folder parses those two files only; a damaged month entry is derived again (from the
    previous entry of that month: one file); SCARWARDEN_LEDGER_CACHE=off parses every
    episode, each time; every one proves the same."""
    from scarwarden.gate.ledger_files import cache_dir

    _no_rule_near(memory_repo)
    where = cache_dir(memory_repo.root)
    assert where is not None
    where.mkdir(parents=True, exist_ok=True)
    (where / "tasks.json").write_text("{}")  # the per-blob file of earlier versions: removed
    r = issued(memory_repo, "Rotate kafka secrets")
    assert _prove(memory_repo, r)[0].episodes.read_files == 5
    assert not (where / "tasks.json").exists()
    prover, status = _prove(memory_repo, r)
    assert status == "proved" and prover.episodes.read_files == 0 and prover.episodes.months_read == 1
    write_episode(memory_repo, "ep-kafka00009", task="Rotate kafka secrets now", correction="Page security.")
    moved = memory_repo.root / memory_repo.episodes_rel / "2026" / "10" / "ep-kafka00001.yaml"
    moved.parent.mkdir(parents=True)
    moved.write_bytes(next(memory_repo.root.rglob("2026/11/ep-kafka00001.yaml")).read_bytes())
    git(memory_repo.root, "add", "-A")
    git(memory_repo.root, "commit", "-q", "--no-verify", "-m", "one more, one misplaced")
    r = issued(memory_repo, "Rotate kafka secrets")
    assert r["candidates"] == ["ep-kafka00004", "ep-kafka00009", "ep-kafka00001"]
    prover, status = _prove(memory_repo, r)
    assert status == "proved" and prover.episodes.read_files == 2
    month = git(memory_repo.root, "rev-parse", f"HEAD:{memory_repo.episodes_rel}/2026/11").stdout.strip()
    (entry,) = (where / "words").glob(f"*-{month}")
    entry.write_bytes(entry.read_bytes().replace(b"ep-kafka00004", b"ep-kafka00005"))  # damaged
    prover, status = _prove(memory_repo, r)
    assert status == "proved" and prover.episodes.read_files == 1  # the diff from the previous entry
    monkeypatch.setenv("SCARWARDEN_LEDGER_CACHE", "off")
    prover, status = _prove(memory_repo, r)
    assert status == "proved" and prover.episodes.read_files == 7
    assert _prove(memory_repo, r)[0].episodes.read_files == 7


# -- the doors: scarwarden check and the pre-commit hook ----------------------------


def test_scarwarden_check_and_the_hook_refuse_a_forged_candidate(cli, demo_repo: MemoryRepo) -> None:  # type: ignore[no-untyped-def]
    assert cli("hooks", "install").exit_code == 0
    r = issued(demo_repo, TASK)
    stage(demo_repo, 1, forged(r, candidates=["PB-04", "PB-01"]))
    run = subprocess.run(
        ["scarwarden", "check", "--json"], cwd=demo_repo.root, capture_output=True, text=True, check=False
    )
    assert run.returncode == 1, run.stderr
    data = json.loads(run.stdout)
    assert [p["code"] for p in data["problems"]] == ["receipt-mismatch"]
    assert "orders the candidates PB-04, PB-01" in data["problems"][0]["message"]
    commit = git(demo_repo.root, "commit", "-q", "-m", "forged", check=False)
    assert commit.returncode != 0 and "orders the candidates PB-04, PB-01" in commit.stdout + commit.stderr
    assert git(demo_repo.root, "log", "-1", "--format=%s").stdout.strip() != "forged"
    git(demo_repo.root, "reset", "-q")
    stage(demo_repo, 2, r)
    commit = git(demo_repo.root, "commit", "-q", "-m", "honest", check=False)
    assert commit.returncode == 0, commit.stdout + commit.stderr


def test_review_shows_the_candidates_each_new_episode_was_shown(demo_repo: MemoryRepo) -> None:
    from scarwarden.audit.review.build import build_review
    from scarwarden.audit.review.markdown import render_markdown

    base = git(demo_repo.root, "rev-parse", "HEAD").stdout.strip()
    r = issued(demo_repo, TASK)
    stage(demo_repo, 1, r)
    stage(demo_repo, 2, forged({k: v for k, v in r.items() if not k.startswith("candidate")}))
    git(demo_repo.root, "commit", "-q", "--no-verify", "-m", "two answers")
    review = build_review(demo_repo, base, "HEAD", run_gate=False)
    rows = {g.episode: g for g in review.given}
    assert rows["ep-rcv2000001"].candidates == ["PB-01", "PB-04"] and rows["ep-rcv2000001"].status == "proved"
    assert rows["ep-rcv2000002"].candidates is None and rows["ep-rcv2000002"].status == "proved"
    text = render_markdown(review)
    assert (
        "| `ep-rcv2000001` | ASK_HUMAN (no rules); candidates shown: PB-01, PB-04 | (none) | ✅ proved"
        in text
    )
    assert "| `ep-rcv2000002` | ASK_HUMAN (no rules); candidates not covered by this receipt |" in text
    assert review.to_json()["given"][0]["candidates"] == ["PB-01", "PB-04"]


def test_the_two_candidate_limits_are_one(demo_repo: MemoryRepo) -> None:
    assert nearest.MAX_CANDIDATES == given.MAX_CANDIDATES


def test_episode_add_with_a_forged_candidate_writes_nothing(cli, demo_repo: MemoryRepo) -> None:  # type: ignore[no-untyped-def]
    """The write door runs the same proof before it commits, hooks installed or not."""
    from scarwarden.errors import ExitCode

    r = issued(demo_repo, TASK)
    head = git(demo_repo.root, "rev-parse", "HEAD").stdout
    bad = forged(r, candidates=["PB-01", "PB-04", "PB-07"])
    out = cli("episode", "add", "--task", TASK, "--action", "Asked", "--receipt", json.dumps(bad))
    assert out.exit_code == ExitCode.CHECK_FAILED, out.output
    assert (
        "names the candidate PB-07, which recall did not show" in out.output and "Traceback" not in out.output
    )
    assert git(demo_repo.root, "rev-parse", "HEAD").stdout == head
    assert git(demo_repo.root, "status", "--porcelain").stdout == ""
    good = cli("episode", "add", "--task", TASK, "--action", "Asked", "--receipt", json.dumps(r))
    assert good.exit_code == 0, good.output
