"""Issue 26 through MCP (a real client over stdio): ``recall`` gives each rule its
evidence and, on ASK_HUMAN, the candidates with theirs; the receipt names both;
``confirm_rule`` refuses a retired or malformed rule ID and writes nothing."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import git
from helpers import retire_rule
from test_mcp import DISCOUNT, data, error_text, run_client

from scarwarden.repo import MemoryRepo

pytest.importorskip("mcp")

KAFKA = "Rename the production Kafka topic"


def test_mcp_recall_gives_evidence_and_candidates_the_receipt_names(demo_repo: MemoryRepo) -> None:
    async def body(client: Any) -> tuple[Any, ...]:
        acted = data(await client.call_tool("recall", {"task": DISCOUNT}))
        asked = data(await client.call_tool("recall", {"task": KAFKA}))
        return acted, asked

    acted, asked = run_client(demo_repo.root, body)
    best = acted["rules"][0]
    assert best["id"] == "PB-02"
    assert best["evidence"][0]["episode_id"] == "ep-wmjgdnc59j"
    assert best["evidence"][0]["text"].startswith("Discount codes go only to the private email list")
    assert acted["receipt"]["evidence"] == {"PB-02": "ep-wmjgdnc59j"}
    assert "candidates" not in acted["receipt"] and acted["candidates"] == []
    assert asked["verdict"] == "ASK_HUMAN" and asked["rules"] == []
    shown = [(c["kind"], c["id"]) for c in asked["candidates"]]
    assert shown == [("rule", "PB-01"), ("rule", "PB-04")]
    assert all(
        c["evidence"] and c["evidence"][0]["episode_id"].startswith("ep-") for c in asked["candidates"]
    )
    assert asked["receipt"]["candidates"] == ["PB-01", "PB-04"]
    assert asked["receipt"]["candidate_evidence"] == {
        c["id"]: c["evidence"][0]["episode_id"] for c in asked["candidates"]
    }


def test_mcp_confirm_rule_refuses_retired_and_malformed_ids(demo_repo: MemoryRepo) -> None:
    retire_rule(demo_repo, "PB-04")
    head = git(demo_repo.root, "rev-parse", "HEAD").stdout
    status = git(demo_repo.root, "status", "--porcelain").stdout

    async def body(client: Any) -> list[Any]:
        return [
            await client.call_tool("confirm_rule", {"task": KAFKA, "rule_id": bad})
            for bad in ("pb-04", "PB-zz", "rule six")
        ]

    retired_call, letters, words = run_client(demo_repo.root, body)
    assert "PB-04 is retired" in error_text(retired_call)
    assert "is not a rule ID" in error_text(letters) and "is not a rule ID" in error_text(words)
    assert git(demo_repo.root, "rev-parse", "HEAD").stdout == head
    assert git(demo_repo.root, "status", "--porcelain").stdout == status
