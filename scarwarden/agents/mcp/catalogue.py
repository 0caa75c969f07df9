"""What ``scarwarden mcp`` offers, read from the server it builds (issue 28): its
``--help`` lists the tools the registry registers, so a new tool is listed by adding it
there, never by editing a second list."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from scarwarden.repo import MemoryRepo


class _NoRepository:
    """Stands in for a repository: building the server only names it (no tool runs)."""

    root = Path("REPO")
    playbook_rel = "memory/playbook.md"


def tool_summaries() -> list[tuple[str, str]]:
    """Each tool's name and the first sentence of its description, in the order clients
    list them. Needs the SDK (``ImportError`` without the ``mcp`` extra)."""
    from scarwarden.agents.mcp.server import build_server

    server = build_server(cast("MemoryRepo", _NoRepository()))
    return [(tool.name, summary(tool.description or "")) for tool in server._tool_manager.list_tools()]


def summary(text: str) -> str:
    """The description's first sentence, up to its first colon: what the tool is for."""
    text = " ".join(text.split())
    end = text.find(". ")
    text = text if end < 0 else text[:end]
    text = text.split(": ", 1)[0]
    if text.count("(") > text.count(")"):  # the colon was inside brackets
        text = text.rsplit(" (", 1)[0]
    if len(text) > 80 and " (" in text:
        text = text.split(" (", 1)[0]
    return text.rstrip(".") + "."
