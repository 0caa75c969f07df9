"""docs/mcp.md's table of tools is the agent author's reference: every tool the server
lists has its row, with the parameters it requires."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from test_mcp import run_client

from scarwarden.repo import MemoryRepo

pytest.importorskip("mcp")

DOC = Path(__file__).resolve().parents[2] / "docs" / "mcp.md"


def test_every_tool_the_server_lists_has_a_row_in_docs_mcp(demo_repo: MemoryRepo) -> None:
    """confirm_rule (issue 26) was served, and named in privacy.md and recall.md, but
    had no row in mcp.md's table: what it takes and returns was written nowhere."""

    async def body(client: Any) -> Any:
        return (await client.list_tools()).tools

    rows = {
        match.group(1): match.group(0)
        for match in re.finditer(r"^\| `([a-z_]+)` \|.*$", DOC.read_text(encoding="utf-8"), re.MULTILINE)
    }
    for tool in run_client(demo_repo.root, body):
        assert tool.name in rows, f"docs/mcp.md has no row for {tool.name}"
        parameters = rows[tool.name].split(" | ")[1]
        for name in tool.input_schema.get("required", []):
            assert f"`{name}`" in parameters, (tool.name, name)
