"""Issue 26 through the command-line doors: ``recall`` (text, ``--json``) and ``ask``
(text, ``--answer``, ``--json``). What they show on ASK_HUMAN (the candidates, with
their evidence) is what the receipt names, and an answer ``ask`` records carries that
receipt through the gate at the door and in ``verify``. Bad input (a stopword task, a
20,000-character task, a longer one) gives a clear result or error, nothing written."""

from __future__ import annotations

import json

from conftest import git

from scarwarden.recall.engine import MAX_TASK_CHARS
from scarwarden.repo import MemoryRepo

KAFKA = "Rename the production Kafka topic"
DISCOUNT = "Post our discount code on Twitter"


def test_recall_text_shows_the_candidates_with_their_evidence_apart_from_rules(cli) -> None:  # type: ignore[no-untyped-def]
    data = json.loads(cli("recall", "--json", "--no-log", KAFKA).stdout)
    out = cli("recall", "--no-log", KAFKA).output
    assert "No rule in memory matches this task." in out
    section = out.split("nearest, unconfirmed: ask before using")[1]
    assert section.index(" - PB-01: ") < section.index(" - PB-04: ")
    for c in data["candidates"]:
        q = c["evidence"][0]
        assert f"evidence ({q['episode_id']}): {q['text'][:40]}" in section
        assert f"scarwarden ask --confirm {c['id']} '{KAFKA}'" in section
    assert data["receipt"]["candidates"] == [c["id"] for c in data["candidates"]] == ["PB-01", "PB-04"]


def test_ask_on_act_shows_the_evidence(cli) -> None:  # type: ignore[no-untyped-def]
    out = cli("ask", DISCOUNT)
    assert out.exit_code == 0, out.output
    assert "evidence (ep-wmjgdnc59j): Discount codes go only to the private email list" in out.stdout


def test_ask_answer_on_ask_human_records_the_receipt_with_its_candidates(cli, demo_repo: MemoryRepo) -> None:  # type: ignore[no-untyped-def]
    before = git(demo_repo.root, "rev-parse", "HEAD").stdout
    out = cli("ask", KAFKA, "--answer", "Announce it in #data a week ahead", "--json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["verdict"] == "ASK_HUMAN" and [c["id"] for c in data["candidates"]] == ["PB-01", "PB-04"]
    recalled = data["episode"]["recalled"]
    assert recalled == data["receipt"] and recalled["candidates"] == ["PB-01", "PB-04"]
    assert git(demo_repo.root, "rev-parse", "HEAD").stdout != before  # the door's gate proved it
    checked = cli("check", "--all", "--json")
    assert checked.exit_code == 0, checked.output
    assert json.loads(checked.stdout)["stats"]["receipts_checked"] >= 1
    verified = cli("verify")
    assert verified.exit_code == 0, verified.output


def test_a_stopword_task_asks_with_no_candidate_and_says_so(cli) -> None:  # type: ignore[no-untyped-def]
    data = json.loads(cli("recall", "--json", "--no-log", "the and of to").stdout)
    assert data["verdict"] == "ASK_HUMAN" and data["rules"] == [] and data["candidates"] == []
    assert data["receipt"]["candidates"] == [] and data["receipt"]["candidate_evidence"] == {}
    out = cli("recall", "--no-log", "the and of to").output
    assert "(none: no rule and no failed episode shares a word with this task)" in out


def test_a_20000_character_task_recalls_and_a_longer_one_is_refused(cli, demo_repo: MemoryRepo) -> None:  # type: ignore[no-untyped-def]
    long_task = ((DISCOUNT + " ") * (MAX_TASK_CHARS // len(DISCOUNT)))[:MAX_TASK_CHARS].strip()
    data = json.loads(cli("recall", "--json", "--no-log", long_task).stdout)
    assert data["receipt"]["task"] == long_task
    for rule in data["rules"]:
        assert all(len(q["text"]) <= 240 for q in rule["evidence"])
    status = git(demo_repo.root, "status", "--porcelain").stdout
    refused = cli("ask", long_task + " more words", "--answer", "x")
    assert refused.exit_code == 2 and "the limit is 20,000" in refused.output
    assert "Traceback" not in refused.output
    assert git(demo_repo.root, "status", "--porcelain").stdout == status


def test_a_confirmed_candidate_is_returned_after_the_next_distill(cli, demo_repo: MemoryRepo) -> None:  # type: ignore[no-untyped-def]
    """``ask --confirm``'s episode reaches the rule: the next distill cites it, and the
    task's words then find the rule (ASK_HUMAN with PB-06 a candidate, then PB-06)."""
    dinner = "Book a table for the team dinner"
    before = json.loads(cli("recall", "--json", "--no-log", dinner).stdout)
    assert before["verdict"] == "ASK_HUMAN" and before["candidates"][0]["id"] == "PB-06"
    made = json.loads(cli("ask", dinner, "--confirm", "pb-6", "--json").stdout)
    distilled = cli("distill", "--offline")
    assert distilled.exit_code == 0, distilled.output
    assert made["episode"]["id"] in demo_repo.playbook_path.read_text().split("## PB-06")[1].split("## ")[0]
    after = json.loads(cli("recall", "--json", "--no-log", dinner).stdout)
    assert [r["id"] for r in after["rules"]][:1] == ["PB-06"] and after["verdict"] != "ASK_HUMAN"
    assert after["rules"][0]["score"] > before["candidates"][0]["score"]
