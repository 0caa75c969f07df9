"""MCP's human-answer tools under ``privacy:`` (docs/privacy.md): personal data the
settings ``warn`` about is recorded and listed in the tool result's ``warnings``, a field
the agent reads (it recorded them without a word); personal data they ``refuse`` fails
the call, nothing written."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import git
from helpers import CARD, EMAIL, set_privacy
from test_mcp import data, error_text, ledger_state, run_client

from scarwarden.repo import MemoryRepo

pytest.importorskip("mcp")

BERLIN = "Book travel for the Berlin conference"
DINNER = "Book a table for the team dinner"


def test_ask_human_answer_and_confirm_rule_return_the_privacy_warnings(demo_repo: MemoryRepo) -> None:
    set_privacy(demo_repo, email="warn", card="warn")

    async def body(client: Any) -> tuple[Any, ...]:
        answer = {"task": BERLIN, "answer": f"Send the tickets to {EMAIL}"}
        made = data(await client.call_tool("ask_human_answer", answer))
        task = f"{DINNER}, paid with card {CARD}"
        confirmed = data(await client.call_tool("confirm_rule", {"task": task, "rule_id": "PB-06"}))
        clean = data(await client.call_tool("ask_human_answer", {"task": BERLIN, "answer": "Economy"}))
        return made, confirmed, clean

    made, confirmed, clean = run_client(demo_repo.root, body)
    (warning,) = made["warnings"]
    assert warning["field"] == "correction"
    assert warning["message"] == "holds personal data: an email address (privacy.email: warn)"
    assert made["commit"] is not None and EMAIL not in str(made["warnings"])
    assert confirmed["confirmed"] == "PB-06"
    assert "task" in [w["field"] for w in confirmed["warnings"]]
    assert "a payment card number (privacy.card: warn)" in confirmed["warnings"][0]["message"]
    assert clean["warnings"] == []


def test_ask_human_answer_and_confirm_rule_refused_by_privacy_write_nothing(demo_repo: MemoryRepo) -> None:
    set_privacy(demo_repo, email="refuse", card="refuse")
    before = ledger_state(demo_repo.root)

    async def body(client: Any) -> tuple[Any, ...]:
        answer = {"task": BERLIN, "answer": f"Send the tickets to {EMAIL}"}
        task = f"{DINNER}, paid with card {CARD}"
        return (
            await client.call_tool("ask_human_answer", answer),
            await client.call_tool("confirm_rule", {"task": task, "rule_id": "PB-06"}),
        )

    answered, confirmed = run_client(demo_repo.root, body)
    assert "refused, it holds personal data; nothing was written" in error_text(answered)
    assert "field 'correction': holds personal data: an email address (privacy.email: refuse)" in error_text(
        answered
    )
    assert "a payment card number (privacy.card: refuse)" in error_text(confirmed)
    assert EMAIL not in error_text(answered) and CARD not in error_text(confirmed)
    # In words the tools have: they take no --redact-pii.
    assert "--redact-pii" not in error_text(answered) + error_text(confirmed)
    assert ledger_state(demo_repo.root) == before
    assert git(demo_repo.root, "status", "--porcelain").stdout == ""


def test_record_episode_returns_the_privacy_warnings(demo_repo: MemoryRepo) -> None:
    """record_episode recorded personal data under ``warn`` as silently (Memory.record
    took no ``warn``); its result now lists it as ask_human_answer's does."""
    set_privacy(demo_repo, email="warn")

    async def body(client: Any) -> Any:
        fields = {"task": BERLIN, "outcome": f"Mailed the tickets to {EMAIL}"}
        return data(await client.call_tool("record_episode", fields))

    made = run_client(demo_repo.root, body)
    (warning,) = made["warnings"]
    assert warning["field"] == "outcome" and warning["file"] == f"record_episode ({made['id']})"
    assert warning["message"] == "holds personal data: an email address (privacy.email: warn)"
    assert made["commit"] == git(demo_repo.root, "rev-parse", "HEAD").stdout.strip()
