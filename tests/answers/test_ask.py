"""The ask-human loop: `scarwarden ask` and record_human_answer."""

from __future__ import annotations

import json
import re
import sys

import pytest
from conftest import git, head
from terminal import run_on_terminal

from scarwarden.answers.asking import record_human_answer, task_tags
from scarwarden.errors import UsageError
from scarwarden.index import open_index
from scarwarden.repo import MemoryRepo

BERLIN = "Book travel for the Berlin conference"


def test_act_shows_rules_with_citations_and_records_nothing(cli, demo_repo: MemoryRepo) -> None:
    before = head(demo_repo)
    result = cli("ask", "Draft a LinkedIn post announcing our beta")
    assert result.exit_code == 0
    assert result.stdout.startswith("ACT  Strong match: follow the recalled rules")
    assert "1. PB-01: Lead LinkedIn posts with the reader's pain" in result.stdout
    assert "cite: [PB-01, learnt in ep-hkgnqdz88f, ep-vd4adns6h9, ep-72r3dswafq]" in result.stdout
    assert head(demo_repo) == before


def test_act_and_flag_shows_rules_and_the_meaning_and_records_nothing(cli, demo_repo: MemoryRepo) -> None:
    before = head(demo_repo)
    task = "Reply to a customer about a refund"  # a weak match on the demo memory
    result = cli("ask", task)
    assert result.exit_code == 0
    data = json.loads(cli("ask", "--json", task).stdout)
    assert data["verdict"] == "ACT_AND_FLAG" and data["episode"] is None
    assert data["rules"] and data["meaning"]
    assert result.stdout.startswith(f"ACT_AND_FLAG  {data['meaning'].split(':')[0]}")
    first = data["rules"][0]
    assert f"1. {first['id']}: {first['title']}" in result.stdout
    assert f"cite: [{first['id']}, learnt in {', '.join(first['episode_ids'])}]" in result.stdout
    assert head(demo_repo) == before


def test_ask_human_with_answer_records_and_commits_an_episode(cli, demo_repo: MemoryRepo) -> None:
    answer = "Use the travel portal; economy class; hotel under 150 EUR a night"
    result = cli("ask", BERLIN, "--answer", answer)
    assert result.exit_code == 0, result.output
    ep_id = result.stdout.strip()
    assert re.fullmatch(r"ep-[0-9a-z]{10}", ep_id)
    assert f"Recorded and committed the answer as {ep_id}" in result.stderr
    with open_index(demo_repo) as index:
        episode = index.get_episode(ep_id)
        path = index.episode_path(ep_id)
    assert episode is not None and path is not None
    assert episode.data["task"] == BERLIN
    assert episode.data["correction"] == answer
    assert episode.data["source"] == "human-answer"
    assert episode.data["tags"] == ["book", "travel", "berlin", "conference"]
    log = git(demo_repo.root, "log", "-1", "--format=%B", "--name-only").stdout
    assert f"Scarwarden-Episode: {ep_id}" in log and path in log
    assert git(demo_repo.root, "status", "--porcelain").stdout == ""


def test_ask_json(cli) -> None:
    data = json.loads(cli("ask", "--json", BERLIN, "--answer", "Use the portal").stdout)
    keys = [
        "task",
        "verdict",
        "playbook_commit",
        "rules",
        "candidates",
        "receipt",
        "meaning",
        "episode",
        "warnings",
    ]
    assert list(data) == keys
    assert data["episode"]["recalled"] == data["receipt"]  # the answer carries what recall gave
    assert data["verdict"] == "ASK_HUMAN" and data["rules"] == []
    assert data["episode"]["correction"] == "Use the portal"
    act = json.loads(cli("ask", "--json", "Post our discount code on Twitter").stdout)
    assert act["episode"] is None and act["rules"][0]["id"] == "PB-02"
    assert act["meaning"].startswith("Strong match")


@pytest.mark.parametrize("answer", ["", "   "])
def test_empty_answer_is_a_clear_error(cli, demo_repo: MemoryRepo, answer: str) -> None:
    before = head(demo_repo)
    result = cli("ask", BERLIN, "--answer", answer)
    assert result.exit_code == 2
    assert "--answer is empty: nothing to record" in result.stderr
    assert head(demo_repo) == before


def test_no_terminal_and_no_answer_exits_1_instead_of_hanging(cli, demo_repo: MemoryRepo) -> None:
    before = head(demo_repo)
    result = cli("ask", BERLIN, input="an answer on a pipe is not a terminal\n")
    assert result.exit_code == 1
    assert "no terminal to ask on" in result.stderr
    assert f'scarwarden ask "{BERLIN}" --answer "..."' in result.stderr
    assert head(demo_repo) == before


def test_answer_on_act_is_not_recorded(cli, demo_repo: MemoryRepo) -> None:
    before = head(demo_repo)
    result = cli("ask", "Post our discount code on Twitter", "--answer", "whatever")
    assert result.exit_code == 0
    assert "--answer was not recorded" in result.stderr
    assert head(demo_repo) == before


def test_answer_from_stdin(cli) -> None:
    result = cli("ask", BERLIN, "--answer", "-", input="Ask Maria in the office\n")
    assert result.exit_code == 0, result.output
    assert re.fullmatch(r"ep-[0-9a-z]{10}", result.stdout.strip())


