"""The gate's refusal at a write door names what was refused (the source, or its place
in a batch), never the file or ID of an episode the refusal then never wrote: a user
searched for ``memory/episodes/2026/12/ep-....yaml`` and ``ep-...`` and found nothing."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import Cli
from helpers import State

from scarwarden.errors import ExitCode, ValidationError
from scarwarden.repo import MemoryRepo

RECALLED = "Post our discount code on Twitter"
OTHER = "Draft the webinar invitation for the newsletter"
EPISODE_ID = re.compile(r"ep-[0-9a-z]{10}")


def other_task_receipt(cli: Cli) -> dict[str, Any]:
    out = cli("recall", "--json", RECALLED)
    assert out.exit_code == 0, out.output
    receipt: dict[str, Any] = json.loads(out.stdout)["receipt"]
    return receipt


def assert_names_no_phantom(text: str) -> None:
    assert "memory/episodes/" not in text, text
    assert not EPISODE_ID.search(text), text


def test_episode_add_refused_by_the_gate_names_the_episode(cli: Cli, demo_repo: MemoryRepo) -> None:
    """Before: "memory/episodes/2026/12/ep-6jbras2ph7.yaml: field 'recalled':
    ep-6jbras2ph7's receipt 49dd1c22a3a77253 is for another task"."""
    receipt = other_task_receipt(cli)
    before = State.of(demo_repo)
    out = cli("episode", "add", "--task", OTHER, "--action", "Wrote it", "--receipt", json.dumps(receipt))
    assert out.exit_code == ExitCode.CHECK_FAILED, out.output
    assert f"episode: field 'recalled': its receipt {receipt['receipt']} is for another task" in out.stderr
    assert_names_no_phantom(out.stderr)
    assert State.of(demo_repo) == before


def test_a_batch_refused_by_the_gate_names_the_item(cli: Cli, demo_repo: MemoryRepo, tmp_path: Path) -> None:
    receipt = other_task_receipt(cli)
    batch = [
        {"task": "A harmless first episode", "action": "Did it"},
        {"task": OTHER, "action": "Wrote it", "recalled": receipt},
    ]
    path = tmp_path / "batch.json"
    path.write_text(json.dumps(batch))
    before = State.of(demo_repo)
    out = cli("episode", "add", "--file", str(path))
    assert out.exit_code == ExitCode.CHECK_FAILED, out.output
    assert "batch.json (item 2): field 'recalled': its receipt" in out.stderr
    assert_names_no_phantom(out.stderr)
    assert State.of(demo_repo) == before


def test_the_answer_door_refused_by_the_gate_names_the_human_answer(cli: Cli, demo_repo: MemoryRepo) -> None:
    """``record_human_answer``: the door of MCP's ``ask_human_answer`` and the API's."""
    from scarwarden.answers.asking import record_human_answer

    receipt = other_task_receipt(cli)
    before = State.of(demo_repo)
    with pytest.raises(ValidationError) as caught:
        record_human_answer(demo_repo, OTHER, "Use UTC", receipt=receipt)
    (problem,) = caught.value.problems
    assert (problem.file, problem.line, problem.field) == ("human answer", None, "recalled")
    assert problem.message.startswith(f"its receipt {receipt['receipt']} is for another task")
    assert_names_no_phantom(str(caught.value))
    assert State.of(demo_repo) == before
