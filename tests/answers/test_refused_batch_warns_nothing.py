"""A batch refused after screening (a rule this memory never had, the provenance gate)
says no privacy warning: each warning named an episode ID ("warning: batch.jsonl
(ep-...): ... holds personal data") that the refusal then never wrote. The warnings are
said once the batch is written."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import Cli
from helpers import CARD, State, set_privacy

from scarwarden.api import Memory
from scarwarden.errors import ValidationError
from scarwarden.repo import MemoryRepo

RECALLED = "Post our discount code on Twitter"
OTHER = "Draft the webinar invitation for the newsletter"


def test_a_batch_refused_for_an_unknown_rule_warns_of_nothing(
    cli: Cli, demo_repo: MemoryRepo, tmp_path: Path
) -> None:
    set_privacy(demo_repo, card="warn")
    before = State.of(demo_repo)
    path = tmp_path / "batch.jsonl"
    path.write_text(
        json.dumps({"task": "Refund", "outcome": f"Paid back to {CARD}"})
        + "\n"
        + json.dumps({"task": "Ship", "outcome": "Sent", "rules_applied": ["PB-77"]})
        + "\n"
    )
    out = cli("episode", "add", "--file", str(path))
    assert out.exit_code == 1, out.output
    assert "rules_applied names a rule this memory never had; nothing was written" in out.stderr
    assert "warning:" not in out.stderr and "(ep-" not in out.stderr, out.stderr
    assert State.of(demo_repo) == before
    # Written, the same batch's warning is said, naming the episode it was written as.
    path.write_text(json.dumps({"task": "Refund", "outcome": f"Paid back to {CARD}"}) + "\n")
    out = cli("episode", "add", "--file", str(path))
    assert out.exit_code == 0, out.output
    ep_id = out.stdout.split()[0]
    assert f"batch.jsonl ({ep_id}): field 'outcome': holds personal data" in out.stderr


def test_an_episode_the_gate_refuses_warns_of_nothing(cli: Cli, demo_repo: MemoryRepo) -> None:
    set_privacy(demo_repo, card="warn")
    receipt = json.loads(cli("recall", "--json", RECALLED).stdout)["receipt"]
    before = State.of(demo_repo)
    out = cli(
        "episode", "add", "--task", OTHER, "--outcome", f"Paid with {CARD}", "--receipt", json.dumps(receipt)
    )
    assert out.exit_code == 1, out.output
    assert "does not pass the provenance gate" in out.stderr
    assert "warning:" not in out.stderr, out.stderr
    assert State.of(demo_repo) == before


def test_the_api_passes_no_warning_of_a_refused_batch(demo_repo: MemoryRepo) -> None:
    set_privacy(demo_repo, card="warn")
    warned: list[object] = []
    batch = [
        {"task": "Refund", "outcome": f"Paid back to {CARD}"},
        {"task": "Ship", "outcome": "Sent", "rules_applied": ["PB-77"]},
    ]
    try:
        Memory(demo_repo).record_batch(batch, source="batch.yaml", warn=warned.append)
    except ValidationError as refused:
        assert "PB-77 is not a rule" in str(refused)
    else:
        raise AssertionError("the batch was recorded")
    assert warned == []
