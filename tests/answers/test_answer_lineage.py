"""Lineage: `answer --record` and `feedback` keep an append-only trail from rule to outcome."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import git
from fakellm import FakeLLM

from scarwarden.answers.citations import format_citation
from scarwarden.files.playbook_edit import load_playbook
from scarwarden.repo import MemoryRepo

LINKEDIN = "Draft a LinkedIn post announcing our beta"


def test_record_then_feedback(cli: Any, demo_repo: MemoryRepo, fake_llm: FakeLLM) -> None:
    pb01 = load_playbook(demo_repo).get("PB-01")
    assert pb01 is not None
    text = f"Tired of manual reports? Our beta ends that. {format_citation(pb01.id, pb01.episode_ids)}"
    fake_llm.script(text)
    result = cli("answer", LINKEDIN, "--record", "--agent", "writer", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    ep_id = data["recorded_episode"]
    assert ep_id and ep_id.startswith("ep-")
    first = json.loads(cli("episode", "show", ep_id, "--json").stdout)
    assert first["task"] == LINKEDIN
    assert first["action"] == text
    assert first["agent"] == "writer"
    assert first["rules_applied"] == ["PB-01"]
    assert first["x-playbook-commit"] == data["playbook_commit"]
    # What the model was given, provably (issue 20): recall's receipt, and PB-01 is in it.
    assert first["recalled"]["task"] == LINKEDIN and "PB-01" in first["recalled"]["rules"]
    assert first["recalled"]["verdict"] == data["verdict"]
    assert data["playbook_commit"]  # the demo playbook is committed
    assert first["x-memory"] == "on" and first["x-verdict"] == data["verdict"]
    assert "source" not in first
    assert "linkedin" in first["tags"]
    log = git(demo_repo.root, "log", "-1", "--format=%s%n%(trailers:key=Scarwarden-Episode)").stdout
    assert log.startswith(f"answer: {LINKEDIN}") and f"Scarwarden-Episode: {ep_id}" in log
    first_path = demo_repo.root / first["path"] if "path" in first else None
    before = first_path.read_bytes() if first_path else None

    fb = cli(
        "feedback",
        ep_id,
        "--outcome",
        "Engagement doubled",
        "--correction",
        "Shorter hook next time",
        "--corrected-by",
        "editor",
        "--json",
    )
    assert fb.exit_code == 0, fb.output
    second = json.loads(fb.stdout)
    assert second["id"] != ep_id
    assert second["refs"] == [ep_id]
    assert second["task"] == LINKEDIN
    assert second["outcome"] == "Engagement doubled"
    assert second["correction"] == "Shorter hook next time"
    assert second["corrected_by"] == "editor"
    assert second["source"] == "correction"
    assert second["rules_applied"] == ["PB-01"]
    # Append-only: the first episode is unchanged and the commit added exactly one file.
    if first_path is not None:
        assert first_path.read_bytes() == before
    changed = git(demo_repo.root, "show", "--name-status", "--format=", "HEAD").stdout.split()
    assert changed == ["A", f"memory/episodes/{second['at'][:4]}/{second['at'][5:7]}/{second['id']}.yaml"]
    assert git(demo_repo.root, "log", "-1", "--format=%s").stdout.startswith("feedback: ")

    # Plain output prints the new ID.
    outcome_only = cli("feedback", ep_id, "--outcome", "Two sign-ups")
    assert outcome_only.exit_code == 0
    new_id = outcome_only.stdout.strip()
    assert json.loads(cli("episode", "show", new_id, "--json").stdout)["source"] == "outcome"


def test_record_prints_the_id(cli: Any, fake_llm: FakeLLM) -> None:
    fake_llm.script("A post with no citations at all.")
    result = cli("answer", LINKEDIN, "--record")
    assert result.exit_code == 0
    ep_id = result.stdout.split("Recorded as episode ")[1].split()[0]
    stored = json.loads(cli("episode", "show", ep_id, "--json").stdout)
    assert "rules_applied" not in stored  # nothing was cited, so nothing is claimed


def test_record_keeps_invented_citations_out_of_rules_applied(cli: Any, fake_llm: FakeLLM) -> None:
    fake_llm.script("Do it [PB-06, learnt in ep-661e47fs7p].")
    result = cli("answer", LINKEDIN, "--record", "--json")
    data = json.loads(result.stdout)
    stored = json.loads(cli("episode", "show", data["recorded_episode"], "--json").stdout)
    assert "rules_applied" not in stored
    assert stored["x-invented-citations"] == ["PB-06"]


def test_feedback_errors(cli: Any, demo_repo: MemoryRepo) -> None:
    head = git(demo_repo.root, "rev-parse", "HEAD").stdout
    unknown = cli("feedback", "ep-doesnotexist", "--outcome", "x")
    assert unknown.exit_code == 2
    assert "no episode ep-doesnotexist" in unknown.stderr
    empty = cli("feedback", "ep-hkgnqdz88f")
    assert empty.exit_code == 2
    assert "--outcome or --correction" in empty.stderr
    assert git(demo_repo.root, "rev-parse", "HEAD").stdout == head  # nothing committed


def test_record_without_model_records_nothing(cli: Any, demo_repo: MemoryRepo) -> None:
    head = git(demo_repo.root, "rev-parse", "HEAD").stdout
    result = cli("answer", LINKEDIN, "--record")
    assert result.exit_code == 4
    assert "no model answer to record" in result.stderr
    assert git(demo_repo.root, "rev-parse", "HEAD").stdout == head


def test_record_no_memory_run(cli: Any, fake_llm: FakeLLM) -> None:
    fake_llm.script("A generic post.")
    result = cli("answer", LINKEDIN, "--no-memory", "--record", "--json")
    assert result.exit_code == 0, result.output
    stored = json.loads(
        cli("episode", "show", json.loads(result.stdout)["recorded_episode"], "--json").stdout
    )
    assert stored["x-memory"] == "off" and stored["action"] == "A generic post."
    assert "rules_applied" not in stored and "x-playbook-commit" not in stored
    assert "recalled" not in stored  # an answer without memory was given nothing
    assert "linkedin" in stored["tags"]  # from the task's words


def test_record_a_huge_answer_stays_under_the_episode_cap(
    cli: Any, demo_repo: MemoryRepo, fake_llm: FakeLLM
) -> None:
    fake_llm.script("word " * 20000)  # 100 KB
    result = cli("answer", LINKEDIN, "--record", "--json")
    assert result.exit_code == 0, result.output
    ep_id = json.loads(result.stdout)["recorded_episode"]
    stored = json.loads(cli("episode", "show", ep_id, "--json").stdout)
    assert stored["action"].endswith("[truncated by scarwarden: the answer had 100,000 characters]")
    path = demo_repo.root / stored["path"]
    assert path.stat().st_size < 64 * 1024


@pytest.mark.parametrize(
    "reply, problem",
    [
        ("Lead with the pain\x00 [PB-01]", "holds a NUL character (U+0000) at character 19"),
        ("Lead with the pain\x1b[2J [PB-01]", "holds an escape character (U+001B) at character 19"),
        ("   ", "is empty"),
    ],
)
def test_record_of_an_answer_that_cannot_be_stored_is_a_model_error(
    cli: Any, demo_repo: MemoryRepo, fake_llm: FakeLLM, reply: str, problem: str
) -> None:
    """The model's text, not the user's: it was exit 1 "answer: invalid episode input"
    with the hint "remove it" (or "leave the key out instead" for a blank answer)."""
    before = git(demo_repo.root, "rev-parse", "HEAD").stdout
    fake_llm.script(reply)
    result = cli("answer", LINKEDIN, "--record")
    assert result.exit_code == 5, result.output
    assert f"error: the model's answer {problem}" in result.stderr
    assert "nothing was recorded" in result.stderr and "remove it" not in result.stderr
    assert git(demo_repo.root, "rev-parse", "HEAD").stdout == before
    assert git(demo_repo.root, "status", "--porcelain", "--untracked-files=all").stdout == ""
