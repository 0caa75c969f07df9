"""`scarwarden ask` over a playbook that does not parse: recall cannot run, and the
human's answer is recorded all the same (never thrown away); the prompt is not shown
for an answer that could not be used."""

from __future__ import annotations

import json
import sys

from conftest import git, head
from terminal import run_on_terminal

from scarwarden.index import open_index
from scarwarden.repo import MemoryRepo

BERLIN = "Book travel for the Berlin conference"
ANSWER = "Use the travel portal; economy class"


def _break_playbook(repo: MemoryRepo) -> bytes:
    path = repo.playbook_path
    text = path.read_text(encoding="utf-8").replace("## PB-01: Lead", "## PB01 Lead", 1)
    path.write_text(text, encoding="utf-8")
    return path.read_bytes()


def test_an_answer_is_recorded_when_the_playbook_does_not_parse(cli, demo_repo: MemoryRepo) -> None:
    """The recall failed before the answer was recorded ("cannot parse the playbook",
    exit 1, nothing written), although the help says the human's answer is never thrown
    away. The answer is now recorded, referring to no rule, and the command still exits 1
    saying why recall failed and how to fix the playbook."""
    broken = _break_playbook(demo_repo)
    before = head(demo_repo)
    result = cli("ask", BERLIN, "--answer", ANSWER)
    assert result.exit_code == 1, result.output
    ep_id = result.stdout.strip()
    assert git(demo_repo.root, "rev-list", "--count", f"{before}..HEAD").stdout.strip() == "1"
    assert f"Recorded and committed the answer as {ep_id}" in result.stderr
    assert "recall failed" in result.stderr and "cannot parse the playbook" in result.stderr
    assert "PB01 Lead" in result.stderr and "fix the playbook" in result.stderr
    assert "Traceback" not in result.output
    assert demo_repo.playbook_path.read_bytes() == broken  # the user's edit is left as it is
    assert git(demo_repo.root, "status", "--porcelain").stdout.split() == ["M", demo_repo.playbook_rel]
    with open_index(demo_repo) as index:
        episode = index.get_episode(ep_id)
    assert episode is not None
    assert episode.data["correction"] == ANSWER and episode.data["source"] == "human-answer"
    assert "refs" not in episode.data and "recalled" not in episode.data


def test_json_prints_the_recorded_answer_when_recall_fails(cli, demo_repo: MemoryRepo) -> None:
    _break_playbook(demo_repo)
    result = cli("ask", BERLIN, "--answer", ANSWER, "--json", "--no-commit")
    assert result.exit_code == 1, result.output
    data = json.loads(result.stdout)
    assert data["verdict"] is None and data["rules"] == []
    assert data["episode"]["correction"] == ANSWER
    assert "cannot parse the playbook" in result.stderr
    staged = git(demo_repo.root, "diff", "--cached", "--name-only").stdout.split()
    assert len(staged) == 1 and staged[0].endswith(".yaml")


def test_no_prompt_is_shown_when_recall_cannot_run(demo_repo: MemoryRepo) -> None:
    """On a terminal, the human is not asked for an answer that could not be used: the
    command stops before the prompt, saying what to fix, and writes nothing."""
    _break_playbook(demo_repo)
    before = head(demo_repo)
    code, text, answered = run_on_terminal(
        [sys.executable, "-m", "scarwarden", "-C", str(demo_repo.root), "ask", BERLIN],
        b"What should the agent do?",
        b"Use the portal\n",
        timeout=30,
    )
    assert not answered, text
    assert code == 1, text
    assert "cannot parse the playbook" in text and "fix the playbook" in text
    assert head(demo_repo) == before


def test_confirm_says_the_playbook_does_not_parse(cli, demo_repo: MemoryRepo) -> None:
    """--confirm over a playbook that does not parse said "no rule PB-02 in
    memory/playbook.md" (hint: confirm one of the candidates) for a rule the playbook
    holds, when the index had no rules of an earlier parse. It now says the playbook
    does not parse and how to fix it; nothing is written."""
    (demo_repo.root / ".scarwarden" / "index.db").unlink(missing_ok=True)
    _break_playbook(demo_repo)
    before = head(demo_repo)
    result = cli("ask", "Post our discount code on Twitter", "--confirm", "PB-02")
    assert result.exit_code == 1, result.output
    assert "cannot parse the playbook" in result.stderr and "fix the playbook" in result.stderr
    assert "no rule PB-02" not in result.stderr
    assert head(demo_repo) == before
    assert git(demo_repo.root, "status", "--porcelain").stdout.split() == ["M", demo_repo.playbook_rel]