def test_record_human_answer_api(demo_repo: MemoryRepo) -> None:
    ep = record_human_answer(demo_repo, "  Plan the Q3 team offsite in Lisbon ", "Budget 5k")
    assert ep.data["task"] == "Plan the Q3 team offsite in Lisbon"
    assert ep.data["tags"] == ["plan", "q3", "team", "offsite", "lisbon"]
    with pytest.raises(UsageError, match="answer is empty"):
        record_human_answer(demo_repo, "Plan it", " \n")
    with pytest.raises(UsageError, match="task is empty"):
        record_human_answer(demo_repo, "", "Budget 5k")


def test_task_tags_are_slugs() -> None:
    assert task_tags("Réserve le café for the team's 2 o'clock meeting 🎉") == [
        "reserve",
        "le",
        "cafe",
        "teams",
        "oclock",
        "meeting",
    ]
    assert task_tags("東京の会議の航空券を予約してください") == []
    assert len(task_tags(" ".join(f"word{i}" for i in range(30)))) == 8


def test_prompt_on_a_real_terminal(demo_repo: MemoryRepo) -> None:
    """A real pseudo-terminal: the prompt appears, the typed answer is recorded."""
    code, text, answered = run_on_terminal(
        [sys.executable, "-m", "scarwarden", "-C", str(demo_repo.root), "ask", BERLIN],
        b"What should the agent do?",
        b"Use the travel portal\n",
    )
    assert answered, text
    assert code == 0, text
    ep_id = re.search(r"(ep-[0-9a-z]{10})", text.split("What should the agent do?")[1])
    assert ep_id is not None, text
    with open_index(demo_repo) as index:
        episode = index.get_episode(ep_id.group(1))
    assert episode is not None and episode.data["correction"] == "Use the travel portal"


DINNER = "Book a table for the team dinner"


def test_ask_confirm_records_an_episode_that_reaches_the_rule(cli, demo_repo) -> None:  # type: ignore[no-untyped-def]
    before = git(demo_repo.root, "rev-parse", "HEAD").stdout
    first = json.loads(cli("recall", "--json", "--no-log", DINNER).stdout)
    assert first["verdict"] == "ASK_HUMAN" and "PB-06" in [c["id"] for c in first["candidates"]]
    out = cli("ask", DINNER, "--confirm", "pb-6", "--json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["confirmed"] == "PB-06" and data["episode"]["task"] == DINNER
    ep = data["episode"]
    assert ep["source"] == "human-answer" and "PB-06" in ep["action"]
    assert ep["correction"].startswith("Forward every GDPR deletion")  # the rule's own words
    assert git(demo_repo.root, "rev-parse", "HEAD").stdout != before  # committed


def test_ask_confirm_bad_ids_write_nothing(cli, demo_repo) -> None:  # type: ignore[no-untyped-def]
    from helpers import retire_rule

    retire_rule(demo_repo, "PB-04")
    head = git(demo_repo.root, "rev-parse", "HEAD").stdout
    status = git(demo_repo.root, "status", "--porcelain").stdout
    for bad, said in (
        ("PB-99", "no rule PB-99"),
        ("PB-zz", "is not a rule ID"),
        ("rule six", "is not a rule ID"),
        ("pb-04", "PB-04 is retired"),
    ):
        out = cli("ask", DINNER, "--confirm", bad)
        assert out.exit_code == 2 and said in out.output, (bad, out.output)
        assert "Traceback" not in out.output
    assert git(demo_repo.root, "rev-parse", "HEAD").stdout == head
    assert git(demo_repo.root, "status", "--porcelain").stdout == status
    both = cli("ask", DINNER, "--confirm", "PB-06", "--answer", "x")
    assert both.exit_code == 2 and "give one" in both.output


def test_ask_confirm_refuses_a_rule_recall_did_not_show(cli, demo_repo) -> None:  # type: ignore[no-untyped-def]
    """--confirm records that a rule recall showed applies; a rule it did not show (no
    candidate at all here) is refused, or the episode would tie the task to any rule."""
    before = git(demo_repo.root, "rev-parse", "HEAD").stdout
    shown = json.loads(cli("recall", "--json", "--no-log", "zzz unknown").stdout)
    assert shown["rules"] == [] and shown["candidates"] == []
    out = cli("ask", "zzz unknown", "--confirm", "PB-01")
    assert out.exit_code == 2 and "PB-01 is not among the rules recall shows" in out.stderr
    assert "it showed no rule" in out.stderr
    other = cli("ask", DINNER, "--confirm", "PB-01")  # candidates shown, PB-01 not one of them
    assert other.exit_code == 2 and "PB-06" in other.stderr
    assert git(demo_repo.root, "rev-parse", "HEAD").stdout == before
    assert git(demo_repo.root, "status", "--porcelain").stdout == ""
    from scarwarden import open_memory

    with pytest.raises(UsageError, match="not among the rules recall shows"):
        open_memory(demo_repo.root).confirm("zzz unknown", "PB-01")  # the Python API too


def test_a_long_word_in_the_task_is_no_tag_and_the_answer_is_recorded(demo_repo: MemoryRepo) -> None:
    # A tag is at most 64 characters (docs/formats.md): a 70-character word of the task
    # (an identifier, a hash) made a tag the ledger refuses, and the answer was lost.
    word = "k" * 70
    assert task_tags(f"Rotate the key {word} today") == ["rotate", "key", "today"]
    ep = record_human_answer(demo_repo, f"Rotate the key {word} today", "Use the vault")
    assert ep.tags == ["rotate", "key", "today"]
