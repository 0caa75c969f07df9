"""A refused answer, feedback or episode names what was refused, never the ID of an
episode that was not written (a user searched for it and found nothing)."""

from __future__ import annotations

import re

import pytest
from conftest import Cli
from fake_secrets import fake_secrets
from helpers import State

from scarwarden.api import Memory
from scarwarden.errors import ValidationError
from scarwarden.repo import MemoryRepo

BERLIN = "Book travel for the Berlin conference"
EPISODE_ID = re.compile(r"ep-[0-9a-z]{10}")


def test_a_refused_human_answer_names_no_episode_id(cli: Cli, demo_repo: MemoryRepo) -> None:
    """Before: "human answer (ep-p7hxqd34y2): field 'correction': holds a secret ...;
    nothing was written": ep-p7hxqd34y2 never existed."""
    secret = fake_secrets()["github-token"]
    before = State.of(demo_repo)
    for args in (
        ("ask", BERLIN, "--answer", secret),
        ("answer", BERLIN, "--answer", secret),
        ("feedback", "ep-hkgnqdz88f", "--outcome", secret),
        ("episode", "add", "--task", BERLIN, "--correction", secret),
    ):
        result = cli(*args)
        assert result.exit_code == 1, (args, result.output)
        assert "refused, it holds a secret; nothing was written" in result.stderr, args
        assert "field '" in result.stderr and "holds a secret: GitHub token" in result.stderr, args
        assert not EPISODE_ID.search(result.stderr.replace("ep-hkgnqdz88f", "")), (args, result.stderr)
    assert State.of(demo_repo) == before


def test_a_refused_batch_names_the_item_not_an_id(demo_repo: MemoryRepo, tmp_path) -> None:
    """In a batch the refused episode is named by its place in the input."""
    secret = fake_secrets()["github-token"]
    batch = [{"task": "One", "outcome": "fine"}, {"task": "Two", "outcome": secret}]
    with pytest.raises(ValidationError) as refused:
        Memory(demo_repo).record_batch(batch, source="batch.yaml")
    text = str(refused.value)
    assert "batch.yaml (item 2): field 'outcome': holds a secret" in text
    assert not EPISODE_ID.search(text), text
    batch = [{"task": "One", "outcome": "fine"}, {"task": "Two", "outcome": "ok", "rules_applied": ["PB-99"]}]
    with pytest.raises(ValidationError) as refused:
        Memory(demo_repo).record_batch(batch, source="batch.yaml")
    text = str(refused.value)
    assert "batch.yaml (item 2): field 'rules_applied': PB-99 is not a rule" in text
    assert not EPISODE_ID.search(text), text


def test_a_privacy_refusal_names_no_episode_id_but_a_warning_does(cli: Cli, demo_repo: MemoryRepo) -> None:
    """A warning's episode is written: its ID finds it; a refusal's is not."""
    (demo_repo.root / "scarwarden.yaml").write_text("privacy:\n  email: refuse\n  card: warn\n")
    refused = cli("ask", BERLIN, "--answer", "Ask jane@acme.io first")
    assert refused.exit_code == 1, refused.output
    assert "human answer: field 'correction': holds personal data: an email address" in refused.stderr
    assert not EPISODE_ID.search(refused.stderr), refused.stderr
    warned = cli("ask", BERLIN, "--answer", "Pay with 4111 1111 1111 1111")
    assert warned.exit_code == 0, warned.output
    ep_id = warned.stdout.strip()
    assert f"warning: human answer ({ep_id}): field 'correction': holds personal data" in warned.stderr


def test_an_import_refused_for_personal_data_names_the_conversation(
    cli: Cli, demo_repo: MemoryRepo, tmp_path
) -> None:
    """The import named a refused conversation by the ID derived for it ("runs.jsonl
    (ep-pxdd8cz4d8v9)"), which the file does not hold; it now names the conversation."""
    import json

    (demo_repo.root / "scarwarden.yaml").write_text("privacy:\n  email: refuse\n")
    runs = tmp_path / "runs.jsonl"
    lines = [
        {"messages": [{"role": "user", "content": task}, {"role": "assistant", "content": "Done"}]}
        for task in ("Cancel order 7", "Cancel order 8, mail jane@acme.io")
    ]
    runs.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = cli("episode", "import", "--format", "openai-chat", str(runs))
    assert result.exit_code == 1, result.output
    assert "runs.jsonl: conversation 2: field 'task': holds personal data: an email address" in result.stderr
    assert "(ep-" not in result.stderr