def test_an_answer_is_recorded_when_the_playbook_has_uncommitted_edits(cli, demo_repo: MemoryRepo) -> None:
    """With an edit to the playbook not committed yet, the answer carried the receipt of
    a recall of that uncommitted playbook, which the gate cannot prove ("playbook blob
    ... does not exist in this repository"; hint: record the episode without the
    receipt, which ask cannot do): refused, exit 1, the answer lost. It is now recorded
    without the receipt, saying why."""
    path = demo_repo.playbook_path
    path.write_text(path.read_text(encoding="utf-8").replace("Open every LinkedIn", "Open each LinkedIn"))
    before = head(demo_repo)
    result = cli("ask", BERLIN, "--answer", ANSWER)
    assert result.exit_code == 0, result.output
    assert "without recall's receipt" in result.stderr and "not committed" in result.stderr
    assert git(demo_repo.root, "rev-list", "--count", f"{before}..HEAD").stdout.strip() == "1"
    with open_index(demo_repo) as index:
        episode = index.get_episode(result.stdout.strip())
    assert episode is not None and episode.data["correction"] == ANSWER
    assert "recalled" not in episode.data
    # With the playbook committed, the receipt is kept.
    git(demo_repo.root, "commit", "-qam", "edit the playbook", "--no-gpg-sign")
    kept = cli("ask", "Book a hotel in Lisbon for the offsite", "--answer", ANSWER)
    assert kept.exit_code == 0, kept.output
    with open_index(demo_repo) as index:
        episode = index.get_episode(kept.stdout.strip())
    assert episode is not None and "recalled" in episode.data


def test_answer_records_the_answer_when_the_playbook_does_not_parse(cli, demo_repo: MemoryRepo) -> None:
    """`answer TASK --answer X` exited 1 ("cannot parse the playbook") without recording
    the human's answer, which `ask --answer` records; it is now recorded the same way
    (no refs, no receipt), then recall's failure ends the command (exit 1)."""
    broken = _break_playbook(demo_repo)
    before = head(demo_repo)
    result = cli("answer", BERLIN, "--answer", ANSWER)
    assert result.exit_code == 1, result.output
    assert git(demo_repo.root, "rev-list", "--count", f"{before}..HEAD").stdout.strip() == "1"
    ep_id = result.stdout.split("episode ")[1].split(",")[0]
    assert "referring to no rule: recall could not run" in result.stdout
    assert "recall failed" in result.stderr and "cannot parse the playbook" in result.stderr
    assert "PB01 Lead" in result.stderr and "fix the playbook" in result.stderr
    with open_index(demo_repo) as index:
        episode = index.get_episode(ep_id)
    assert episode is not None and episode.task == BERLIN
    assert episode.data["correction"] == ANSWER and episode.data["source"] == "human-answer"
    assert "refs" not in episode.data and "recalled" not in episode.data
    assert demo_repo.playbook_path.read_bytes() == broken
    staged = cli("answer", "--json", BERLIN, "--answer", ANSWER + " (2)")
    assert staged.exit_code == 1, staged.output
    data = json.loads(staged.stdout)
    assert data["verdict"] is None and data["rules"] == [] and data["human_answer"] == ANSWER + " (2)"
    assert data["recorded_episode"] and data["task"] == BERLIN
    # Without an answer nothing is recorded, and no model is asked.
    before = head(demo_repo)
    plain = cli("answer", BERLIN)
    assert plain.exit_code == 1 and "cannot parse the playbook" in plain.stderr
    assert head(demo_repo) == before


def test_answer_help_says_what_the_answer_and_a_dash_task_do(cli) -> None:
    text = " ".join(cli("answer", "--help").stdout.split())
    assert "'-' reads the task from stdin" in text
    assert "not thrown away when recall fails" in text
