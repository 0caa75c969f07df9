"""MCP's write door runs the gate's check, and its errors stay readable (issue 27).

Driven by the SDK's own client over stdio, as tests/agents/test_mcp.py does; the
repository has no hooks (as after ``init`` without a terminal).
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import git
from test_mcp import DISCOUNT, data, error_text, run_client

from scarwarden.repo import MemoryRepo

pytest.importorskip("mcp")
from mcp import Client  # noqa: E402


def state(repo: MemoryRepo) -> tuple[str, str]:
    head = git(repo.root, "rev-parse", "HEAD").stdout.strip()
    return head, git(repo.root, "status", "--porcelain", "--untracked-files=all").stdout


def test_record_episode_refuses_what_the_gate_refuses(demo_repo: MemoryRepo) -> None:
    before = state(demo_repo)

    async def body(client: Client) -> list[Any]:
        receipt = data(await client.call_tool("recall", {"task": DISCOUNT}))["receipt"]
        return [
            await client.call_tool(
                "record_episode",
                {"task": "Draft the webinar invitation", "action": "Wrote it", "receipt": receipt},
            ),
            await client.call_tool(
                "record_episode", {"task": DISCOUNT, "action": "Kept it out", "rules_applied": ["PB-99"]}
            ),
        ]

    other_task, unknown_rule = run_client(demo_repo.root, body)
    text = error_text(other_task)
    assert "does not pass the provenance gate; nothing was written or committed" in text
    assert "is for another task" in text and "recall the episode's task and pass that receipt" in text
    assert "record_episode: field 'recalled': its receipt" in text and "memory/episodes/" not in text
    text = error_text(unknown_rule)
    assert "rules_applied names a rule this memory never had" in text
    assert "PB-99 is not a rule in memory/playbook.md" in text
    assert state(demo_repo) == before


def test_errors_are_bounded_said_once_and_clear_on_a_nul(demo_repo: MemoryRepo) -> None:
    async def body(client: Client) -> list[Any]:
        return [
            await client.call_tool("get_rule", {"rule_id": "X" * 10_000}),
            await client.call_tool("record_episode", {"task": "t", "tags": "Bad Tag " * 1_250}),
            await client.call_tool("audit_image", {"task": "banner", "path": "memory/a\x00b.png"}),
        ]

    long_arg, twice, nul = run_client(demo_repo.root, body)
    text = error_text(long_arg)
    assert len(text) < 1_000 and "X" * 200 in text and "characters, cut" in text
    text = error_text(twice)
    assert len(text) < 2_000
    assert text.count("record_episode:") == 1, text
    assert "an episode needs at least one of action, outcome, correction" in text
    text = error_text(nul)
    assert "Error executing tool" not in text
    assert "audit_image: argument 'path' holds a NUL character" in text
