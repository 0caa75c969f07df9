"""``ask --answer`` / ``--confirm`` with ``--no-commit``: the episode is staged, nothing
committed, and what the command says about it is true."""

from __future__ import annotations

import json

from conftest import git, head

from scarwarden.repo import MemoryRepo

BERLIN = "Book travel for the Berlin conference"
DINNER = "Book a table for the team dinner"


def _staged(repo: MemoryRepo) -> list[str]:
    return git(repo.root, "diff", "--cached", "--name-only").stdout.split()


def test_a_staged_answer_is_not_said_to_be_learnt_from_before_it_is_committed(
    cli, demo_repo: MemoryRepo
) -> None:
    """It said "Staged the answer as ep-...; 'scarwarden distill' can now learn from it",
    but distill reads committed episodes only: run then, it left the answer out without
    a word. It now says to commit it first."""
    before = head(demo_repo)
    result = cli("ask", BERLIN, "--answer", "Use the travel portal", "--no-commit")
    assert result.exit_code == 0, result.output
    ep_id = result.stdout.strip()
    assert head(demo_repo) == before
    assert [path.rsplit("/", 1)[1] for path in _staged(demo_repo)] == [f"{ep_id}.yaml"]
    said = result.stderr
    assert f"Staged the answer as {ep_id} (source: human-answer)" in said
    assert "can now learn from it" not in said
    assert "commit it (git commit)" in said
    # What it says is so: a distillation now does not read it; once committed, it does.
    dry = json.loads(cli("distill", "--dry-run", "--json").stdout)
    assert ep_id not in json.dumps(dry)
    git(demo_repo.root, "commit", "-q", "--no-gpg-sign", "-m", "the answer")
    assert ep_id in json.dumps(json.loads(cli("distill", "--dry-run", "--json").stdout))


def test_a_staged_confirmation_says_to_commit_it_first(cli, demo_repo: MemoryRepo) -> None:
    before = head(demo_repo)
    result = cli("ask", DINNER, "--confirm", "PB-06", "--no-commit")
    assert result.exit_code == 0, result.output
    ep_id = result.stdout.strip()
    assert head(demo_repo) == before and len(_staged(demo_repo)) == 1
    assert f"Staged the confirmation as {ep_id}" in result.stderr
    assert "commit it (git commit)" in result.stderr
