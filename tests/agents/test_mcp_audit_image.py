"""The MCP ``audit_image`` tool (issue 19), through the real MCP SDK client over stdio."""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any

import pytest
from test_mcp import data, error_text, run_client

from scarwarden.repo import MemoryRepo

PIL = pytest.importorskip("PIL.Image")


def png() -> bytes:
    out = io.BytesIO()
    PIL.new("RGB", (30, 20), "red").save(out, "PNG")
    return out.getvalue()


def test_audit_image_by_path_base64_and_refusals(demo_repo: MemoryRepo, tmp_path: Path, monkeypatch) -> None:
    for var in ("SCARWARDEN_API_KEY", "DASHSCOPE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    root = demo_repo.root
    (root / "card.png").write_bytes(png())
    outside = tmp_path / "outside.png"
    outside.write_bytes(png())
    task = "Draft a LinkedIn post announcing our beta"

    async def body(client: Any) -> tuple[Any, ...]:
        return (
            await client.call_tool("audit_image", {"task": task, "path": "card.png"}),
            await client.call_tool(
                "audit_image", {"task": task, "data_base64": base64.b64encode(png()).decode()}
            ),
            await client.call_tool("audit_image", {"task": task, "path": str(outside)}),
            await client.call_tool(
                "audit_image", {"task": task, "data_base64": base64.b64encode(b"<svg/>").decode()}
            ),
            await client.call_tool("audit_image", {"task": task}),
        )

    by_path, by_data, escaped, svg, neither = run_client(root, body)
    first = data(by_path)
    assert first["image"] == "card.png" and first["judged"] is False and first["verdicts"] == []
    assert first["note"].startswith("No image was judged") and first["rules"]
    assert all(r["citation"].startswith(f"[{r['id']}, learnt in ep-") for r in first["rules"])
    assert data(by_data)["sha256"] == first["sha256"]
    assert "outside the repository" in error_text(escaped)
    assert "not an image" in error_text(svg) or "SVG" in error_text(svg)
    assert "exactly one of path" in error_text(neither)
